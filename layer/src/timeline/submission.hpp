#pragma once
// One vkQueueSubmit* call as the timeline sees it, with the queue's lock held throughout: every
// submitted command buffer gets a submitID and a SUBMIT message, its command stream runs on the
// queue's interpreter, and the command buffers that need it are wrapped in s<submitID> labels by
// layer-owned command buffers. After the application's submission, an empty one signals the
// queue's timeline semaphore, which tells when the wrappers can be reused and when the indirect
// parameters can be read.

#include "timeline/device.hpp"
#include "timeline/host_sink.hpp"
#include "timing/submit.hpp"
#include "timing/submit_patch.hpp"

#include <mutex>
#include <span>
#include <vector>

namespace vkscope::timeline {

class Submission {
public:
    Submission(TimelineQueue& queue, const char* api);
    Submission(const Submission&) = delete;
    Submission& operator=(const Submission&) = delete;

    // Runs batch `index`. Fills `out` with the command buffers to submit in its place and
    // returns true when it differs from `cbs` (wrappers inserted). `wrappable` is false for
    // batches whose command buffer list cannot grow (device groups, protected submissions).
    bool batch(uint32_t index, std::span<const VkCommandBuffer> cbs, bool wrappable,
               std::vector<VkCommandBuffer>& out);
    // Timing, after batch(): what the batch waits for and signals decides its place in the
    // cross-queue chain (`full`); `patch` adds the layer semaphore to the batch when it has one.
    // `has_work`: the batch runs command buffers and its semaphore lists may grow.
    template <typename Info>
    void serialize(Info& batch, bool has_work, timing::SubmitPatch& patch) {
        if (!chain_lock_.owns_lock()) {
            end_batch();
            return;
        }
        const timing::SubmissionChain::Decision d = decide(timing::semaphores_of(batch), has_work);
        if (d.wait || d.signal) {
            patch.apply(batch, device_.timing->chain_semaphore, d);
        }
    }
    // Before the application's submission: slots its copies write must have been read.
    void before_submit();
    // With timing on, after before_submit(): the signal that says when the GPU is done with this
    // call rides along in the application's last batch (a copy of it) instead of costing a
    // submission of its own; `allowed` is false for a batch whose semaphore lists must stay as
    // they are (device groups).
    template <typename Info>
    void merge_signal(Info& last, bool allowed, timing::SubmitPatch& patch) {
        if (device_.timing && allowed && queue_.semaphore && needs_signal()) {
            merged_signal_ = queue_.signalled + 1;
            timing::SubmissionChain::Decision d;
            d.signal = merged_signal_;
            patch.apply(last, queue_.semaphore, d);
        }
    }
    // After it: the signal, the readback job, the frame accounting.
    void after_submit(VkResult result, bool frame_boundary);

private:
    // A layer command buffer that ends `ends` labels, or begins s<begin_submit>: never both, as
    // an end that crosses command buffers may break a later begin (RecordOptions).
    VkCommandBuffer wrapper(uint32_t ends, uint64_t begin_submit);
    // A begun layer command buffer, recycled with the wrappers; the caller ends it.
    VkCommandBuffer begin_layer_cb();
    timing::SubmissionChain::Decision decide(const timing::BatchSemaphores& semaphores,
                                             bool has_work);
    void chain_failed();
    void end_batch();
    bool needs_signal() const;
    const char* serialization_name() const;
    void close_s_label(size_t depth, bool insert, std::vector<VkCommandBuffer>& out);
    void recycle();

    TimelineQueue& queue_;
    TimelineDevice& device_;
    std::lock_guard<std::mutex> lock_;
    HostSink sink_;
    const char* api_;
    const uint64_t frame_;
    const uint64_t cpu_ns_;
    const bool captured_; // the frame is one the `frames` setting captures
    bool can_label_;      // layer command buffers with labels can be inserted
    std::vector<VkCommandBuffer> wrappers_;
    ReadbackJob job_;
    SubmitRecord record_;
    // Timing (inactive when off or outside captured frames). `full` serializes across queues
    // under the chain's lock, held from the first decision until the batches are submitted.
    timing::SubmitTiming timing_;
    std::unique_lock<std::mutex> chain_lock_;
    uint64_t chain_first_wait_ = UINT64_MAX; // the IDs this call's batches wait for and take
    uint64_t chain_last_signal_ = 0;
    bool must_signal_ = false;   // the chain needs to see this call's batches done
    uint64_t merged_signal_ = 0; // the signal merge_signal() added, 0: none
};

// End of frame `device.frame` (and start of the next): a FRAME message.
void end_frame(TimelineQueue& queue, const char* reason);

uint64_t monotonic_ns();

} // namespace vkscope::timeline
