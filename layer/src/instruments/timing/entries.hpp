#pragma once
// A workload instance's two timer queries, taken from the instances the queue's interpreter paired
// (timing's marks): a split render pass pairs the start written in the command buffer that began
// it with the end written in the one that ended it. An instance without both says why.

#include "instruments/timing/timestamp.hpp"
#include "timeline/instrument.hpp"

#include <cstddef>
#include <cstdint>
#include <vector>

namespace vkscope::timing {

struct TimingEntry {
    uint64_t submit = 0; // the instance is submit.tag
    uint64_t tag = 0;
    Timestamp begin;
    Timestamp end;
    const char* untimed = nullptr; // why begin or end is missing
    // Its timestamps ran more than once before anyone could read them (a secondary executed
    // twice): the values left are the last run's, so none are reported.
    bool ambiguous = false;
};

// Timing's entry for an instance whose marks hold timing's at `slot`.
TimingEntry entry_of(const timeline::MarkedInstance& instance, size_t slot);

// Marks entries of `later` whose timestamps some entry of `earlier` (or an earlier entry of
// `later`) already uses: the same recorded queries run twice before a read. The first user is
// flagged ambiguous and the repeat dropped (both executions are one instance).
void mark_repeats(std::vector<TimingEntry>& earlier, std::vector<TimingEntry>& later);

} // namespace vkscope::timing
