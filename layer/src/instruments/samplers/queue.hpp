#pragma once
// Handovers in the submissions of one queue. Before the submission, each command buffer that
// carries handovers gets its events reset (once its previous run is known complete). Right after
// the driver's vkQueueSubmit* returns, and before the application gets control back, the
// submitting thread (one per device at a time) walks the handovers in execution order: it polls
// A until the GPU reaches it (short sleeps, bounded), resets A, samples every sampler, and sets B
// so the GPU goes on. Each workload gets the difference of the samples around it.
//
// It never holds the GPU where that could hang the application: a submission that waits on a
// semaphore value not yet signalled, or on the application's own events, is not held (its B
// events are set before it runs: core Vulkan's host-signal-before-wait); a handover the GPU never
// reaches is given up after a bounded time and the rest of the frame runs unheld.

#include "instruments/samplers/device.hpp"
#include "instruments/samplers/recording.hpp"
#include "timeline/instrument.hpp"

#include <cstdint>
#include <mutex>
#include <string>
#include <vector>

namespace vkscope::timeline {
class TimelineQueue;
}

namespace vkscope::samplers {

class HandoverQueue final : public timeline::InstrumentQueue {
public:
    HandoverQueue(HandoverDevice& device, timeline::TimelineQueue& queue, size_t slot)
        : device_(device), queue_(queue), slot_(slot) {}

    void begin_submission(const timeline::SubmissionStart& start) override;
    bool pairs_marks() const override { return active_; }
    void before_command_buffer(VkCommandBuffer handle, timeline::LayerCommandBuffers* layer,
                               std::vector<VkCommandBuffer>& out) override;
    void after_command_buffer(const timeline::SubmitRecord& record,
                              timeline::LayerCommandBuffers* layer,
                              std::vector<VkCommandBuffer>& out) override;
    void end_batch(timeline::LayerCommandBuffers*, std::vector<VkCommandBuffer>&) override {}
    void patch(timeline::BatchPatch& batch) override;
    bool needs_completion() const override {
        return !parts_.empty() || !instances_.empty() || !annexes_.empty();
    }
    bool splits() const override;
    void split_point(size_t index, bool completed) override;
    void submitted(VkResult result) override;
    timeline::CompletionJob take_completion() override;
    void end_submission() override;

private:
    // One application command buffer with handovers, in execution order.
    struct Part {
        HandoverRecording* recording = nullptr;
        const char* why = nullptr; // not sampled in this submission
        bool reset = false;        // its events were reset for this submission
        size_t first = 0;          // its first handover's row in samples_
    };
    struct Instance {
        size_t part = 0; // the command buffer that ended it, in call order
        uint64_t submit = 0;
        uint64_t tag = 0;
        timeline::Mark begin;
        timeline::Mark end;
        bool never_ended = false;
    };
    struct Annex {
        uint64_t submit = 0;
        uint64_t tag = 0;
        std::string fields;
    };

    void release_all(size_t from_part, uint32_t from_handover);
    void hold_and_sample(uint64_t frame);
    bool wait_for_a(VkEvent a) const;
    // The sample row of handover `index` of `recording` in this submission, or why there is none.
    const double* row_of(const timeline::Mark& mark, const char*& why) const;
    void resolve();
    void add_unseen(std::vector<std::pair<uint64_t, uint64_t>>& seen);
    // Per command buffer (the device's granularity): each instance from the samples around the
    // application command buffer it ran in.
    void resolve_per_command_buffer();
    bool per_command_buffer() const { return device_.granularity != Granularity::handover; }

    HandoverDevice& device_;
    timeline::TimelineQueue& queue_;
    const size_t slot_;
    bool active_ = false;
    const char* blocked_ = nullptr; // the whole submission is not held: why
    std::vector<Part> parts_;
    std::vector<double> samples_;   // a row of every counter per handover
    std::vector<const char*> rows_; // per handover: null when sampled, else why not
    std::vector<Instance> instances_;
    std::vector<std::pair<uint64_t, uint64_t>> listed_;
    std::vector<Annex> annexes_;
    std::unique_lock<std::mutex> sampling_; // held from the first split point to the end
};

} // namespace vkscope::samplers
