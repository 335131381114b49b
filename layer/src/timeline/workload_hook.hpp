#pragma once
// The shape every single-command workload hook shares: tag, forward, close the tag.

#include "timeline/device.hpp"
#include "timeline/record_sink.hpp"

namespace vkscope::timeline {

// `cb` is the state of `handle` (null when unknown); `describe(WorkloadInfo&, TimelineDevice&)`
// fills in what the workload is; `forward(const DeviceDispatch&)` records the application's
// command.
template <typename Describe, typename Forward>
void record_workload(VkCommandBuffer handle, CommandBufferState* cb, WorkloadType type,
                     const char* api, Describe&& describe, Forward&& forward,
                     const ParameterRequest* indirect = nullptr,
                     ParameterKind kind = ParameterKind::dispatch) {
    if (!cb) {
        forward(find_device(handle)->next);
        return;
    }
    if (cb->recorder.deferring()) {
        // Outside captured frames: logged only (an indirect one's parameters are not copied there).
        WorkloadInfo info;
        info.api = api;
        describe(info, *cb->device);
        cb->recorder.log_workload(type, info); // before the call, so `info` stays in registers
        forward(cb->device->next);
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
