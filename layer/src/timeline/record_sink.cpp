#include "timeline/record_sink.hpp"

#include <charconv>

namespace vkscope::timeline {

void begin_label(const TimelineDevice& device, VkCommandBuffer cb, const char* name) {
    switch (device.label_api) {
    case LabelApi::debug_utils: {
        VkDebugUtilsLabelEXT label{};
        label.sType = VK_STRUCTURE_TYPE_DEBUG_UTILS_LABEL_EXT;
        label.pLabelName = name;
        device.next.CmdBeginDebugUtilsLabelEXT(cb, &label);
        break;
    }
    case LabelApi::debug_marker: {
        VkDebugMarkerMarkerInfoEXT marker{};
        marker.sType = VK_STRUCTURE_TYPE_DEBUG_MARKER_MARKER_INFO_EXT;
        marker.pMarkerName = name;
        device.next.CmdDebugMarkerBeginEXT(cb, &marker);
        break;
    }
    case LabelApi::none:
        break;
    }
}

void end_label(const TimelineDevice& device, VkCommandBuffer cb) {
    switch (device.label_api) {
    case LabelApi::debug_utils:
        device.next.CmdEndDebugUtilsLabelEXT(cb);
        break;
    case LabelApi::debug_marker:
        device.next.CmdDebugMarkerEndEXT(cb);
        break;
    case LabelApi::none:
        break;
    }
}

void begin_id_label(const TimelineDevice& device, VkCommandBuffer cb, char prefix, uint64_t id) {
    // Once per workload on the recording thread: to_chars rather than a printf.
    char name[24];
    name[0] = prefix;
    *std::to_chars(name + 1, name + sizeof name - 1, id).ptr = '\0';
    begin_label(device, cb, name);
}

void VulkanRecordSink::begin_tag(uint64_t tag) {
    begin_id_label(*cb_.device, cb_.handle, 't', tag);
}

void VulkanRecordSink::end_tag() {
    end_label(*cb_.device, cb_.handle);
}

void VulkanRecordSink::copy_parameters(std::span<const ParameterRequest> requests,
                                       std::span<ParameterSlot*> out) {
    TimelineDevice& device = *cb_.device;
    std::vector<VkBufferCopy> regions;
    std::vector<std::pair<VkBuffer, size_t>> sources; // per copy: buffer, region index
    for (size_t i = 0; i < requests.size(); ++i) {
        out[i] = nullptr;
        const ParameterRequest& r = requests[i];
        const BufferInfo* buffer = device.buffers.find(r.buffer);
        // Without a readback thread nobody would read the slot; without TRANSFER_SRC (a buffer
        // the layer did not see created) the copy would be invalid.
        if (!cb_.instrumented || !device.readback || !buffer ||
            !(buffer->usage & VK_BUFFER_USAGE_TRANSFER_SRC_BIT) ||
            r.offset + r.bytes > buffer->size || r.bytes > ParameterPool::kSlotBytes) {
            continue;
        }
        ParameterSlot* slot = cb_.parameters.next(device.parameter_pool);
        if (!slot) {
            continue;
        }
        out[i] = slot;
        regions.push_back(VkBufferCopy{r.offset, slot->offset, r.bytes});
        sources.emplace_back((VkBuffer)(r.buffer), i);
    }
    if (regions.empty()) {
        return;
    }
    // Whatever wrote the parameters (a shader, a copy, the host before submission) is done before
    // the copy reads them, and an earlier submission's copy into the slot before this one.
    VkMemoryBarrier before{VK_STRUCTURE_TYPE_MEMORY_BARRIER, nullptr, VK_ACCESS_MEMORY_WRITE_BIT,
                           VK_ACCESS_TRANSFER_READ_BIT | VK_ACCESS_TRANSFER_WRITE_BIT};
    device.next.CmdPipelineBarrier(cb_.handle, VK_PIPELINE_STAGE_ALL_COMMANDS_BIT,
                                   VK_PIPELINE_STAGE_TRANSFER_BIT, 0, 1, &before, 0, nullptr, 0,
                                   nullptr);
    for (size_t i = 0; i < regions.size(); ++i) {
        device.next.CmdCopyBuffer(cb_.handle, sources[i].first, out[sources[i].second]->buffer, 1,
                                  &regions[i]);
    }
    // Host reads need the copies made visible to the host once the submission is done.
    VkMemoryBarrier after{VK_STRUCTURE_TYPE_MEMORY_BARRIER, nullptr, VK_ACCESS_TRANSFER_WRITE_BIT,
                          VK_ACCESS_HOST_READ_BIT};
    device.next.CmdPipelineBarrier(cb_.handle, VK_PIPELINE_STAGE_TRANSFER_BIT,
                                   VK_PIPELINE_STAGE_HOST_BIT, 0, 1, &after, 0, nullptr, 0,
                                   nullptr);
}

} // namespace vkscope::timeline
