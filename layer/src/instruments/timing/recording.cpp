#include "instruments/timing/recording.hpp"

#include <utility>

namespace vkscope::timing {

void RecordingTiming::begin(QueryPoolCache* cache, Mode mode, const char* untimed, bool one_run) {
    release();
    cache_ = cache;
    mode_ = mode;
    one_run_ = one_run;
    untimed_ = cache ? untimed : reason::kNoQueryPool;
}

void RecordingTiming::release() {
    if (cache_) {
        arena_.release(*cache_);
    }
    chain_ = {};
    end_ = {};
}

Timestamp RecordingTiming::write(TimestampWriter& writer, bool top_of_pipe, uint32_t count) {
    const auto slots = arena_.take(*cache_, count);
    if (!slots) {
        chain_ = {};
        return {};
    }
    if (slots->fresh) {
        slots->block->one_run = one_run_;
        // Reset in the command buffer, not on the host: a recording submitted again must find its
        // queries reset each time it runs.
        writer.reset(slots->block->pool, 0, QueryBlock::kSlots);
    }
    writer.write(slots->block->pool, slots->first, top_of_pipe);
    if (mode_ != Mode::none) {
        writer.barrier();
    }
    return Timestamp{slots->block, slots->first};
}

// A new block's reset runs where the command buffer takes the block: never between a workload's
// two timestamps, where the GPU would count it as the workload's time (on an H200 a reset added
// some 3 µs to every 64th workload). So a start of its own takes its end's slot with it, in one
// block, and a shared start is never the last slot of a block.
Timestamp RecordingTiming::start(TimestampWriter& writer) {
    if (!active()) {
        return {};
    }
    if (chain_) {
        const Timestamp shared = chain_;
        chain_ = {};
        return shared;
    }
    const Timestamp ts = write(writer, mode_ == Mode::none, 2);
    end_ = ts ? Timestamp{ts.block, ts.slot + 1} : Timestamp{};
    return ts;
}

Timestamp RecordingTiming::finish(TimestampWriter& writer) {
    if (!active()) {
        return {};
    }
    Timestamp end;
    if (end_) {
        end = std::exchange(end_, Timestamp{});
        writer.write(end.block->pool, end.slot, false);
        if (mode_ != Mode::none) {
            writer.barrier();
        }
    } else {
        // (after a shared start, in its block: the slot after it is there)
        end = write(writer, false, 1);
    }
    chain_ = end && end.slot + 1 < QueryBlock::kSlots ? end : Timestamp{};
    return end;
}

} // namespace vkscope::timing
