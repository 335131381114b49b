#include "timeline/recorder.hpp"

#include "core/cycle_counter.hpp"
#include "timeline/ids.hpp"

#include <algorithm>

namespace vkscope::timeline {

namespace {

Command command(Op op, std::shared_ptr<Workload> workload = {},
                std::shared_ptr<RenderPassPart> part = {}) {
    Command c;
    c.op = op;
    c.workload = std::move(workload);
    c.part = std::move(part);
    return c;
}

// Most command buffers hold fewer layer commands than this; reserving once keeps recording free
// of reallocations, and reset() keeps the capacity for the next recording.
constexpr size_t kReservedCommands = 256;
constexpr size_t kReservedDeferred = 64;

} // namespace

Recorder::Recorder() : commands_(std::make_shared<std::vector<Command>>()) {
    commands_->reserve(kReservedCommands);
    deferred_.reserve(kReservedDeferred);
}

void Recorder::begin(bool primary, bool one_time_submit, RecordOptions options) {
    reset();
    options_ = options;
    if (!options_.instruments.empty() && marks_.capacity() == 0) {
        marks_.reserve(2 * kReservedCommands * options_.instruments.size());
    }
    for (size_t i = 0; i < options_.instruments.size(); ++i) {
        deferred_marks_[i] = Mark::none(options_.instruments[i]->unmarked());
    }
    primary_ = primary;
    one_time_ = one_time_submit;
    // A recording submitted more than once runs the same tags each time.
    needs_submit_label_ = !one_time_submit;
}

void Recorder::reset() {
    if (pinned_.exchange(false, std::memory_order_relaxed)) {
        // The interpretation worker may still read the last recording (pinned_commands()): it
        // keeps that storage, whoever lets go of it last frees it, and this recording starts
        // its own, as large as the last one needed. Whether the worker is done is not asked:
        // the answer would have to synchronize with its thread.
        const size_t last = commands_->size();
        commands_ = std::make_shared<std::vector<Command>>();
        commands_->reserve(std::max(kReservedCommands, last));
    } else {
        commands_->clear();
    }
    marks_.clear();
    mark_objects_.clear();
    last_objects_.fill(nullptr);
    deferred_.clear();
    has_deferred_.store(false, std::memory_order_relaxed);
    draws_ = 0;
    part_.reset();
    part_suspends_ = false;
    suspended_.reset();
    pending_counts_.clear();
    current_.reset();
    continued_draws_ = 0;
    continued_counts_.clear();
    needs_submit_label_ = false;
    has_workloads_ = false;
    instrument_cycles_ = 0;
    depth_ = 0;
    foreign_end_ = false;
    current_tagged_ = false;
}

void Recorder::choose_with_options(Workload& w) {
    const InstrumentChoice choice = options_.choose(w, options_.choose_context);
    w.measured = choice.measured;
    w.precedes_measured = choice.precedes_measured;
}

uint32_t Recorder::timed_marks(bool start, const Workload* w, const RenderPassFlags* render_pass) {
    // A workload no instrument measures costs them a note each, as in a frame that measures
    // nothing: only the calls that write commands are timed, and only they pay the counter.
    if (w && w->measured == 0 && !w->precedes_measured) {
        return instrument_marks(start, w, render_pass);
    }
    const uint64_t before = cycle_count();
    const uint32_t at = instrument_marks(start, w, render_pass);
    instrument_cycles_ += cycle_count() - before;
    return at;
}

uint32_t Recorder::instrument_marks(bool start, const Workload* w,
                                    const RenderPassFlags* render_pass) {
    if (w && w->measured != InstrumentChoice::kAll) {
        return chosen_marks(start, *w, render_pass);
    }
    const auto at = static_cast<uint32_t>(marks_.size());
    bool waited = false;
    uint32_t restart_below = 0;
    for (uint32_t slot = 0; slot < options_.instruments.size(); ++slot) {
        InstrumentRecording& instrument = *options_.instruments[slot];
        if (waited) {
            instrument.interrupt(Interruption::event_wait);
        }
        if (render_pass) {
            const RenderPassStart how{render_pass->suspending, render_pass->secondaries};
            add_mark(slot, instrument.start_render_pass(how));
        } else {
            add_mark(slot, start ? instrument.start() : instrument.finish());
        }
        if ((start || render_pass) && instrument.waited()) {
            waited = true;
            restart_below = slot;
        }
    }
    restart(at, restart_below, InstrumentChoice::kAll);
    return at;
}

// The instruments before the last one whose start wrote commands of its own (a statistics
// query's begin, a query pool's reset) started before those commands: each may take a new start
// after them, whose object is noted like any mark's. Without such an instrument the start pays
// one compare.
void Recorder::restart(uint32_t at, uint32_t below, uint8_t measured) {
    for (uint32_t slot = 0; slot < below; ++slot) {
        if (measured & (1u << slot)) {
            const Mark m = options_.instruments[slot]->restart(marks_[at + slot]);
            marks_[at + slot] = m;
            note_object(MarkObject{m.object(), slot});
        }
    }
}

uint32_t Recorder::chosen_marks(bool start, const Workload& w, const RenderPassFlags* render_pass) {
    const auto at = static_cast<uint32_t>(marks_.size());
    const bool begins = start || render_pass;
    bool waited = false;
    uint32_t restart_below = 0;
    for (uint32_t slot = 0; slot < options_.instruments.size(); ++slot) {
        InstrumentRecording& instrument = *options_.instruments[slot];
        Mark m = Mark::none(instrument.left_out());
        if (w.measured & (1u << slot)) {
            if (waited) {
                instrument.interrupt(Interruption::event_wait);
            }
            if (render_pass) {
                m = instrument.start_render_pass(
                    {render_pass->suspending, render_pass->secondaries});
            } else {
                m = start ? instrument.start() : instrument.finish();
            }
            if (begins && instrument.waited()) {
                waited = true;
                restart_below = slot;
            }
        } else if (begins) {
            instrument.interrupt(Interruption::left_out);
        } else if (w.precedes_measured) {
            instrument.start_ahead();
        }
        add_mark(slot, m);
    }
    restart(at, restart_below, w.measured);
    return at;
}

void Recorder::copying() {
    for (const auto& instrument : options_.instruments) {
        instrument->interrupt(Interruption::parameter_copy);
    }
}

void Recorder::tag_begin(RecordSink& sink, uint64_t tag) {
    sink.begin_tag(tag);
    ++depth_;
}

void Recorder::tag_end(RecordSink& sink) {
    sink.end_tag();
    label_ended();
}

void Recorder::label_ended() {
    if (depth_ == 0) {
        foreign_end_ = true;
    } else {
        --depth_;
    }
}

void Recorder::end() {
    flush_draws();
    if (suspended_) {
        // The instance continues in a later command buffer: its totals are only known when a
        // submission puts the pieces together, so they come as an annex.
        suspended_->suspending = true;
        if (!pending_counts_.empty()) {
            // Copies are not allowed between a suspension and its resumption.
            suspended_->counts_lost = true;
            pending_counts_.clear();
        }
        if (const auto& w = suspended_->workload) {
            w->split = true;
            w->draws = suspended_->draws;
        }
        commands_->push_back(command(Op::workload_end));
        needs_submit_label_ = true;
        suspended_.reset();
    }
}

void Recorder::marker_begin(std::string_view name) {
    Command c = command(Op::marker_begin);
    c.label = std::make_shared<const std::string>(name);
    commands_->push_back(std::move(c));
    ++depth_;
}

void Recorder::marker_end() {
    commands_->push_back(command(Op::marker_end));
    label_ended();
}

Workload& Recorder::begin_workload(WorkloadType type, RecordSink& sink,
                                   const ParameterRequest* indirect, ParameterKind kind) {
    auto w = std::make_shared<Workload>();
    w->tag = next_tag();
    w->type = type;
    has_workloads_ = true;
    ParameterSlot* slot = nullptr;
    if (indirect) {
        copying();
        sink.copy_parameters({indirect, 1}, {&slot, 1});
    }
    w->tagged = can_tag();
    if (w->tagged) {
        tag_begin(sink, w->tag);
    }
    current_tagged_ = w->tagged;
    choose(*w);
    Command begin = command(begin_op(type), w);
    begin.marks = mark(true, w.get());
    commands_->push_back(std::move(begin));
    if (slot) {
        // Only a submission can name the instance its parameters belong to.
        needs_submit_label_ = true;
        Command c = command(Op::indirect_readback, w);
        c.copy = ParameterCopy{slot, kind, 0};
        commands_->push_back(std::move(c));
    }
    current_ = std::move(w);
    return *current_;
}

void Recorder::end_workload(RecordSink& sink) {
    if (!current_) {
        return;
    }
    Command end = command(Op::workload_end);
    end.marks = mark(false, current_.get());
    if (current_tagged_) {
        tag_end(sink);
    }
    commands_->push_back(std::move(end));
    current_.reset();
}

void Recorder::materialize() const {
    if (!has_deferred_.load(std::memory_order_acquire)) {
        return;
    }
    std::lock_guard lock(materialize_mutex_);
    if (!has_deferred_.load(std::memory_order_relaxed)) {
        return;
    }
    std::vector<Command>& old = *commands_;
    // A pinned stream (pinned_commands()) is read by the worker meanwhile: copied from, not
    // moved out of.
    const bool pinned = pinned_.load(std::memory_order_relaxed);
    const auto take = [&](size_t i) { return pinned ? Command(old[i]) : std::move(old[i]); };
    auto merged = std::make_shared<std::vector<Command>>();
    merged->reserve(commands_->size() + 2 * deferred_.size());
    // Every logged workload says the same: one set of marks for all of them.
    uint32_t deferred_marks = kNoMarks;
    if (!options_.instruments.empty()) {
        deferred_marks = static_cast<uint32_t>(marks_.size());
        marks_.insert(marks_.end(), deferred_marks_.begin(),
                      deferred_marks_.begin() + options_.instruments.size());
    }
    size_t next = 0;
    for (const LoggedWorkload& d : deferred_) {
        for (; next < d.position; ++next) {
            merged->push_back(take(next));
        }
        auto w = std::make_shared<Workload>();
        static_cast<WorkloadInfo&>(*w) = d.info();
        w->device = options_.device;
        // Taken now rather than while recording: tags stay unique, and a recording that is never
        // materialized costs no tag.
        w->tag = next_tag();
        w->type = d.type;
        w->tagged = false;
        Command begin = command(begin_op(d.type), std::move(w));
        begin.marks = deferred_marks;
        merged->push_back(std::move(begin));
        merged->push_back(command(Op::workload_end));
    }
    for (; next < commands_->size(); ++next) {
        merged->push_back(take(next));
    }
    commands_ = std::move(merged);
    deferred_.clear();
    has_deferred_.store(false, std::memory_order_release);
}

void Recorder::begin_render_pass(std::string fields, RenderPassFlags flags, RecordSink& sink) {
    flush_draws();
    if (flags.resuming && suspended_) {
        // Resumed in the command buffer that suspended it: one part, as if never split.
        part_ = std::move(suspended_);
    } else if (flags.resuming) {
        part_ = std::make_shared<RenderPassPart>();
        commands_->push_back(command(Op::render_pass_resume, nullptr, part_));
        has_workloads_ = true;
        needs_submit_label_ = true;
    } else {
        auto w = std::make_shared<Workload>();
        w->tag = next_tag();
        w->type = WorkloadType::render_pass;
        w->fields = std::move(fields);
        w->tagged = can_tag();
        if (w->tagged) {
            tag_begin(sink, w->tag);
        }
        part_ = std::make_shared<RenderPassPart>();
        part_->workload = w;
        // Measured as a whole, from before its first begin: no instrument's command may go
        // between its draws, nor between a suspension and its resumption.
        choose(*w);
        Command begin = command(Op::render_pass_begin, w, part_);
        begin.marks = mark(true, w.get(), &flags);
        commands_->push_back(std::move(begin));
        has_workloads_ = true;
    }
    part_suspends_ = flags.suspending;
}

void Recorder::end_render_pass(RecordSink& sink) {
    if (!part_) {
        return;
    }
    flush_draws();
    if (part_suspends_) {
        // The tag stays open until the instance really ends.
        suspended_ = std::move(part_);
        return;
    }
    std::shared_ptr<RenderPassPart> part = std::move(part_);
    Command end = command(Op::workload_end);
    // A part resumed from another command buffer does not know the choice: every instrument.
    end.marks = mark(false, part->workload.get());
    commands_->push_back(std::move(end));
    if (part->workload) {
        part->workload->draws = part->draws;
        if (part->workload->tagged) {
            tag_end(sink);
        }
    } else if (options_.tags) {
        // The tag began with the instance, in an earlier command buffer.
        if (options_.defer_foreign_ends) {
            part->tag_end_deferred = true;
        } else {
            tag_end(sink);
        }
    }
    copy_counts(sink, *part);
}

void Recorder::count_indirect_draws(const ParameterRequest& count, uint32_t max_draws) {
    (part_ ? pending_counts_ : continued_counts_).push_back(PendingCount{count, max_draws});
}

void Recorder::execute(const Recorder& secondary) {
    secondary.materialize();
    if (secondary.marks_.empty()) {
        commands_->insert(commands_->end(), (*secondary.commands_).begin(),
                          (*secondary.commands_).end());
    } else {
        // The secondary's marks join this recording's table, its commands pointing at them there.
        const auto base = static_cast<uint32_t>(marks_.size());
        marks_.insert(marks_.end(), secondary.marks_.begin(), secondary.marks_.end());
        for (const MarkObject& o : secondary.mark_objects_) {
            note_object(o);
        }
        for (const Command& c : (*secondary.commands_)) {
            commands_->push_back(c);
            if (c.marks != kNoMarks) {
                commands_->back().marks += base;
            }
        }
    }
    if (secondary.has_workloads_) {
        has_workloads_ = true;
        needs_submit_label_ =
            needs_submit_label_ || secondary.needs_submit_label_ || !secondary.one_time_;
    }
    draws_ += secondary.continued_draws_;
    for (const PendingCount& count : secondary.continued_counts_) {
        count_indirect_draws(count.request, count.max_draws);
    }
}

void Recorder::flush_draws() {
    if (part_) {
        part_->draws += draws_;
    } else if (!primary_) {
        continued_draws_ += draws_;
    }
    draws_ = 0;
}

void Recorder::copy_counts(RecordSink& sink, RenderPassPart& part) {
    if (pending_counts_.empty()) {
        return;
    }
    std::vector<ParameterRequest> requests;
    requests.reserve(pending_counts_.size());
    for (const PendingCount& p : pending_counts_) {
        requests.push_back(p.request);
    }
    std::vector<ParameterSlot*> slots(requests.size(), nullptr);
    // Copies are illegal inside a render pass, so the counts are copied right after it: nothing
    // of the application's runs in between to change them.
    copying();
    sink.copy_parameters(requests, slots);
    for (size_t i = 0; i < slots.size(); ++i) {
        if (slots[i]) {
            part.counts.push_back(
                ParameterCopy{slots[i], ParameterKind::draw_count, pending_counts_[i].max_draws});
        } else {
            part.counts_lost = true;
        }
    }
    if (part.workload) {
        part.workload->draws_deferred = true;
    }
    needs_submit_label_ = true;
    pending_counts_.clear();
}

} // namespace vkscope::timeline
