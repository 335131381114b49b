#pragma once
// A counter the CPU reads in a few cycles, for the many short intervals a budgeted recording
// times on the application's thread (its instruments' calls, four clock reads a measured
// workload). The system clock costs tens of nanoseconds a read where its virtual-dynamic path
// is fast, and a system call where a virtual machine's clock source has none; the counter is an
// instruction on either. Its frequency is never needed: a part counted in cycles is given in
// nanoseconds as its share of a span the system clock timed too (cycles_as_ns()).

#include "core/monotonic_clock.hpp"

#include <algorithm>
#include <cstdint>

#if defined(__x86_64__) || defined(__i386__)
#include <x86intrin.h>
#endif

namespace vkscope {

inline uint64_t cycle_count() noexcept {
#if defined(__x86_64__) || defined(__i386__)
    return __rdtsc(); // invariant on every x86-64 CPU a Vulkan 1.3 driver runs on
#elif defined(__aarch64__)
    uint64_t ticks = 0;
    asm volatile("mrs %0, cntvct_el0" : "=r"(ticks)); // the generic timer, the same on every core
    return ticks;
#else
    return monotonic_ns();
#endif
}

// `part_cycles` of a span that took `span_cycles` and `span_ns`, in nanoseconds: never more than
// the span (a counter that stepped back or jumped, a thread moved between cores whose counters
// differ) and none for a span the counter did not see pass.
inline uint64_t cycles_as_ns(uint64_t part_cycles, uint64_t span_cycles, uint64_t span_ns) {
    if (span_cycles == 0) {
        return 0;
    }
    const double share =
        std::min(1.0, static_cast<double>(part_cycles) / static_cast<double>(span_cycles));
    return static_cast<uint64_t>(share * static_cast<double>(span_ns));
}

} // namespace vkscope
