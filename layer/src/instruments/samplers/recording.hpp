#pragma once
// The handovers of one command buffer's recording. Before every workload of a captured frame
// (before a render pass instance's begin: never inside one) and at the end of the recording, a
// handover: a barrier that waits for all earlier work, vkCmdSetEvent(A) and vkCmdWaitEvents(B),
// each with a fresh event pair. A workload's samples are the handover before it and the next
// one after it. Secondary command buffers get none (they may run inside a render pass).
//
// The pairs belong to the command buffer: when it is recorded again they serve its new
// handovers (the application may only record a command buffer that is no longer pending, and the
// pairs are reset on the host before its next submission), more are taken from the device only
// when a recording has more handovers than the last one, and what is left over goes back at the
// end of a recording, and all of them when the command buffer is freed. A command buffer
// recorded anew every frame thus takes no lock for its events.

#include "instruments/samplers/device.hpp"
#include "timeline/instrument.hpp"

#include <cstdint>
#include <vector>

namespace vkscope::samplers {

class HandoverRecording final : public timeline::InstrumentRecording {
public:
    HandoverRecording(HandoverDevice& device, VkCommandBuffer handle)
        : device_(device), handle_(handle) {}
    ~HandoverRecording() override;

    void begin(const timeline::RecordingStart& start) override;
    void end() override;
    void release() override;
    timeline::Mark start() override;
    timeline::Mark finish() override;
    timeline::Mark start_render_pass(const timeline::RenderPassStart& how) override;
    void interrupt(timeline::Interruption what) override;
    bool waited() const override { return waited_; }
    void execute(std::span<timeline::InstrumentRecording* const> secondaries,
                 bool in_render_pass) override;
    const char* unmarked() const override { return why_ ? why_ : why(Reason::outside_frame); }
    const char* left_out() const override { return why(Reason::budget); }

    const std::vector<EventPair>& handovers() const { return events_; }
    // The span that ends at handover `index` includes work no workload of this recording
    // accounts for (secondaries executed between workloads).
    bool crosses_other_work(uint32_t index) const;
    // It waits on the application's own events somewhere: holding it could wait forever.
    bool waits_application_events() const { return application_events_; }

    // Where its previous submission's completion will show: the queue semaphore and value.
    VkSemaphore last_semaphore = VK_NULL_HANDLE;
    uint64_t last_value = 0;
    // Its events are reset for the submission being made.
    bool fresh = false;

private:
    bool waited_ = false; // the last handover() wrote a wait
    timeline::Mark handover();

    HandoverDevice& device_;
    const VkCommandBuffer handle_;
    const char* why_ = why(Reason::outside_frame); // null: this recording samples
    std::vector<EventPair> events_; // this recording's, one pair per handover in order
    std::vector<EventPair> spare_;  // from earlier recordings, not used by this one yet
    std::vector<uint32_t> crossed_;
    bool finished_since_handover_ = false;
    bool suspended_ = false; // a render pass suspended in it: nothing may follow
    bool application_events_ = false;
};

} // namespace vkscope::samplers
