#pragma once
// The timer floor's samples from the query results of its measurement (floor.hpp): pure, so
// the unit tests check the layout and the arithmetic without a device.

#include "instruments/timing/mode.hpp"
#include "timeline/messages.hpp"

#include <cstdint>
#include <span>

namespace vkscope::timing {

// Sent in the DEVICE message as measured (timeline/messages.hpp).
using FloorSamples = timeline::TimerFloorDescription;

// Empty workloads (and back-to-back pairs) measured per queue family.
inline constexpr uint32_t kFloorRepeats = 32;

// Query slots the measurement writes in `mode`: the back-to-back pairs first, then the empty
// workloads (a chain of shared timestamps with serialization, a TOP/BOTTOM pair each without).
uint32_t floor_slots(Mode mode, uint32_t repeats);

// Pure: the samples of one run from its query results (`results`, floor_slots() of them).
FloorSamples floor_samples(uint32_t family, Mode mode, std::span<const uint64_t> results,
                           uint32_t valid_bits, uint32_t repeats);

} // namespace vkscope::timing
