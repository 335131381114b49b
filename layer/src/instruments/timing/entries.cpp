#include "instruments/timing/entries.hpp"

#include "instruments/timing/mode.hpp"

namespace vkscope::timing {

void mark_untimed(TimingEntry& e, const InstanceMarks& instance) {
    using Ending = timeline::MarkedInstance::Ending;
    const timeline::Mark& begin = instance.begin;
    // The recording's own reason when it wrote no start (recorded outside a captured frame,
    // ...); otherwise what went wrong after it.
    const char* fallback = instance.ending == Ending::never         ? reason::kNotEnded
                           : instance.ending == Ending::render_pass ? reason::kSplitPartUntimed
                                                                    : nullptr;
    e.untimed = !e.begin && begin.why() ? begin.why() : fallback;
    e.begin = {};
    e.end = {};
}

void append_repeat(std::vector<TimingEntry>& list, size_t from, const TimingEntry& e) {
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
