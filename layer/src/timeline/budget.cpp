#include "timeline/budget.hpp"

#include <algorithm>

namespace vkscope::timeline {

Budget::Budget(double percent, uint32_t frames_per_set)
    : percent_(percent), controller_(percent / 100.0, frames_per_set) {
    epochs_[0].window.store(controller_.window().pack(), std::memory_order_relaxed);
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
    std::lock_guard lock(mutex_);
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
        out = controller_.frame_ended(interval, positions, recording);
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
    return out;
}

} // namespace vkscope::timeline
