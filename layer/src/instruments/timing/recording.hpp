#pragma once
// The timer queries of one command buffer's recording: where each workload's timestamps go and
// what serialization is written around them.
//
// Consecutive workloads share a timestamp (N+1 slots for N workloads): the end of one is the start
// of the next, as long as nothing the layer sees ran in between (a parameter copy, an executed
// secondary, an event wait); then the next workload gets a fresh start timestamp. Where the next
// start cannot be the end itself but should count what the end's would (after an end in a
// block's last slot, after a workload a cost budget left out right before its window), it is
// written right after that end: start_ahead().
//
// Stages: with `none` a fresh start is written at TOP_OF_PIPE (cheap; it may fire while earlier
// work still runs, which is what `none` means) and every end at BOTTOM_OF_PIPE. With `queue` and
// `full` every timestamp is BOTTOM_OF_PIPE, so it is written only once all earlier work of the
// queue has finished, and a full pipeline barrier follows it, so nothing later starts before it:
// each workload runs alone between its two timestamps. (A barrier before a timestamp would add
// nothing: a BOTTOM_OF_PIPE timestamp already waits for everything before it, and a TOP_OF_PIPE
// one is not held back by a barrier at all.)
//
// Makes no Vulkan call itself: the commands go to a TimestampWriter.

#include "core/query_pool.hpp"
#include "instruments/timing/mode.hpp"
#include "instruments/timing/timestamp.hpp"

#include <vulkan/vulkan.h>

namespace vkscope::timing {

class TimestampWriter {
public:
    virtual ~TimestampWriter() = default;
    virtual void reset(VkQueryPool pool, uint32_t first, uint32_t count) = 0;
    virtual void write(VkQueryPool pool, uint32_t slot, bool top_of_pipe) = 0;
    // A full pipeline barrier: every earlier command done before any later one starts.
    virtual void barrier() = 0;
};

class RecordingTiming {
public:
    // vkBeginCommandBuffer. `untimed` null: this recording is timed; otherwise why not. `one_run`:
    // it was begun with VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT (QueryBlock::one_run).
    void begin(QueryPoolCache* cache, Mode mode, const char* untimed, bool one_run = false);
    // vkResetCommandBuffer and the other ends of a recording: its query pools go back.
    void release();

    // Around one workload (outside any render pass instance). Null when the recording is not
    // timed or no query slot could be had.
    Timestamp start(TimestampWriter& writer);
    Timestamp finish(TimestampWriter& writer);
    // Something ran since the last workload ended: the next one needs a start of its own.
    void interrupt() { chain_ = {}; }
    // A start written now, for the next workload to share (Recorder: start_ahead()).
    void start_ahead(TimestampWriter& writer);

    bool active() const { return untimed_ == nullptr; }
    // Why a workload of this recording has no timestamps.
    const char* untimed() const { return untimed_ ? untimed_ : reason::kNoQueryPool; }
    size_t blocks() const { return arena_.blocks(); }

private:
    Timestamp write(TimestampWriter& writer, bool top_of_pipe);

    QueryPoolCache* cache_ = nullptr;
    QueryArena arena_;
    Timestamp chain_; // the last end, while nothing has run after it
    Mode mode_ = Mode::none;
    bool one_run_ = false;
    const char* untimed_ = reason::kOutsideFrame;
};

} // namespace vkscope::timing
