#include "instruments/performance_query/recording.hpp"

#include "protocol.gen.hpp"
#include "timeline/device.hpp"

namespace vkscope::performance_query {
namespace {

using Reason = protocol::CountersReason;

const char* why(Reason r) {
    return protocol::name(r);
}

} // namespace

void PerfRecording::begin(const timeline::RecordingStart& start) {
    release();
    one_time_ = start.one_time_submit;
    if (!start.frame_selected) {
        why_ = why(Reason::outside_frame);
    } else if (!start.primary) {
        // The queue resets a recording's pool before it is submitted, which it cannot do for
        // a secondary's (executed from a primary that may be recorded later).
        why_ = why(Reason::secondary_command_buffer);
    } else if (start.family == UINT32_MAX) {
        why_ = why(Reason::unknown_pool);
    } else if (const FamilyPlan* plan = device_.plan(start.family); !plan) {
        why_ = why(Reason::counter_not_offered);
    } else {
        // The frame's place in the pass cycle picks the counters: frame f collects pass f mod N
        // of its family (a family with fewer passes repeats its own).
        const uint64_t frame = timeline_.frame.load(std::memory_order_relaxed);
        pass_ = static_cast<uint32_t>((frame % device_.cycle()) % plan->passes.size());
        pools_ = device_.pools(start.family, pass_);
        why_ = pools_ ? nullptr : why(Reason::no_query_pool);
        if (pools_ && plan->command_buffer_scope(pass_)) {
            // One performance pool per recording (VUID 03226): in a frame of COMMAND_BUFFER
            // scope that is the whole command buffer's query, whatever comes later.
            why_ = why(Reason::command_buffer_scope_frame);
            command_buffer_query_.begin(device_, *pools_, block_, handle_);
        } else if (pools_ && plan->whole_passes > 0 && !start.one_time_submit &&
                   !device_.records_anew(command_pool_)) {
            // A command buffer that may be submitted again takes the whole selection's pool.
            if (QueryPoolCache* whole = device_.whole_pools(start.family)) {
                pools_ = whole;
                whole_passes_ = plan->whole_passes;
            }
        }
    }
}

void PerfRecording::end() {
    command_buffer_query_.end(device_, block_, handle_);
}

void PerfRecording::execute(std::span<timeline::InstrumentRecording* const>, bool) {
    command_buffer_query_.executed();
}

void PerfRecording::release() {
    // Recorded anew (or reset, or freed) before its submissions could run every pass of the
    // whole selection: its command pool's later recordings take one frame's pass each.
    const bool short_lived = submissions_ > 0 && !one_time_ &&
                             (whole_passes_ > 0 ? submissions_ < whole_passes_ : submissions_ == 1);
    if (short_lived && device_.cycle() > 1) {
        device_.saw_recorded_anew(command_pool_);
    }
    submissions_ = 0;
    whole_passes_ = 0;
    ran_ = 0;
    set_generation = 0;
    set_waiting.clear();
    set_submissions = 0;
    command_buffer_query_.release();
    if (pools_ && block_) {
        std::vector<QueryBlock*> blocks{block_};
        pools_->release(blocks);
    }
    block_ = nullptr;
    pools_ = nullptr;
    open_ = {};
}

const char* PerfRecording::left_out() const {
    return why(Reason::budget);
}

const char* PerfRecording::unmarked() const {
    return why_ ? why_ : why(Reason::no_query_pool);
}

uint32_t PerfRecording::next_pass() const {
    for (uint32_t p = 0; p < whole_passes_; ++p) {
        if ((ran_ & (1u << p)) == 0) {
            return p;
        }
    }
    return 0;
}

PerfRecording::PassRun PerfRecording::run_pass(uint32_t pass) {
    PassRun out;
    const uint32_t bit = 1u << pass;
    const uint32_t all = whole_passes_ >= 32 ? ~0u : (1u << whole_passes_) - 1;
    if (ran_ == 0 || (ran_ & bit) != 0) {
        out.starts = true;
        ran_ = 0;
        set_waiting.clear();
        set_submissions = 0;
    }
    ran_ |= bit;
    ++set_submissions;
    out.completes = ran_ == all;
    return out;
}

timeline::Mark PerfRecording::start() {
    if (why_) {
        return timeline::Mark::none(why_);
    }
    if (!block_) {
        block_ = pools_->acquire();
    }
    // One pool per command buffer: past its slots, the rest of the recording goes uncounted.
    if (!block_ || block_->used >= QueryBlock::kSlots) {
        return timeline::Mark::none(why(Reason::no_query_pool));
    }
    const uint32_t slot = block_->used++;
    device_.next.CmdBeginQuery(handle_, block_->pool, slot, 0);
    open_ = timeline::Mark::at(block_, slot);
    return open_;
}

timeline::Mark PerfRecording::start_render_pass(const timeline::RenderPassStart& how) {
    if (why_) {
        return timeline::Mark::none(why_);
    }
    if (how.suspending) {
        return timeline::Mark::none(why(Reason::split_render_pass));
    }
    if (how.secondaries) {
        return timeline::Mark::none(why(Reason::secondary_without_inherited_queries));
    }
    return start();
}

timeline::Mark PerfRecording::finish() {
    if (!open_) {
        return timeline::Mark::none(why_ ? why_ : why(Reason::split_render_pass));
    }
    const timeline::Mark done = open_;
    device_.next.CmdEndQuery(handle_, block_->pool, done.index());
    open_ = {};
    return done;
}

} // namespace vkscope::performance_query
