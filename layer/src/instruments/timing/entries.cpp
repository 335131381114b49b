#include "instruments/timing/entries.hpp"

#include "instruments/timing/mode.hpp"

namespace vkscope::timing {

TimingEntry entry_of(const timeline::MarkedInstance& instance, size_t slot) {
    using Ending = timeline::MarkedInstance::Ending;
    const timeline::Mark& begin = instance.begin[slot];
    TimingEntry e{
        instance.submit, instance.tag, timestamp_of(begin), timestamp_of(instance.end[slot]),
        nullptr,         false};
    const bool ended = instance.ending != Ending::never;
    if (!e.begin || !e.end || !ended) {
        // The recording's own reason when it wrote no start (recorded outside a captured frame,
        // ...); otherwise what went wrong after it.
        const char* fallback = !ended                                   ? reason::kNotEnded
                               : instance.ending == Ending::render_pass ? reason::kSplitPartUntimed
                                                                        : nullptr;
        e.untimed = !e.begin && begin.why() ? begin.why() : fallback;
        e.begin = {};
        e.end = {};
    }
    return e;
}

void append_entry(QueryReads& reads, std::vector<TimingEntry>& list, size_t from,
                  const TimingEntry& e) {
    const bool timed = e.begin && e.end;
    if (timed && e.end.block != e.begin.block) {
        reads.add(e.end.block);
    }
    if (!e.begin || reads.first_use(e.begin.block, e.begin.slot, timed)) {
        list.push_back(e);
        return;
    }
    for (size_t i = from; i < list.size(); ++i) {
        TimingEntry& user = list[i];
        if (user.begin == e.begin) {
            user.ambiguous = true;
            if (user.submit == e.submit && user.tag == e.tag) {
                return; // one instance executed twice: one entry says it
            }
            break;
        }
    }
    list.push_back(e);
    list.back().ambiguous = true;
}

void mark_repeats(std::vector<TimingEntry>& earlier, std::vector<TimingEntry>& later) {
    QueryReads seen;
    for (const TimingEntry& e : earlier) {
        if (e.begin) {
            seen.first_use(e.begin.block, e.begin.slot);
        }
    }
    const size_t n = earlier.size();
    for (const TimingEntry& e : later) {
        append_entry(seen, earlier, 0, e);
    }
    later.assign(earlier.begin() + static_cast<std::ptrdiff_t>(n), earlier.end());
    earlier.resize(n);
}

} // namespace vkscope::timing
