#include "instruments/samplers/device.hpp"

#include "core/log.hpp"

namespace vkscope::samplers {

HandoverDevice::HandoverDevice(VkDevice device, const DeviceDispatch& next_layer,
                               std::span<const VkQueueFamilyProperties> families, Granularity how,
                               uint32_t sleep)
    : handle(device), next(next_layer), granularity(how), sleep_us(sleep) {
    for (const VkQueueFamilyProperties& f : families) {
        event_families_.push_back((f.queueFlags & (VK_QUEUE_GRAPHICS_BIT | VK_QUEUE_COMPUTE_BIT)) !=
                                  0);
    }
}

HandoverDevice::~HandoverDevice() {
    // What the device needed (what the application's command buffers held at most at once), and
    // how often a recording came to the free list for a pair.
    log(LogLevel::info,
        "counters: %zu event pairs served the handovers on this device, %zu taken from its list",
        made_, taken_);
    for (const EventPair& p : free_) {
        next.DestroyEvent(handle, p.a, nullptr);
        next.DestroyEvent(handle, p.b, nullptr);
    }
}

bool HandoverDevice::take(EventPair& out) {
    {
        std::lock_guard lock(mutex_);
        ++taken_;
        if (!free_.empty()) {
            out = free_.back();
            free_.pop_back();
            return true;
        }
        if (made_ >= kMaxPairs) {
            return false;
        }
        ++made_;
    }
    const VkEventCreateInfo info{VK_STRUCTURE_TYPE_EVENT_CREATE_INFO, nullptr, 0};
    EventPair p;
    if (next.CreateEvent(handle, &info, nullptr, &p.a) != VK_SUCCESS) {
        return false;
    }
    if (next.CreateEvent(handle, &info, nullptr, &p.b) != VK_SUCCESS) {
        next.DestroyEvent(handle, p.a, nullptr);
        return false;
    }
    out = p;
    return true;
}

void HandoverDevice::give_back(std::vector<EventPair>& pairs) {
    if (pairs.empty()) {
        return; // most command buffers hold none: no lock for them
    }
    // Whoever takes them next resets them before its first submission.
    std::lock_guard lock(mutex_);
    free_.insert(free_.end(), pairs.begin(), pairs.end());
    pairs.clear();
}

} // namespace vkscope::samplers
