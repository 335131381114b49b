#pragma once
// A workload instance's two timer queries, taken from the instances the queue's interpreter paired
// (timing's marks): a split render pass pairs the start written in the command buffer that began
// it with the end written in the one that ended it. An instance without both says why.

#include "core/query_reads.hpp"
#include "instruments/timing/timestamp.hpp"
#include "timeline/instrument.hpp"
#include "timeline/paired_instances.hpp"

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

using timeline::InstanceMarks;
using timeline::marks_of;

// Why an instance without both of timing's timestamps (or never ended) is untimed; clears them.
void mark_untimed(TimingEntry& e, const InstanceMarks& instance);

// Timing's entry for an instance. Inline, as append_entry(): both run for every workload
// instance a submission times (on the readback thread), and a call each was a fifth of that.
[[gnu::always_inline]] inline TimingEntry entry_of(const InstanceMarks& instance) {
    TimingEntry e{
        instance.submit, instance.tag, timestamp_of(instance.begin), timestamp_of(instance.end),
        nullptr,         false};
    if (!e.begin || !e.end || instance.ending == timeline::MarkedInstance::Ending::never) {
        mark_untimed(e, instance);
    }
    return e;
}

// The same for an instance whose marks hold timing's at `slot`.
inline TimingEntry entry_of(const timeline::MarkedInstance& instance, size_t slot) {
    return entry_of(marks_of(instance, slot));
}

// append_entry() for an entry whose begin timestamp an entry since the last read already uses.
void append_repeat(std::vector<TimingEntry>& list, size_t from, const TimingEntry& e);

// Appends `e` to `list`, whose entries from `from` on are those since the last read, unless its
// begin timestamp is one an entry there already uses: the same recorded queries run twice before
// a read. The first user is then flagged ambiguous, and `e` too, or `e` is dropped when both are
// one instance executed twice. `reads` has seen the begins of those entries (only a repeat looks
// through them), and counts the blocks of each entry with both timestamps.
[[gnu::always_inline]] inline void append_entry(QueryReads& reads, std::vector<TimingEntry>& list,
                                                size_t from, const TimingEntry& e) {
    const bool timed = e.begin && e.end;
    if (timed && e.end.block != e.begin.block) {
        reads.add(e.end.block);
    }
    if (!e.begin || reads.first_use(e.begin.block, e.begin.slot, timed)) {
        list.push_back(e);
        return;
    }
    append_repeat(list, from, e);
}

// append_entry for each entry of `later`, after `earlier`: `later` keeps those appended.
void mark_repeats(std::vector<TimingEntry>& earlier, std::vector<TimingEntry>& later);

} // namespace vkscope::timing
