// The application's debug labels. Command buffer labels go into the command stream; queue labels
// act on the queue's stack at once. Both nest on the queue's one stack, which the interpreter
// owns.

#include "timeline/device.hpp"
#include "timeline/interpretation_worker.hpp"
#include "timeline/server_sink.hpp"

namespace vkscope {
namespace {

using timeline::CommandBufferState;
using timeline::find_command_buffer;

const DeviceDispatch& next_of(const void* handle) {
    return find_device(handle)->next;
}

const DeviceDispatch& marker_begin(VkCommandBuffer handle, const char* name) {
    if (CommandBufferState* cb = find_command_buffer(handle)) {
        cb->recorder.marker_begin(name ? name : "");
        return cb->device->next;
    }
    return next_of(handle);
}

const DeviceDispatch& marker_end(VkCommandBuffer handle) {
    if (CommandBufferState* cb = find_command_buffer(handle)) {
        cb->recorder.marker_end();
        return cb->device->next;
    }
    return next_of(handle);
}

} // namespace

VKAPI_ATTR void VKAPI_CALL hooks::vkCmdBeginDebugUtilsLabelEXT(
    VkCommandBuffer commandBuffer, const VkDebugUtilsLabelEXT* pLabelInfo) {
    marker_begin(commandBuffer, pLabelInfo->pLabelName)
        .CmdBeginDebugUtilsLabelEXT(commandBuffer, pLabelInfo);
}

VKAPI_ATTR void VKAPI_CALL hooks::vkCmdEndDebugUtilsLabelEXT(VkCommandBuffer commandBuffer) {
    marker_end(commandBuffer).CmdEndDebugUtilsLabelEXT(commandBuffer);
}

VKAPI_ATTR void VKAPI_CALL hooks::vkCmdDebugMarkerBeginEXT(
    VkCommandBuffer commandBuffer, const VkDebugMarkerMarkerInfoEXT* pMarkerInfo) {
    marker_begin(commandBuffer, pMarkerInfo->pMarkerName)
        .CmdDebugMarkerBeginEXT(commandBuffer, pMarkerInfo);
}

VKAPI_ATTR void VKAPI_CALL hooks::vkCmdDebugMarkerEndEXT(VkCommandBuffer commandBuffer) {
    marker_end(commandBuffer).CmdDebugMarkerEndEXT(commandBuffer);
}

VKAPI_ATTR void VKAPI_CALL
hooks::vkQueueBeginDebugUtilsLabelEXT(VkQueue queue, const VkDebugUtilsLabelEXT* pLabelInfo) {
    if (timeline::TimelineQueue* q = timeline::find_queue(queue)) {
        std::lock_guard lock(q->mutex);
        const char* name = pLabelInfo->pLabelName ? pLabelInfo->pLabelName : "";
        if (timeline::InterpretationWorker* worker = q->worker()) {
            // In order with the queue's command buffers, on the thread that interprets them.
            timeline::InterpretationJob job;
            job.kind = timeline::InterpretationJob::Kind::label_begin;
            job.queue = q;
            job.label = name;
            worker->push(std::move(job));
            ++q->shape.labels;
        } else {
            timeline::ServerSink sink(q->device);
            q->interpreter.queue_label_begin(name, sink);
        }
    }
    next_of(queue).QueueBeginDebugUtilsLabelEXT(queue, pLabelInfo);
}

VKAPI_ATTR void VKAPI_CALL hooks::vkQueueEndDebugUtilsLabelEXT(VkQueue queue) {
    if (timeline::TimelineQueue* q = timeline::find_queue(queue)) {
        std::lock_guard lock(q->mutex);
        if (timeline::InterpretationWorker* worker = q->worker()) {
            timeline::InterpretationJob job;
            job.kind = timeline::InterpretationJob::Kind::label_end;
            job.queue = q;
            worker->push(std::move(job));
            q->shape.labels -= q->shape.labels > 0 ? 1 : 0;
        } else {
            q->interpreter.queue_label_end();
        }
    }
    next_of(queue).QueueEndDebugUtilsLabelEXT(queue);
}

} // namespace vkscope
