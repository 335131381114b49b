#pragma once
// Timestamp ticks to nanoseconds. Ticks are masked by the queue family's timestampValidBits
// (bits above them are undefined) and may wrap within those bits; durations are taken modulo
// 2^bits so a wrap between a workload's two timestamps costs nothing. With a calibration (a
// device tick count and the host's CLOCK_MONOTONIC read at the same moment) a tick count becomes
// a CLOCK_MONOTONIC time; without one, ticks times the period on the device's own clock.

#include <cstdint>
#include <optional>

namespace vkscope::timing {

struct TickFormat {
    uint32_t valid_bits = 64; // 1..64
    double period_ns = 1.0;
};

struct Calibration {
    uint64_t device_ticks = 0;
    uint64_t host_ns = 0; // CLOCK_MONOTONIC
    uint64_t max_deviation_ns = 0;
};

uint64_t tick_mask(uint32_t valid_bits);

// Ticks from `from` to `to`, both masked to the valid bits, across at most one wrap.
uint64_t elapsed_ticks(uint64_t from, uint64_t to, uint32_t valid_bits);

// Signed distance from `from` to `to` in ticks: the shorter way around the wrap.
int64_t signed_ticks(uint64_t from, uint64_t to, uint32_t valid_bits);

struct GpuInterval {
    uint64_t begin_ns = 0;
    uint64_t end_ns = 0;
};

// A workload's begin and end ticks on the reported clock: CLOCK_MONOTONIC with a calibration,
// else the device's own nanoseconds. Nullopt when a calibrated time would be negative (ticks from
// before the calibration point by more than the host clock's whole range: garbage).
std::optional<GpuInterval> interval(uint64_t begin_ticks, uint64_t end_ticks, const TickFormat& f,
                                    const std::optional<Calibration>& calibration);

} // namespace vkscope::timing
