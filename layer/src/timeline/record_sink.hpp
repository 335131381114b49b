#pragma once
// The recorder's RecordSink for a real command buffer: labels through VK_EXT_debug_utils (or
// VK_EXT_debug_marker) and parameter copies into layer-owned slots, all through the next layer.

#include "timeline/device.hpp"

namespace vkscope::timeline {

void begin_label(const TimelineDevice& device, VkCommandBuffer cb, const char* name);
// Begins the label "<prefix><id>" (t<tagID>, s<submitID>).
void begin_id_label(const TimelineDevice& device, VkCommandBuffer cb, char prefix, uint64_t id);
void end_label(const TimelineDevice& device, VkCommandBuffer cb);

class VulkanRecordSink final : public RecordSink {
public:
    explicit VulkanRecordSink(CommandBufferState& cb) : cb_(cb) {}

    void begin_tag(uint64_t tag) override;
    void end_tag() override;
    void copy_parameters(std::span<const ParameterRequest> requests,
                         std::span<ParameterSlot*> out) override;

private:
    CommandBufferState& cb_;
};

} // namespace vkscope::timeline
