#include "instruments/timing/chain.hpp"

#include <algorithm>

namespace vkscope::timing {

void SubmissionChain::created(uint64_t semaphore, SemaphoreKind kind, uint64_t initial_value) {
    std::lock_guard guard(mutex_);
    semaphores_[semaphore] = State{kind, initial_value, false};
}

void SubmissionChain::destroyed(uint64_t semaphore) {
    std::lock_guard guard(mutex_);
    semaphores_.erase(semaphore);
}

void SubmissionChain::host_signalled(uint64_t semaphore, uint64_t value) {
    std::lock_guard guard(mutex_);
    if (auto it = semaphores_.find(semaphore); it != semaphores_.end()) {
        it->second.covered = std::max(it->second.covered, value);
    }
}

SubmissionChain::Decision SubmissionChain::batch(const Batch& b, const Probe& probe) {
    bool covered = true;
    if (auto it = blocked_.find(b.queue); it != blocked_.end()) {
        if (probe.queue_reached && probe.queue_reached(b.queue) >= it->second) {
            blocked_.erase(it);
        } else {
            covered = false; // behind an uncovered batch of its own queue
        }
    }
    for (const SemaphoreUse& w : b.waits) {
        auto it = semaphores_.find(w.semaphore);
        if (it == semaphores_.end()) {
            covered = false;
            continue;
        }
        State& s = it->second;
        if (s.kind == SemaphoreKind::timeline) {
            if (w.value > s.covered && probe.counter) {
                s.covered = std::max(s.covered, probe.counter(w.semaphore));
            }
            covered = covered && w.value <= s.covered;
        } else {
            covered = covered && !s.unsafe_pending;
            s.unsafe_pending = false; // the wait consumes the signal
        }
    }
    for (const SemaphoreUse& sig : b.signals) {
        auto it = semaphores_.find(sig.semaphore);
        if (it == semaphores_.end()) {
            continue;
        }
        State& s = it->second;
        if (s.kind == SemaphoreKind::timeline) {
            if (covered) {
                s.covered = std::max(s.covered, sig.value);
            }
        } else {
            s.unsafe_pending = !covered;
        }
    }
    Decision d;
    if (!covered) {
        uint64_t& until = blocked_[b.queue];
        until = std::max(until, b.completion);
        d.blocks_queue = true;
    }
    if (!b.serialize) {
        return d;
    }
    d.wait = last_id_;
    if (covered) {
        d.chained = true;
        d.signal = ++last_id_;
    } else {
        d.unserialized = true;
    }
    return d;
}

} // namespace vkscope::timing
