#pragma once
// The layer's clock for host times: CLOCK_MONOTONIC, the clock of every CPU time the protocol
// carries and the one calibrated GPU times are put on. clock_gettime is async-signal-safe, so a
// signal handler may read it too.

#include <cstdint>
#include <ctime>

namespace vkscope {

inline uint64_t monotonic_ns() noexcept {
    timespec now{};
    clock_gettime(CLOCK_MONOTONIC, &now);
    return static_cast<uint64_t>(now.tv_sec) * 1'000'000'000ull +
           static_cast<uint64_t>(now.tv_nsec);
}

} // namespace vkscope
