#pragma once
// The recorder's RecordSink for a real command buffer: labels through VK_EXT_debug_utils (or
// VK_EXT_debug_marker) and parameter copies into capture slots, all through the next layer.

#include "timeline/device.hpp"

namespace vkscope::timeline {

void begin_label(const TimelineDevice& device, VkCommandBuffer cb, const char* name);
// Begins the label "<prefix><id>" (t<tagID>, s<submitID>).
void begin_id_label(const TimelineDevice& device, VkCommandBuffer cb, char prefix, uint64_t id);
void end_label(const TimelineDevice& device, VkCommandBuffer cb);

// Timer queries and serialization barriers, straight into the command buffer.
class VulkanTimestampWriter final : public timing::TimestampWriter {
public:
    VulkanTimestampWriter(const DeviceDispatch& next, VkCommandBuffer cb) : next_(next), cb_(cb) {}

    void reset(VkQueryPool pool, uint32_t first, uint32_t count) override;
    void write(VkQueryPool pool, uint32_t slot, bool top_of_pipe) override;
    void barrier() override;

private:
    const DeviceDispatch& next_;
    VkCommandBuffer cb_;
};

class VulkanRecordSink final : public RecordSink {
public:
    explicit VulkanRecordSink(CommandBufferState& cb) : cb_(cb) {}

    void begin_tag(uint64_t tag) override;
    void end_tag() override;
    void capture(std::span<const CaptureRequest> requests, std::span<CaptureSlot*> out) override;
    timing::Timestamp workload_start() override;
    timing::Timestamp workload_finish() override;
    const char* untimed() const override { return cb_.timing.untimed(); }

private:
    CommandBufferState& cb_;
};

} // namespace vkscope::timeline
