#pragma once
// The timer's floor on one queue family (docs/timing.md, "The timer's floor"): what the layer's
// timestamps read around nothing at all. Measured once per queue family when the device is
// created, on the thread that creates it and before the application has the device (so the
// queue is the layer's alone): one command buffer of timestamps written back to back, then of
// empty workloads between the timestamps the layer writes around every workload in its mode,
// submitted and waited for. The ticks go to the host as they are; it sums them up.

#include "dispatch_tables.gen.hpp"
#include "instruments/timing/floor_samples.hpp"

#include <cstdint>
#include <vulkan/vk_layer.h>

namespace vkscope::timing {

struct FloorTarget {
    VkDevice device = VK_NULL_HANDLE;
    const DeviceDispatch* next = nullptr;
    PFN_vkSetDeviceLoaderData set_loader_data = nullptr;
    VkQueue queue = VK_NULL_HANDLE;
    uint32_t family = 0;
    uint32_t valid_bits = 64;
    Mode mode = Mode::queue;
};

// Records, submits and reads the measurement on the target's queue, waiting for it (a second at
// most); a FloorSamples with a reason when it could not be made.
FloorSamples measure_floor(const FloorTarget& target);

} // namespace vkscope::timing
