#include "core/pending_posts.hpp"

#include <atomic>
#include <ctime>
#include <pthread.h>

namespace vkscope {
namespace {

std::atomic<int64_t> g_pending{0};

// A forked child has none of the threads whose work was counted.
void forget_after_fork() noexcept {
    g_pending.store(0, std::memory_order_relaxed);
}

[[maybe_unused]] const int g_fork_handler = pthread_atfork(nullptr, nullptr, forget_after_fork);

} // namespace

void add_pending_posts(int64_t n) noexcept {
    g_pending.fetch_add(n, std::memory_order_acq_rel);
}

bool wait_for_pending_posts(std::chrono::milliseconds limit) noexcept {
    constexpr long kStepNs = 200'000;
    const long long steps = limit.count() * 1'000'000LL / kStepNs;
    for (long long i = 0; g_pending.load(std::memory_order_acquire) > 0; ++i) {
        if (i >= steps) {
            return false;
        }
        timespec step{0, kStepNs};
        nanosleep(&step, nullptr);
    }
    return true;
}

} // namespace vkscope
