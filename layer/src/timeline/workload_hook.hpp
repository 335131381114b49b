#pragma once
// The shape every single-command workload hook shares: tag, forward, close the tag.

#include "timeline/device.hpp"
#include "timeline/record_sink.hpp"

namespace vkscope::timeline {

// `cb` is the state of `handle` (null when unknown); `describe(Workload&, TimelineDevice&)` fills
// in what the workload is; `forward(const DeviceDispatch&)` records the application's command.
template <typename Describe, typename Forward>
void record_workload(VkCommandBuffer handle, CommandBufferState* cb, WorkloadType type,
                     const char* api, Describe&& describe, Forward&& forward,
                     const CaptureRequest* indirect = nullptr,
                     CaptureKind kind = CaptureKind::dispatch) {
    if (!cb) {
        forward(find_device(handle)->next);
        return;
    }
    VulkanRecordSink sink(*cb);
    Workload& w = cb->recorder.begin_workload(type, sink, indirect, kind);
    w.device = cb->device->id;
    w.api = api;
    describe(w, *cb->device);
    forward(cb->device->next);
    cb->recorder.end_workload(sink);
}

} // namespace vkscope::timeline
