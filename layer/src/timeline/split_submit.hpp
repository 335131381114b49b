#pragma once
// A vkQueueSubmit* call taken apart so that an instrument can sample between application command
// buffers where the GPU cannot be held inside one (CPU-sampled counters per command buffer): each
// application command buffer (with the layer command buffers around it) goes to the driver on its
// own, the first piece of a batch carrying its waits, the last its signals, the last of the call
// the application's fence; after each, an empty submission with a layer fence says when the queue
// is done and the instruments are told. This is ordinary Vulkan, valid on every driver.
//
// Nor is a call cut where a render pass instance is suspended in one command buffer and resumed
// in the next. A batch with structures in its pNext chain other than timeline semaphore values goes
// whole (their contents may be per command buffer). A wait not done within a bounded time is given
// up: the rest goes without waiting, and the application goes on.

#include "timeline/device.hpp"

#include <functional>
#include <span>
#include <vulkan/vulkan.h>

namespace vkscope::timeline {

// Called with (point, completed) as instrument.hpp's split_point() describes.
using SplitPoint = std::function<void(size_t, bool)>;

// `cut_after`: per application command buffer of the call, whether it may be cut after it.
VkResult submit_split(TimelineQueue& queue, std::span<const VkSubmitInfo> batches,
                      std::span<const VkSubmitInfo> application, VkFence fence,
                      std::span<const uint8_t> cut_after, const SplitPoint& point);

using Submit2 = PFN_vkQueueSubmit2;
VkResult submit_split(TimelineQueue& queue, std::span<const VkSubmitInfo2> batches,
                      std::span<const VkSubmitInfo2> application, VkFence fence,
                      std::span<const uint8_t> cut_after, Submit2 next, const SplitPoint& point);

} // namespace vkscope::timeline
