#pragma once
// Timing's part in the submissions of one queue: the timer queries of each submitted command
// buffer copied into the queue's result ring (SubmitTiming), and in `full` mode each batch's
// place in the cross-queue chain, with the layer semaphore's wait and signal added to it.

#include "instruments/timing/device.hpp"
#include "instruments/timing/results.hpp"
#include "instruments/timing/submit.hpp"
#include "timeline/instrument.hpp"
#include "timeline/submit_patch.hpp"

#include <cstdint>
#include <mutex>
#include <optional>

namespace vkscope::timeline {
class TimelineQueue;
}

namespace vkscope::timing {

class TimingQueue final : public timeline::InstrumentQueue {
public:
    TimingQueue(TimingDevice& device, timeline::TimelineQueue& queue, size_t slot);

    void begin_submission(const timeline::SubmissionStart& start) override;
    bool pairs_marks() const override { return submit_.active(); }
    // The reads it places need only the blocks the stream's timestamps are in.
    bool pairs_before_submit() const override { return false; }
    void paired(const timeline::SubmitRecord& record) override { submit_.paired(record); }
    void after_command_buffer(const timeline::SubmitRecord& record,
                              timeline::LayerCommandBuffers* layer,
                              std::vector<VkCommandBuffer>& out) override;
    void end_batch(timeline::LayerCommandBuffers* layer,
                   std::vector<VkCommandBuffer>& out) override;
    void patch(timeline::BatchPatch& batch) override;
    bool needs_completion() const override { return submit_.needs_job() || must_signal_; }
    void submitted(VkResult result) override;
    timeline::CompletionJob take_completion() override;
    timeline::DeferredPairing take_pairing() override { return submit_.take_pairing(); }
    std::string left_out_annex() const override;
    void end_submission() override;

private:
    SubmissionChain::Decision decide(const timeline::BatchSemaphores& semaphores, bool has_work);
    // The serialization this queue's instances get (`full` without its semaphore: `queue`).
    const char* serialization_name() const;
    void chain_failed();

    TimingDevice& device_;
    timeline::TimelineQueue& queue_;
    const size_t slot_;
    // Where this queue's query results are copied (its buffer is made with the first timed
    // submission).
    QueueResults results_;
    // The submission in progress; inactive outside captured frames.
    SubmitTiming submit_;
    // `full`: the chain's lock, held from the first decision until the batches are submitted.
    std::unique_lock<std::mutex> chain_lock_;
    uint64_t chain_first_wait_ = UINT64_MAX; // the IDs this call's batches wait for and take
    uint64_t chain_last_signal_ = 0;
    bool must_signal_ = false; // the chain needs to see this call's batches done
};

} // namespace vkscope::timing
