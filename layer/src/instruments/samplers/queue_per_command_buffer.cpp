// The handover queue where samples are taken per application command buffer: the submission is
// taken apart (timeline/split_submit.hpp) and a sample taken before the first command buffer and
// after each one completes.

#include "core/wire_format.hpp"
#include "instruments/samplers/queue.hpp"
#include "timeline/device.hpp"

#include <map>

namespace vkscope::samplers {

bool HandoverQueue::splits() const {
    if (!per_command_buffer() || !active_ || blocked_ || parts_.empty()) {
        return false;
    }
    const uint64_t frame = queue_.device.frame.load(std::memory_order_relaxed);
    return device_.gave_up_frame.load(std::memory_order_relaxed) != frame;
}

void HandoverQueue::split_point(size_t index, bool completed) {
    const size_t width = device_.samplers.counters().size();
    if (index == 0) {
        sampling_ = std::unique_lock(device_.sampling);
        rows_.assign(parts_.size() + 1, why(Reason::not_available));
        samples_.assign(rows_.size() * width, 0.0);
    }
    if (index >= rows_.size()) {
        return;
    }
    if (!completed) {
        rows_[index] = why(Reason::batch_kept_whole);
        return;
    }
    rows_[index] = device_.samplers.sample(samples_.data() + index * width)
                       ? nullptr
                       : why(Reason::sample_failed);
}

void HandoverQueue::resolve_per_command_buffer() {
    const std::vector<SamplerCounter>& counters = device_.samplers.counters();
    const size_t width = counters.size();
    const char* unsplit = blocked_ ? blocked_ : why(Reason::handover_gave_up);
    if (rows_.size() != parts_.size() + 1) {
        rows_.assign(parts_.size() + 1, unsplit); // the call was not taken apart
    }
    // Why command buffer `part` has no values, or null.
    const auto missing = [&](size_t part) -> const char* {
        if (parts_[part].why) {
            return parts_[part].why;
        }
        return rows_[part] ? rows_[part] : rows_[part + 1];
    };
    std::map<size_t, size_t> per_part;
    for (const Instance& i : instances_) {
        ++per_part[i.part];
    }
    std::vector<std::pair<uint64_t, uint64_t>> seen;
    std::map<size_t, bool> given; // command buffers whose values went out
    JsonWriter json;
    bool clock_changed = false;
    const auto values = [&](size_t part) {
        json.begin_object();
        for (size_t c = 0; c < width; ++c) {
            const double before = samples_[part * width + c];
            const double after = samples_[(part + 1) * width + c];
            json.field(counters[c].name,
                       counters[c].kind == VKSCOPE_COUNTER_CUMULATIVE ? after - before : after);
            clock_changed =
                clock_changed || (counters[c].kind == VKSCOPE_COUNTER_CLOCK && after != before);
        }
        json.end_object();
    };
    for (const Instance& i : instances_) {
        const char* reason = i.begin.why() ? i.begin.why() : i.end.why();
        if (!reason && (i.never_ended || i.begin.object() != i.end.object())) {
            reason = why(Reason::split_render_pass);
        }
        if (!reason && i.part < parts_.size()) {
            reason = missing(i.part);
        }
        json.clear();
        json.begin_object();
        clock_changed = false;
        if (reason) {
            json.key("counters").null().field("counters_reason", reason);
        } else if (per_part[i.part] == 1) {
            json.key("counters");
            values(i.part);
        } else {
            json.key("counters")
                .null()
                .field("counters_reason", why(Reason::command_buffer_granularity));
            if (!given[i.part]) {
                given[i.part] = true;
                json.key("command_buffer_counters");
                values(i.part);
            }
        }
        if (clock_changed) {
            json.field("clock_changed", true);
        }
        json.end_object();
        annexes_.push_back(Annex{i.submit, i.tag, std::string(json.view())});
        seen.emplace_back(i.submit, i.tag);
    }
    add_unseen(seen);
}

} // namespace vkscope::samplers
