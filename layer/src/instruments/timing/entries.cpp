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

void mark_repeats(std::vector<TimingEntry>& earlier, std::vector<TimingEntry>& later) {
    auto first_user = [](std::vector<TimingEntry>& list, size_t n, Timestamp ts) -> TimingEntry* {
        for (size_t i = 0; i < n; ++i) {
            if (list[i].begin == ts) {
                return &list[i];
            }
        }
        return nullptr;
    };
    size_t kept = 0;
    for (size_t i = 0; i < later.size(); ++i) {
        TimingEntry& e = later[i];
        TimingEntry* user = nullptr;
        if (e.begin) {
            user = first_user(earlier, earlier.size(), e.begin);
            if (!user) {
                user = first_user(later, kept, e.begin);
            }
        }
        if (user) {
            user->ambiguous = true;
            if (user->submit == e.submit && user->tag == e.tag) {
                continue; // one instance executed twice: one entry says it
            }
            e.ambiguous = true;
        }
        later[kept++] = e;
    }
    later.resize(kept);
}

} // namespace vkscope::timing
