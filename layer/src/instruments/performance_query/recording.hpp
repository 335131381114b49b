#pragma once
// The performance queries of one command buffer's recording: one query around each workload, all
// from one pool (one performance query pool per command buffer unless the device allows more).
// Queries of a performance pool may not be reset in the command buffer that begins them, so the
// queue resets the recording's pool on the host right before a submission of it.
//
// Which pool, when the selection needs several passes: a recording that will be submitted once
// (ONE_TIME_SUBMIT, or its command pool was seen recording anew after a submission or two) takes
// the pool of the pass its frame collects; any other takes the pool of the whole selection, whose
// passes its submissions run one after another (a "set": reset before the first, every pass once,
// read after the last), so that a command buffer recorded once and submitted in every frame gets
// every counter.

#include "core/query_pool.hpp"
#include "instruments/performance_query/command_buffer_query.hpp"
#include "instruments/performance_query/device.hpp"
#include "timeline/instrument.hpp"

namespace vkscope::timeline {
class TimelineDevice;
}

namespace vkscope::performance_query {

// A workload instance whose performance query ran, or why none did: what the readback thread
// reads and sends.
struct CountedInstance {
    uint64_t submit = 0;
    uint64_t tag = 0;
    const QueryBlock* block = nullptr; // null: `why`
    uint32_t slot = 0;
    uint64_t generation = 0;
    uint32_t family = 0;
    uint32_t pass = 0;
    const char* why = nullptr;
    // The whole selection's pool: the submissions of its set, when this one ran its last pass.
    uint32_t set_submissions = 0;
};

class PerfRecording final : public timeline::InstrumentRecording {
public:
    PerfRecording(PerfDevice& device, const timeline::TimelineDevice& timeline,
                  VkCommandBuffer handle, VkCommandPool pool)
        : device_(device), timeline_(timeline), handle_(handle), command_pool_(pool) {}
    ~PerfRecording() override { release(); }

    void begin(const timeline::RecordingStart& start) override;
    void end() override;
    void release() override;
    timeline::Mark start() override;
    timeline::Mark finish() override;
    timeline::Mark start_render_pass(const timeline::RenderPassStart& how) override;
    const char* unmarked() const override;
    const char* left_out() const override;
    void execute(std::span<timeline::InstrumentRecording* const> secondaries,
                 bool in_render_pass) override;

    // The pool its queries use (null: none yet), and the pass those collect.
    QueryBlock* block() const { return block_; }
    uint32_t pass() const { return pass_; }
    // Its query over the whole command buffer, in frames of COMMAND_BUFFER-scope passes.
    const CommandBufferQuery& command_buffer_query() const { return command_buffer_query_; }

    // Its queries are the whole selection's (passes over several submissions).
    bool whole() const { return whole_passes_ > 0; }
    // A submission of this recording is about to go (in any frame).
    void submitting() { ++submissions_; }
    // The first pass its current set has not run.
    uint32_t next_pass() const;
    // The submission about to go runs pass `pass` of the whole selection: whether a new set
    // starts (the pool needs a reset first: none started yet, or `pass` already ran in it), and
    // whether the set is complete after it.
    struct PassRun {
        bool starts = false;
        bool completes = false;
    };
    PassRun run_pass(uint32_t pass);
    // The current set: its generation (set by the queue when it starts one), the instances its
    // earlier submissions ran in captured frames, and how many submissions it took.
    uint64_t set_generation = 0;
    std::vector<CountedInstance> set_waiting;
    uint32_t set_submissions = 0;

private:
    PerfDevice& device_;
    const timeline::TimelineDevice& timeline_;
    const VkCommandBuffer handle_;
    QueryPoolCache* pools_ = nullptr;
    QueryBlock* block_ = nullptr;
    const VkCommandPool command_pool_;
    uint32_t pass_ = 0;
    uint32_t whole_passes_ = 0; // 0: the pool of one pass
    uint32_t ran_ = 0;          // passes the current set ran, one bit each
    uint32_t submissions_ = 0;  // of this recording
    bool one_time_ = false;
    const char* why_ = nullptr; // set: this recording counts nothing
    timeline::Mark open_;
    CommandBufferQuery command_buffer_query_;
};

} // namespace vkscope::performance_query
