#pragma once
// First-in first-out allocation of contiguous entries in a fixed ring: the per-queue buffer that
// each submission's query results are copied into. Regions are taken at submission and given back
// once the readback thread has read them, almost always in the same order; one given back early
// waits for those before it. Full means "no results for this submission", never growth.

#include <cstdint>
#include <deque>
#include <mutex>
#include <optional>

namespace vkscope {

class RingAllocator {
public:
    struct Region {
        uint64_t id = 0;
        uint32_t first = 0;
        uint32_t count = 0;
    };

    explicit RingAllocator(uint32_t capacity) : capacity_(capacity) {}

    std::optional<Region> allocate(uint32_t count);
    void release(uint64_t id);
    uint32_t in_use() const;

private:
    struct Live {
        Region region;
        bool released = false;
    };

    const uint32_t capacity_;
    mutable std::mutex mutex_;
    std::deque<Live> live_; // allocation order
    uint64_t next_id_ = 1;
};

} // namespace vkscope
