#include "core/ring.hpp"

namespace vkscope {

std::optional<RingAllocator::Region> RingAllocator::allocate(uint32_t count) {
    std::lock_guard lock(mutex_);
    if (count == 0 || count > capacity_) {
        return std::nullopt;
    }
    uint32_t first = 0;
    if (!live_.empty()) {
        const uint32_t oldest = live_.front().region.first;
        const uint32_t head = live_.back().region.first + live_.back().region.count;
        if (head > oldest) {
            // Free: [head, capacity) then, wrapping, [0, oldest).
            if (capacity_ - head >= count) {
                first = head;
            } else if (oldest >= count) {
                first = 0;
            } else {
                return std::nullopt;
            }
        } else if (oldest - head >= count) {
            first = head; // already wrapped: free is [head, oldest)
        } else {
            return std::nullopt;
        }
    }
    Region r{next_id_++, first, count};
    live_.push_back(Live{r, false});
    return r;
}

void RingAllocator::release(uint64_t id) {
    std::lock_guard lock(mutex_);
    for (Live& l : live_) {
        if (l.region.id == id) {
            l.released = true;
            break;
        }
    }
    while (!live_.empty() && live_.front().released) {
        live_.pop_front();
    }
}

uint32_t RingAllocator::in_use() const {
    std::lock_guard lock(mutex_);
    uint32_t n = 0;
    for (const Live& l : live_) {
        n += l.region.count;
    }
    return n;
}

} // namespace vkscope
