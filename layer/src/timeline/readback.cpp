#include "timeline/readback.hpp"

#include "core/background_thread.hpp"
#include "core/monotonic_clock.hpp"
#include "timeline/metadata.hpp"

#include <algorithm>
#include <array>

namespace vkscope::timeline {
namespace {

constexpr auto kPoll = std::chrono::milliseconds(10);
// On device destruction: what the GPU has not finished by then is not worth holding the
// application for.
constexpr auto kStopGrace = std::chrono::milliseconds(500);

} // namespace

ReadbackWorker::ReadbackWorker(Config config) : config_(std::move(config)) {
    thread_ = std::thread([this] { run(); });
}

ReadbackWorker::~ReadbackWorker() {
    {
        std::lock_guard lock(mutex_);
        stopping_ = true;
    }
    wake_.notify_all();
    thread_.join();
}

void ReadbackWorker::claim(ReadbackJob& job) {
    job.generations.clear();
    for (const Readback& r : job.readbacks) {
        for (const ParameterCopy& c : r.copies) {
            job.generations.push_back(c.slot->generation.load(std::memory_order_acquire));
            c.slot->in_flight.store(true, std::memory_order_release);
        }
    }
}

void ReadbackWorker::push(ReadbackJob job) {
    bool wake = false;
    {
        std::lock_guard lock(mutex_);
        jobs_.push_back(std::move(job));
        const auto now = std::chrono::steady_clock::now();
        push_interval_ = now - last_push_;
        last_push_ = now;
        wake = idle_;
        idle_ = false;
    }
    if (wake) {
        wake_.notify_all();
    }
}

bool ReadbackWorker::wait_read(ParameterSlot& slot, std::chrono::milliseconds timeout) {
    std::unique_lock lock(mutex_);
    hurry_ = true;
    wake_.notify_all();
    if (done_.wait_for(lock, timeout, [&] { return !slot.in_flight.load(); })) {
        return true;
    }
    slot.generation.fetch_add(1, std::memory_order_acq_rel);
    slot.in_flight.store(false, std::memory_order_release);
    return false;
}

void ReadbackWorker::run() {
    // Not SCHED_BATCH, unlike the sender: every submission's query pools stay held until this
    // thread has read them, so on a busy machine a readback thread that waits for a free core
    // makes the pools pile up (61 held over 1,000 frames on a loaded 2-core machine, against
    // 8 for 10 frames).
    name_layer_thread(kReadbackThread);
    // Instruments' results go out as the timeline's messages.
    class Sink final : public CompletionSink {
    public:
        explicit Sink(const Config& config) : config_(config) {}
        void annex(uint64_t submit, uint64_t tag, std::string_view fields) override {
            config_.annex(submit, tag, std::string(fields));
        }
        void post(std::string frame) override {
            if (config_.post) {
                config_.post(std::move(frame));
            }
        }

    private:
        const Config& config_;
    } sink(config_);
    std::unique_lock lock(mutex_);
    auto deadline = std::chrono::steady_clock::time_point::max();
    auto last_seen = std::chrono::steady_clock::time_point{};
    for (;;) {
        const bool batching = push_interval_ < kBatch;
        if (batching && !stopping_) {
            // Also with nothing queued yet: submissions this frequent are expected within the
            // batch, and they need not wake a thread that sleeps with a deadline.
            wake_.wait_until(lock, last_seen + kBatch, [&] { return stopping_ || hurry_; });
        }
        if (jobs_.empty() && !stopping_) {
            idle_ = true;
            wake_.wait(lock, [&] { return stopping_ || !jobs_.empty(); });
            idle_ = false;
            continue; // the push that woke it says whether to batch
        }
        // Batching, the completions are only looked at: what has not completed yet is read at
        // the next batch, and no wake-up from the driver's thread is needed for it (waiting on
        // the semaphore would cost one, and contend for a lock with that thread, whenever the
        // batch ends while the queue is busy). Where someone waits for a readback, or the
        // device goes away, the thread waits on the semaphore instead.
        const bool look = batching && !hurry_ && !stopping_;
        hurry_ = false;
        if (stopping_ && deadline == std::chrono::steady_clock::time_point::max()) {
            deadline = std::chrono::steady_clock::now() + kStopGrace;
        }
        if (jobs_.empty() || std::chrono::steady_clock::now() > deadline) {
            break;
        }
        // One wait for whichever queue finishes first.
        std::vector<VkSemaphore> semaphores;
        std::vector<uint64_t> values;
        for (const ReadbackJob& job : jobs_) {
            auto it = std::find(semaphores.begin(), semaphores.end(), job.semaphore);
            if (it == semaphores.end()) {
                semaphores.push_back(job.semaphore);
                values.push_back(job.value);
            } else {
                auto& v = values[static_cast<size_t>(it - semaphores.begin())];
                v = std::min(v, job.value);
            }
        }
        lock.unlock();
        const VkSemaphoreWaitInfo info{
            VK_STRUCTURE_TYPE_SEMAPHORE_WAIT_INFO,    nullptr,           VK_SEMAPHORE_WAIT_ANY_BIT,
            static_cast<uint32_t>(semaphores.size()), semaphores.data(), values.data()};
        const VkResult waited =
            look
                ? VK_SUCCESS
                : config_.wait(config_.device, &info,
                               std::chrono::duration_cast<std::chrono::nanoseconds>(kPoll).count());
        std::vector<uint64_t> reached(semaphores.size(), 0);
        if (waited == VK_SUCCESS) {
            for (size_t i = 0; i < semaphores.size(); ++i) {
                config_.counter(config_.device, semaphores[i], &reached[i]);
            }
        }
        // When the completions were seen (after the counters were read, so that a submission
        // that completed while they were being read counts too): an upper bound for every GPU
        // time they carry.
        const uint64_t seen_ns = monotonic_ns();
        last_seen = std::chrono::steady_clock::now();
        lock.lock();
        std::vector<ReadbackJob> ready;
        for (auto it = jobs_.begin(); it != jobs_.end();) {
            const size_t s =
                static_cast<size_t>(std::find(semaphores.begin(), semaphores.end(), it->semaphore) -
                                    semaphores.begin());
            if (s < reached.size() && reached[s] >= it->value) {
                ready.push_back(std::move(*it));
                it = jobs_.erase(it);
            } else {
                ++it;
            }
        }
        if (ready.empty()) {
            continue;
        }
        lock.unlock();
        for (ReadbackJob& job : ready) {
            process(job);
            for (const CompletionJob& completion : job.completions) {
                completion(seen_ns, sink);
            }
        }
        if (config_.flush) {
            config_.flush();
        }
        lock.lock();
        done_.notify_all();
    }
    // Whatever is left will never be read: let later submissions write the slots.
    for (ReadbackJob& job : jobs_) {
        size_t g = 0;
        for (const Readback& r : job.readbacks) {
            for (const ParameterCopy& c : r.copies) {
                if (c.slot->generation.load() == job.generations[g++]) {
                    c.slot->in_flight.store(false);
                }
            }
        }
    }
    jobs_.clear();
    done_.notify_all();
}

void ReadbackWorker::process(ReadbackJob& job) {
    size_t g = 0;
    for (const Readback& r : job.readbacks) {
        // A copy whose slot's generation moved on belongs to a later submission now: neither read
        // nor released here.
        std::vector<bool> ours;
        std::vector<std::array<uint32_t, 3>> copies;
        for (const ParameterCopy& c : r.copies) {
            ours.push_back(c.slot->generation.load(std::memory_order_acquire) ==
                           job.generations[g++]);
            if (ours.back()) {
                config_.invalidate(*c.slot);
                copies.push_back({c.slot->mapped[0], c.slot->mapped[1], c.slot->mapped[2]});
            }
        }
        if (copies.size() == r.copies.size()) {
            config_.annex(r.submit, r.workload->tag, readback_annex(r, copies));
        }
        for (size_t i = 0; i < r.copies.size(); ++i) {
            if (ours[i]) {
                r.copies[i].slot->in_flight.store(false, std::memory_order_release);
            }
        }
    }
}

} // namespace vkscope::timeline
