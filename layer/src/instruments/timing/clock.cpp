#include "instruments/timing/clock.hpp"

#include <cmath>

namespace vkscope::timing {
namespace {

// Device tick counts reach 2^60 and more: doubles would round them to hundreds of nanoseconds.
int64_t scale(int64_t ticks, double period_ns) {
    if (period_ns == 1.0) {
        return ticks;
    }
    return static_cast<int64_t>(std::llroundl(static_cast<long double>(ticks) * period_ns));
}

} // namespace

uint64_t tick_mask(uint32_t valid_bits) {
    return valid_bits >= 64 ? ~uint64_t{0} : (uint64_t{1} << valid_bits) - 1;
}

uint64_t elapsed_ticks(uint64_t from, uint64_t to, uint32_t valid_bits) {
    return (to - from) & tick_mask(valid_bits);
}

int64_t signed_ticks(uint64_t from, uint64_t to, uint32_t valid_bits) {
    const uint64_t mask = tick_mask(valid_bits);
    const uint64_t forward = (to - from) & mask;
    if (valid_bits >= 64) {
        return static_cast<int64_t>(forward);
    }
    // Past half the range the shorter way is backwards.
    const uint64_t half = uint64_t{1} << (valid_bits - 1);
    return forward >= half ? -static_cast<int64_t>((mask - forward) + 1)
                           : static_cast<int64_t>(forward);
}

std::optional<GpuInterval> interval(uint64_t begin_ticks, uint64_t end_ticks, const TickFormat& f,
                                    const std::optional<Calibration>& calibration) {
    const uint64_t mask = tick_mask(f.valid_bits);
    const auto elapsed =
        static_cast<int64_t>(elapsed_ticks(begin_ticks, end_ticks, f.valid_bits) & (tick_mask(63)));
    const auto duration_ns = static_cast<uint64_t>(scale(elapsed, f.period_ns));
    GpuInterval out;
    if (calibration) {
        const int64_t offset =
            scale(signed_ticks(calibration->device_ticks & mask, begin_ticks & mask, f.valid_bits),
                  f.period_ns);
        if (offset < 0 && static_cast<uint64_t>(-offset) > calibration->host_ns) {
            return std::nullopt;
        }
        out.begin_ns = calibration->host_ns + static_cast<uint64_t>(offset);
    } else {
        out.begin_ns = static_cast<uint64_t>(
            scale(static_cast<int64_t>(begin_ticks & mask & tick_mask(63)), f.period_ns));
    }
    out.end_ns = out.begin_ns + duration_ns;
    return out;
}

} // namespace vkscope::timing
