#pragma once
// A timer query written into a command buffer: which layer-owned query pool block and which slot.
// The recorder stores them in its command stream; the interpreter pairs a workload's two.

#include <cstdint>

namespace vkscope::timing {

struct QueryBlock;

struct Timestamp {
    QueryBlock* block = nullptr;
    uint32_t slot = 0;

    explicit operator bool() const { return block != nullptr; }
    bool operator==(const Timestamp&) const = default;
};

} // namespace vkscope::timing
