#include "instruments/timing/recording.hpp"

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
}

Timestamp RecordingTiming::write(TimestampWriter& writer, bool top_of_pipe) {
    const auto slots = arena_.take(*cache_);
    if (!slots) {
        chain_ = {};
        return {};
    }
    uint32_t slot = slots->first;
    if (slots->fresh) {
        slots->block->one_run = one_run_;
        // Reset in the command buffer, not on the host: a recording submitted again must find its
        // queries reset each time it runs. One that runs once may have a block reset on the host
        // (QueryPoolCache).
        if (!(one_run_ && slots->clean)) {
            writer.reset(slots->block->pool, 0, QueryBlock::kSlots);
        }
        // The first timestamp written after a reset (measured after one in the command buffer)
        // takes the GPU longer to complete than the others (on an H200 some 2 µs, which the barrier
        // after it would count in the next workload's time): the block's first slot takes that one,
        // and is never read.
        writer.write(slots->block->pool, slot, false);
        if (const auto next = arena_.take(*cache_)) {
            slot = next->first;
        }
    }
    writer.write(slots->block->pool, slot, top_of_pipe);
    if (mode_ != Mode::none) {
        writer.barrier();
    }
    return Timestamp{slots->block, slot};
}

// A new block's reset runs where the recording takes the block: never between a workload's two
// timestamps, where the GPU would count it as the workload's time (on an H200 a reset added some
// 3 µs to every 63rd workload). So a workload's start is never a block's last slot: a start of
// its own in a block with one slot left fills that slot first (every slot taken is written, since
// a block's copy waits for all of them), and an end in a block's last slot is followed at once by
// the new block's reset and the next workload's start (finish()).
Timestamp RecordingTiming::start(TimestampWriter& writer) {
    if (!active()) {
        return {};
    }
    if (chain_) {
        const Timestamp shared = chain_;
        chain_ = {};
        return shared;
    }
    if (arena_.room() == 1) {
        if (const auto last = arena_.take(*cache_)) {
            writer.write(last->block->pool, last->first, false);
        }
    }
    return write(writer, mode_ == Mode::none);
}

void RecordingTiming::start_ahead(TimestampWriter& writer) {
    if (active()) {
        chain_ = {};
        chain_ = start(writer);
    }
}

Timestamp RecordingTiming::finish(TimestampWriter& writer) {
    if (!active()) {
        return {};
    }
    const Timestamp end = write(writer, false);
    chain_ = end;
    if (end && end.slot + 1 == QueryBlock::kSlots) {
        // The next start in a new block, written right after this end rather than right before
        // the next workload: what the application records in between (its barriers) then counts
        // in the next workload's time as it does where the start is this end itself, and the
        // times of the workloads at a block's boundary are like all the others'. Unused when
        // something else comes between (interrupt()) or nothing does.
        start_ahead(writer);
    }
    return end;
}

} // namespace vkscope::timing
