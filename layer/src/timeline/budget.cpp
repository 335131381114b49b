#include "timeline/budget.hpp"

#include <algorithm>
#include <system_error>

namespace vkscope::timeline {

Budget::Budget(double percent, uint32_t frames_per_set)
    : percent_(percent), controller_(percent / 100.0, frames_per_set) {
    epochs_[0].window.store(controller_.window().pack(), std::memory_order_relaxed);
    try {
        thread_.start([this] { run(); });
    } catch (const std::system_error&) {
        // No thread: each frame end runs the estimates itself, as the controller always did.
    }
}

Budget::~Budget() {
    thread_.stop(mutex_, stopping_, wake_);
}

void Budget::run() {
    become_background_thread(kBudgetThread);
    std::unique_lock lock(mutex_);
    for (;;) {
        wake_.wait(lock, [this] { return estimate_due_ || stopping_; });
        if (stopping_) {
            return;
        }
        // Estimated on a copy, without the lock: a frame end never waits for the estimates,
        // only, at worst, for the copy (this thread does not preempt the application's, and
        // could be switched out while it holds the lock).
        const uint64_t ended = frames_ended_;
        auto copy = std::make_unique<BudgetController>(controller_);
        lock.unlock();
        copy->estimate();
        lock.lock();
        // A frame end since ran them itself (it found them due): these are of an older sample.
        if (estimate_due_ && frames_ended_ == ended) {
            controller_.take_estimates(*copy);
            estimate_due_ = false;
        }
    }
}

InstrumentChoice Budget::choose(const Workload&, void* context) {
    Epoch& epoch = *static_cast<Epoch*>(context);
    const uint32_t position = epoch.positions.fetch_add(1, std::memory_order_relaxed);
    const BudgetWindow window = BudgetWindow::unpack(epoch.window.load(std::memory_order_relaxed));
    if (window.measures(position)) {
        return InstrumentChoice{};
    }
    return InstrumentChoice{0, window.measures(position + 1)};
}

std::optional<BudgetFrame> Budget::frame_ended(uint64_t now_ns, bool captured) {
    // (In a forked child the parent's thread may have held the lock at the fork; the child's
    // frame ends are its only callers.)
    const bool threaded = thread_.running();
    std::unique_lock lock(mutex_, std::defer_lock);
    if (thread_.usable()) {
        lock.lock();
    }
    if (estimate_due_) {
        // The thread has not got to the last frame's sample yet (or there is none).
        controller_.estimate();
        estimate_due_ = false;
    }
    const uint64_t current = current_.load(std::memory_order_relaxed);
    std::optional<BudgetFrame> out;
    if (captured) {
        // A recording that spans the frame's end (a render thread a frame ahead) numbers its
        // workloads in the frame it began in: the frame before has all of its own by now.
        const uint32_t positions = std::max(
            epochs_[current % kEpochs].positions.load(std::memory_order_relaxed),
            epochs_[(current + kEpochs - 1) % kEpochs].positions.load(std::memory_order_relaxed));
        const uint64_t interval = last_end_ns_ && now_ns > last_end_ns_ ? now_ns - last_end_ns_ : 0;
        const uint64_t recording =
            epochs_[current % kEpochs].recording_ns.load(std::memory_order_relaxed);
        out = controller_.frame_ended(interval, positions, recording,
                                      BudgetController::Estimate::later);
        estimate_due_ = true;
        ++frames_ended_;
        last_end_ns_ = now_ns;
    } else {
        controller_.frame_skipped();
        last_end_ns_ = 0;
    }
    Epoch& next = epochs_[(current + 1) % kEpochs];
    next.positions.store(0, std::memory_order_relaxed);
    next.recording_ns.store(0, std::memory_order_relaxed);
    next.window.store(controller_.window().pack(), std::memory_order_relaxed);
    current_.store(current + 1, std::memory_order_release);
    const bool wake = threaded && estimate_due_;
    if (lock.owns_lock()) {
        lock.unlock();
    }
    if (wake) {
        wake_.notify_one();
    }
    return out;
}

} // namespace vkscope::timeline
