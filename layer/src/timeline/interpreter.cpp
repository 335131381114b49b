#include "timeline/interpreter.hpp"

#include <thread>

namespace vkscope::timeline {
namespace {

// The cost budget left it out of every instrument, and the timeline sends its annexes.
bool left_out_of(const SubmitRecord& out, const Workload& w) {
    return out.skip_left_out && w.measured == 0;
}

} // namespace

bool claim_send_contended(Workload& w, const InterpreterSink& sink) {
    uint8_t state = w.sent.load(std::memory_order_acquire);
    while (state != 2) {
        if (state == 0 && w.sent.compare_exchange_weak(state, 1, std::memory_order_acq_rel)) {
            return true;
        }
        if (state == 1 && sink.holds(w)) {
            return false;
        }
        // Another queue is sending it right now; its SUBMIT must not overtake the WORKLOAD.
        std::this_thread::yield();
        state = w.sent.load(std::memory_order_acquire);
    }
    return false;
}

void mark_sent(Workload& w) {
    w.sent.store(2, std::memory_order_release);
}

void Interpreter::queue_label_begin(std::string_view name, InterpreterSink& sink) {
    stack_.push_back(labels_.push(label_stack(), name, sink));
}

void Interpreter::queue_label_end() {
    if (!stack_.empty()) {
        stack_.pop_back();
    }
}

QueueShape Interpreter::shape() const {
    QueueShape s;
    s.labels = stack_.size();
    s.open = open_.has_value();
    s.open_tagged = open_ && open_->workload->tagged;
    s.open_counts = open_ && (!open_->counts.empty());
    s.part = part_.get();
    return s;
}

bool Interpreter::scan(const CommandStream& stream, bool quiet, QueueShape& shape,
                       uint32_t& deferred_tag_ends, bool* measures) {
    // Mirrors run(): what it does to stack_, open_ and part_, and where it adds readbacks.
    // Draw counts may end up read back whatever the frame (an instance begun in a captured one).
    if (shape.open_counts) {
        return false;
    }
    for (const Command& c : stream) {
        switch (c.op) {
        case Op::marker_begin:
            ++shape.labels;
            break;
        case Op::marker_end:
            shape.labels -= shape.labels > 0 ? 1 : 0;
            break;
        case Op::render_pass_begin:
            if (!c.part->counts.empty()) {
                return false;
            }
            if (measures && c.workload->measured != 0) {
                *measures = true;
            }
            shape.open = true;
            shape.open_tagged = c.workload->tagged;
            shape.part = c.part.get();
            break;
        case Op::render_pass_resume:
            if (!c.part->counts.empty()) {
                return false;
            }
            shape.part = c.part.get();
            break;
        case Op::workload_end:
            if (shape.part) {
                if (!shape.part->suspending && shape.open) {
                    if (shape.part->tag_end_deferred && shape.open_tagged) {
                        ++deferred_tag_ends;
                    }
                    shape.open = false;
                    shape.open_tagged = false;
                }
                shape.part = nullptr;
            }
            break;
        case Op::indirect_readback:
            if (!quiet) {
                return false;
            }
            break;
        case Op::compute_dispatch_begin:
        case Op::trace_rays_begin:
        case Op::buffer_transfer_begin:
        case Op::image_transfer:
        case Op::acceleration_structure_begin:
            if (measures && c.workload->measured != 0) {
                *measures = true;
            }
            break;
        }
    }
    return true;
}

void Interpreter::run(const CommandStream& stream, InterpreterSink& sink, SubmitRecord& out) {
    // A workload outside render passes begins and ends in one command buffer.
    running_ = {};
    for (const Command& c : stream) {
        switch (c.op) {
        case Op::marker_begin:
            stack_.push_back(labels_.push(label_stack(), *c.label, sink));
            break;
        case Op::marker_end:
            // An end without a begin is the application's error; the stack stays empty.
            if (!stack_.empty()) {
                stack_.pop_back();
            }
            break;
        case Op::render_pass_begin:
            if (open_) {
                // Suspended and never resumed: report what there was.
                paired(*open_->workload, open_->submit, open_->begin, {},
                       MarkedInstance::Ending::never, out);
                finish(*open_, sink, out);
            }
            started(c.workload, sink, out);
            open_ = Instance{c.workload,          out.submit,         c.part->draws, c.part->counts,
                             c.part->counts_lost, stream.marks_of(c), out.quiet};
            part_ = c.part;
            break;
        case Op::render_pass_resume:
            part_ = c.part;
            if (open_) {
                open_->draws += c.part->draws;
                open_->counts.insert(open_->counts.end(), c.part->counts.begin(),
                                     c.part->counts.end());
                open_->counts_lost = open_->counts_lost || c.part->counts_lost;
            }
            break;
        case Op::compute_dispatch_begin:
        case Op::trace_rays_begin:
        case Op::buffer_transfer_begin:
        case Op::image_transfer:
        case Op::acceleration_structure_begin:
            started(c.workload, sink, out);
            running_ = Running{c.workload.get(), out.submit, c.marks};
            break;
        case Op::workload_end:
            if (part_) {
                if (!part_->suspending && open_) {
                    if (part_->tag_end_deferred && open_->workload->tagged) {
                        ++out.deferred_tag_ends;
                    }
                    paired(*open_->workload, open_->submit, open_->begin, stream.marks_of(c),
                           MarkedInstance::Ending::render_pass, out);
                    finish(*open_, sink, out);
                    open_.reset();
                }
                part_.reset();
            } else if (running_.workload) {
                paired(*running_.workload, running_.submit, stream, running_.begin, c.marks, out);
                running_ = {};
            }
            break;
        case Op::indirect_readback: {
            if (out.quiet) {
                break;
            }
            Readback readback;
            readback.submit = out.submit;
            readback.workload = c.workload;
            readback.copies.push_back(c.copy);
            add_readback(std::move(readback), out);
        } break;
        }
    }
}

void Interpreter::started(const std::shared_ptr<Workload>& w, InterpreterSink& sink,
                          SubmitRecord& out) {
    if (out.quiet) {
        return;
    }
    if (out.describe && claim_send(*w, sink) && sink.workload(w)) {
        mark_sent(*w);
    }
    const bool left_out = left_out_of(out, *w);
    out.left_out += left_out ? 1 : 0;
    out.workloads.push_back(SubmittedWorkload{w->tag, label_stack(), left_out});
}

void Interpreter::paired(const Workload& w, uint64_t submit, const Marks& begin, const Marks& end,
                         MarkedInstance::Ending ending, SubmitRecord& out) {
    if (out.pair_marks && !left_out_of(out, w)) {
        out.instances.push_back(MarkedInstance{submit, w.tag, begin, end, ending});
    }
}

void Interpreter::paired(const Workload& w, uint64_t submit, const CommandStream& stream,
                         uint32_t begin, uint32_t end, SubmitRecord& out) {
    if (!out.pair_marks || left_out_of(out, w)) {
        return;
    }
    MarkedInstance& m = out.instances.emplace_back();
    m.submit = submit;
    m.tag = w.tag;
    m.ending = MarkedInstance::Ending::workload;
    for (size_t i = 0; i < stream.width; ++i) {
        if (begin != kNoMarks) {
            m.begin[i] = stream.marks[begin + i];
        }
        if (end != kNoMarks) {
            m.end[i] = stream.marks[end + i];
        }
    }
}

void Interpreter::add_readback(Readback readback, SubmitRecord& out) {
    for (Readback& earlier : out.readbacks) {
        for (const ParameterCopy& a : earlier.copies) {
            for (const ParameterCopy& b : readback.copies) {
                if (a.slot == b.slot) {
                    earlier.ambiguous = true;
                    return;
                }
            }
        }
    }
    out.readbacks.push_back(std::move(readback));
}

void Interpreter::finish(Instance& instance, InterpreterSink& sink, SubmitRecord& out) {
    const Workload& w = *instance.workload;
    if (instance.quiet) {
        return; // no SUBMIT names the instance
    }
    if (!w.split && instance.counts.empty() && !instance.counts_lost) {
        return; // the WORKLOAD message says it all
    }
    if (instance.counts.empty()) {
        sink.draws_annex(instance.submit, w.tag,
                         instance.counts_lost ? std::nullopt : std::optional(instance.draws));
        return;
    }
    Readback readback;
    readback.submit = instance.submit;
    readback.workload = instance.workload;
    readback.copies = std::move(instance.counts);
    readback.draws = instance.draws;
    readback.counts_lost = instance.counts_lost;
    add_readback(std::move(readback), out);
}

} // namespace vkscope::timeline
