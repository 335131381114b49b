#include "instruments/timing/queue.hpp"

#include "core/log.hpp"
#include "timeline/device.hpp"

#include <algorithm>

namespace vkscope::timing {

TimingQueue::TimingQueue(TimingDevice& device, timeline::TimelineQueue& queue, size_t slot)
    : device_(device), queue_(queue), slot_(slot),
      results_(device.handle, device.next, device.memory), submit_(&results_, queue.family, slot) {}

void TimingQueue::begin_submission(const timeline::SubmissionStart& start) {
    // Results are read once the queue's semaphore says the GPU is done: without it, no timing.
    submit_.begin(start.completes ? &device_ : nullptr, start.frame_selected);
    if (device_.chain_semaphore) {
        chain_lock_ = device_.chain.lock();
    }
    chain_first_wait_ = UINT64_MAX;
    chain_last_signal_ = 0;
    must_signal_ = false;
}

void TimingQueue::after_command_buffer(const timeline::SubmitRecord& record,
                                       timeline::LayerCommandBuffers* layer,
                                       std::vector<VkCommandBuffer>& out) {
    submit_.add(record);
    if (layer) {
        submit_.flush(*layer, out);
    }
}

void TimingQueue::end_batch(timeline::LayerCommandBuffers* layer,
                            std::vector<VkCommandBuffer>& out) {
    if (layer) {
        submit_.flush(*layer, out);
    } else {
        submit_.drop_pending(reason::kFixedBatch);
    }
}

void TimingQueue::patch(timeline::BatchPatch& batch) {
    if (!chain_lock_.owns_lock()) {
        if (submit_.active()) {
            submit_.end_batch(serialization_name(), nullptr);
        }
        return;
    }
    const SubmissionChain::Decision d = decide(batch.info ? timeline::semaphores_of(*batch.info)
                                                          : timeline::semaphores_of(*batch.info2),
                                               batch.has_work);
    if (d.wait || d.signal) {
        if (batch.info) {
            batch.semaphores->apply(*batch.info, device_.chain_semaphore, d.wait, d.signal);
        } else {
            batch.semaphores->apply(*batch.info2, device_.chain_semaphore, d.wait, d.signal);
        }
    }
}

SubmissionChain::Decision TimingQueue::decide(const timeline::BatchSemaphores& semaphores,
                                              bool has_work) {
    const timeline::TimelineDevice& timeline = queue_.device;
    SubmissionChain::Probe probe;
    probe.counter = [&timeline](uint64_t semaphore) {
        uint64_t value = 0;
        timeline.semaphore_value(timeline.handle, (VkSemaphore)(semaphore), &value);
        return value;
    };
    probe.queue_reached = [this, &timeline](uint64_t) {
        uint64_t value = 0; // without a semaphore the queue never counts as past a batch
        if (queue_.semaphore) {
            timeline.semaphore_value(timeline.handle, queue_.semaphore, &value);
        }
        return value;
    };
    SubmissionChain::Batch batch;
    batch.queue = queue_.id;
    // The signal the timeline makes once this call's batches are submitted.
    batch.completion = queue_.signalled + 1;
    batch.waits = semaphores.waits;
    batch.signals = semaphores.signals;
    batch.serialize = submit_.active() && has_work;
    const SubmissionChain::Decision d = device_.chain.batch(batch, probe);
    // Its queue counts as blocked until that signal says the device ran past it.
    must_signal_ = must_signal_ || d.blocks_queue;
    const char* serialization = serialization_name();
    const char* caveat = nullptr;
    if (d.unserialized) {
        // Within its queue it is serialized all the same.
        serialization = "queue";
        caveat = reason::kNotSerialized;
    }
    if (d.wait || d.signal) {
        chain_first_wait_ = std::min(chain_first_wait_, d.wait);
    }
    chain_last_signal_ = std::max(chain_last_signal_, d.signal);
    submit_.end_batch(serialization, caveat);
    return d;
}

const char* TimingQueue::serialization_name() const {
    // `full` without its semaphore serializes within queues only.
    return mode_name(device_.mode == Mode::full && !device_.chain_semaphore ? Mode::queue
                                                                            : device_.mode);
}

void TimingQueue::submitted(VkResult result) {
    if (result != VK_SUCCESS && chain_last_signal_) {
        chain_failed();
    }
}

void TimingQueue::chain_failed() {
    // The IDs this call took will not be signalled by its batches: signal them anyway, in order
    // after the IDs before them, or every later batch would wait for them forever.
    const uint64_t wait = chain_first_wait_ == UINT64_MAX ? 0 : chain_first_wait_;
    const VkSemaphore s = device_.chain_semaphore;
    const VkPipelineStageFlags stage = VK_PIPELINE_STAGE_ALL_COMMANDS_BIT;
    const VkTimelineSemaphoreSubmitInfo values{VK_STRUCTURE_TYPE_TIMELINE_SEMAPHORE_SUBMIT_INFO,
                                               nullptr,
                                               wait ? 1u : 0u,
                                               &wait,
                                               1,
                                               &chain_last_signal_};
    const VkSubmitInfo repair{
        VK_STRUCTURE_TYPE_SUBMIT_INFO, &values, wait ? 1u : 0u, &s, &stage, 0, nullptr, 1, &s};
    if (device_.next.QueueSubmit(queue_.handle, 1, &repair, VK_NULL_HANDLE) != VK_SUCCESS) {
        log_once(LogLevel::warn, "timing: a failed submission left the cross-queue chain "
                                 "unsignalled; later submissions of this device may not run");
    }
}

std::string TimingQueue::left_out_annex() const {
    // What the job would say of it: nothing was injected around it.
    InstanceTiming t;
    t.status = Outcome::untimed;
    t.reason = reason::kBudget;
    return timing_annex(t);
}

timeline::CompletionJob TimingQueue::take_completion() {
    return submit_.active() ? submit_.take_job() : timeline::CompletionJob{};
}

void TimingQueue::end_submission() {
    // Ring regions no job took go back (the submission failed).
    submit_.end();
    if (chain_lock_.owns_lock()) {
        chain_lock_.unlock();
    }
}

} // namespace vkscope::timing
