#pragma once
// The handover instrument's state for one VkDevice: the samplers opened for it, the events the
// handovers use (a free list of the device: a command buffer takes a fresh pair per handover
// when its recording has more handovers than it holds pairs, and gives back what it no longer
// uses; recording.hpp), how counters are sampled there, and the lock that lets one thread at a
// time hold the GPU at a handover.

#include "dispatch_tables.gen.hpp"
#include "instruments/samplers/samplers.hpp"
#include "protocol.gen.hpp"

#include <atomic>
#include <cstdint>
#include <mutex>
#include <span>
#include <vector>
#include <vulkan/vulkan.h>

namespace vkscope::samplers {

using Reason = protocol::CountersReason;

inline const char* why(Reason r) {
    return protocol::name(r);
}

// How samples are taken on a device (the `counter_sampling` setting and the driver).
enum class Granularity : uint8_t {
    handover,           // between workloads, the GPU held at an event pair
    per_command_buffer, // each application command buffer submitted alone and waited for
};

struct EventPair {
    VkEvent a = VK_NULL_HANDLE; // the GPU sets it when the work before is done
    VkEvent b = VK_NULL_HANDLE; // the host sets it when the sample is taken
};

class HandoverDevice {
public:
    // Events per device: each handover of a recording holds two while its command buffer lives.
    static constexpr size_t kMaxPairs = 1 << 16;

    HandoverDevice(VkDevice device, const DeviceDispatch& next,
                   std::span<const VkQueueFamilyProperties> families, Granularity granularity,
                   uint32_t sleep_us);
    ~HandoverDevice();
    HandoverDevice(const HandoverDevice&) = delete;
    HandoverDevice& operator=(const HandoverDevice&) = delete;

    // A pair of unsignalled events, or false when none can be made.
    bool take(EventPair& out);
    void give_back(std::vector<EventPair>& pairs);
    // vkCmdSetEvent and vkCmdWaitEvents need a graphics or compute queue family.
    bool family_has_events(uint32_t family) const {
        return family < event_families_.size() && event_families_[family];
    }

    const VkDevice handle;
    const DeviceDispatch& next;
    const Granularity granularity;
    const uint32_t sleep_us; // the pause after the GPU reached a handover (old Arm drivers)
    SamplerSet samplers;
    // One sampling submission at a time on the device.
    std::mutex sampling;
    // The frame in which a handover was given up (the GPU never reached it): the rest of that
    // frame is not sampled. UINT64_MAX: none.
    std::atomic<uint64_t> gave_up_frame{UINT64_MAX};

private:
    std::vector<bool> event_families_;
    std::mutex mutex_;
    std::vector<EventPair> free_;
    size_t made_ = 0;
    size_t taken_ = 0; // calls of take(): a command buffer needed more than it held
};

} // namespace vkscope::samplers
