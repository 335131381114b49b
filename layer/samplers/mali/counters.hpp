#pragma once
// The counters the mali sampler reads through Arm's libGPUCounters: what a workload's cost on an
// Arm GPU is made of (cycles the GPU was busy, memory traffic, geometry, shader threads). Every
// one is a count of events, so the difference of two running totals is what a workload did.
//
// Only counters that are plain sums are listed: libGPUCounters' rates and utilisations are
// ratios over its own sample interval and would not add up over workloads (the host derives
// such ratios from the sums). A counter the GPU in hand does not have is left out when the
// sampler opens.

#include "vkscope/sampler.h"

#include <hwcpipe/hwcpipe_counter.h>

#include <span>

namespace vkscope::mali {

struct MaliCounter {
    hwcpipe_counter id;
    vkscope_sampler_counter info;
};

std::span<const MaliCounter> wanted_counters();

} // namespace vkscope::mali
