#pragma once
// One 16-byte slot of layer-owned host-visible memory that the GPU copies a workload's indirect
// parameters into (timeline/parameter_pool.hpp), and what tells who may write or read it now.

#include <atomic>
#include <cstdint>
#include <vulkan/vulkan.h>

namespace vkscope::timeline {

struct ParameterSlot {
    VkBuffer buffer = VK_NULL_HANDLE;
    VkDeviceSize offset = 0;
    const volatile uint32_t* mapped = nullptr;
    // Set from submission until the readback worker has read it.
    std::atomic<bool> in_flight{false};
    // Bumped when a submission stops waiting for a readback that is too slow: the older readback
    // then sees the change and reports nothing rather than the newer submission's values.
    std::atomic<uint64_t> generation{0};
};

} // namespace vkscope::timeline
