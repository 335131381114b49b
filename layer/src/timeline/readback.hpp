#pragma once
// The async half of the command stream: a device's thread that waits until the GPU has run a
// submission, reads the indirect parameters its workloads copied and sends them as annexes, then
// runs the instruments' completion jobs.
//
// It waits on the layer's own timeline semaphores, which the application's last batch of each
// submission signals (a copy of it, or an empty submission after it), so it never depends on the
// application's fences or on objects the application may destroy.

#include "timeline/instrument.hpp"
#include "timeline/interpreter.hpp"
#include "timeline/parameter_slot.hpp"

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <mutex>
#include <string>
#include <thread>
#include <vector>
#include <vulkan/vulkan.h>

namespace vkscope::timeline {

struct ReadbackJob {
    VkSemaphore semaphore = VK_NULL_HANDLE;
    uint64_t value = 0; // done when the semaphore reaches it
    std::vector<Readback> readbacks;
    std::vector<uint64_t> generations; // of every copy's slot, in order
    // The instruments' work, run after the readbacks. A job dropped unrun just destroys them.
    std::vector<CompletionJob> completions;
};

class ReadbackWorker {
public:
    struct Config {
        VkDevice device = VK_NULL_HANDLE;
        PFN_vkWaitSemaphores wait = nullptr;
        PFN_vkGetSemaphoreCounterValue counter = nullptr;
        // Makes the GPU's writes to a slot visible to the host (ParameterPool::invalidate).
        std::function<void(const ParameterSlot&)> invalidate;
        // Sends one ANNEX frame (submit, tag, payload).
        std::function<void(uint64_t, uint64_t, const std::string&)> annex;
        // Sends a frame an instrument built; null: dropped.
        std::function<void(std::string)> post;
        // After each round of completed jobs: what annex and post gathered can go (null: they
        // send as they go).
        std::function<void()> flush;
    };

    explicit ReadbackWorker(Config config);
    ReadbackWorker(const ReadbackWorker&) = delete;
    ReadbackWorker& operator=(const ReadbackWorker&) = delete;
    // Reads what completes within a short grace, then drops the rest.
    ~ReadbackWorker();

    // Marks the job's slots in flight; call before the submission that writes them.
    static void claim(ReadbackJob& job);
    void push(ReadbackJob job);
    // Waits until `slot` has been read, at most `timeout`. On timeout the pending readback is
    // disowned (it will report nothing) and false is returned.
    bool wait_read(ParameterSlot& slot, std::chrono::milliseconds timeout);

    // Completions are read at most once per kBatch while submissions come faster than that: on
    // a short frame the thread then wakes once for several submissions rather than once for
    // each (every such wake-up also contends for a lock with the driver's thread that signalled
    // the semaphore). Submissions further apart than kBatch are read as soon as they complete.
    // While they do, the thread sleeps from one batch to the next even when it has nothing
    // queued, and push() only wakes it where it sleeps without a deadline (after a batch that
    // found nothing): a wake-up per submission would cost the submitting thread a system call
    // and this thread two, on every frame, for nothing.
    static constexpr std::chrono::milliseconds kBatch{4};

private:
    void run();
    void process(ReadbackJob& job);

    const Config config_;
    std::mutex mutex_;
    std::condition_variable wake_; // new job or stop
    std::condition_variable done_; // a job was read
    std::deque<ReadbackJob> jobs_;
    bool stopping_ = false;
    bool hurry_ = false; // a wait_read() is waiting: no batching
    bool idle_ = false;  // the thread sleeps until the next push(), without a deadline
    std::chrono::steady_clock::time_point last_push_{};
    std::chrono::steady_clock::duration push_interval_ = std::chrono::steady_clock::duration::max();
    std::thread thread_;
};

} // namespace vkscope::timeline
