#pragma once
// A timer query written into a command buffer: which layer-owned query pool block and which slot.
// It travels through the timeline's command stream as this instrument's mark.

#include "timeline/instrument.hpp"

#include <cstdint>

namespace vkscope {
struct QueryBlock;
}

namespace vkscope::timing {

struct Timestamp {
    QueryBlock* block = nullptr;
    uint32_t slot = 0;

    explicit operator bool() const { return block != nullptr; }
    bool operator==(const Timestamp&) const = default;
};

inline timeline::Mark mark_of(Timestamp ts) {
    return timeline::Mark::at(ts.block, ts.slot);
}

inline Timestamp timestamp_of(const timeline::Mark& mark) {
    return Timestamp{static_cast<QueryBlock*>(mark.object()), mark.index()};
}

} // namespace vkscope::timing
