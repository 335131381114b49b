#pragma once
// A workload instance's two timer queries, taken from the instances the queue's interpreter paired
// (timing's marks): a split render pass pairs the start written in the command buffer that began
// it with the end written in the one that ended it. An instance without both says why.

#include "core/query_reads.hpp"
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

// Appends `e` to `list`, whose entries from `from` on are those since the last read, unless its
// begin timestamp is one an entry there already uses: the same recorded queries run twice before
// a read. The first user is then flagged ambiguous, and `e` too, or `e` is dropped when both are
// one instance executed twice. `reads` has seen the begins of those entries (only a repeat looks
// through them), and counts the blocks of each entry with both timestamps.
void append_entry(QueryReads& reads, std::vector<TimingEntry>& list, size_t from,
                  const TimingEntry& e);

// append_entry for each entry of `later`, after `earlier`: `later` keeps those appended.
void mark_repeats(std::vector<TimingEntry>& earlier, std::vector<TimingEntry>& later);

} // namespace vkscope::timing
