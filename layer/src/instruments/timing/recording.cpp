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

Timestamp RecordingTiming::start(TimestampWriter& writer) {
    if (!active()) {
        return {};
    }
    if (chain_) {
        const Timestamp shared = chain_;
        chain_ = {};
        return shared;
    }
    return write(writer, mode_ == Mode::none);
}

Timestamp RecordingTiming::finish(TimestampWriter& writer) {
    if (!active()) {
        return {};
    }
    chain_ = write(writer, false);
    return chain_;
}

} // namespace vkscope::timing
