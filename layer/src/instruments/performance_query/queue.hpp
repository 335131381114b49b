#pragma once
// Performance queries in the submissions of one queue: before a batch that runs application
// command buffers whose recordings hold queries, their pools are reset on the host (a performance
// query may not be reset in the command buffer, nor the submission, that begins it); the batch
// carries VkPerformanceQuerySubmitInfoKHR with its pass index: 0 where a pool of one pass is
// among them, else the pass the whole-selection pools run next; once the GPU is done the readback
// thread reads each instance's query and sends its `counters`, unless its pool was reset for a
// later submission in between. A whole-selection pool is read after the submission that ran its
// last pass: until then the instances of its set say `pass_cycle_incomplete`, and then the last
// gets every value and the earlier ones say `passes_on_later_submission`.

#include "instruments/performance_query/command_buffer_query.hpp"
#include "instruments/performance_query/device.hpp"
#include "instruments/performance_query/recording.hpp"
#include "timeline/instrument.hpp"

#include <deque>
#include <optional>
#include <vector>

namespace vkscope::performance_query {

class PerfQueue final : public timeline::InstrumentQueue {
public:
    PerfQueue(PerfDevice& device, uint32_t family, size_t slot)
        : device_(device), family_(family), slot_(slot) {}

    void begin_submission(const timeline::SubmissionStart& start) override;
    bool pairs_marks() const override { return active_; }
    void before_command_buffer(VkCommandBuffer cb, timeline::LayerCommandBuffers* layer,
                               std::vector<VkCommandBuffer>& out) override;
    void after_command_buffer(const timeline::SubmitRecord& record,
                              timeline::LayerCommandBuffers* layer,
                              std::vector<VkCommandBuffer>& out) override;
    void end_batch(timeline::LayerCommandBuffers* layer,
                   std::vector<VkCommandBuffer>& out) override;
    void patch(timeline::BatchPatch& batch) override;
    bool needs_completion() const override { return active_ || completes_set_; }
    timeline::CompletionJob take_completion() override;
    void end_submission() override;

    using Entry = CountedInstance;

private:
    // A recording whose queries this submission runs: its pool is reset (or not: a set going on)
    // when its batch is patched, which also decides the pass.
    struct Reset {
        PerfRecording* recording = nullptr;
        QueryBlock* block = nullptr;
        uint64_t generation = 0;
        uint32_t pass = 0;
        bool whole = false;
        bool completes = false; // its whole-selection set is complete after this submission
    };
    void run_batch(uint32_t index);

    PerfDevice& device_;
    const uint32_t family_;
    const size_t slot_;
    bool active_ = false;
    bool batch_queries_ = false; // the current batch runs performance queries
    // Blocks this submission reset, with their generation; blocks it could not reset.
    std::vector<Reset> reset_;
    size_t batch_first_ = 0; // the current batch's first entry in reset_
    std::vector<Entry> done_;
    std::vector<size_t> done_reset_; // per done_ entry, its reset_ index (SIZE_MAX: none)
    bool completes_set_ = false;     // a whole-selection set with waiting instances completes
    bool completes_ = false;         // the queue's semaphore exists
    // The COMMAND_BUFFER-scope query of the command buffer between before_ and
    // after_command_buffer, and those of the submission's command buffers.
    std::optional<CommandBufferEntry> cb_query_next_;
    std::vector<CommandBufferEntry> cb_queries_;
    size_t cb_query_reset_ = SIZE_MAX;     // cb_query_next_'s reset_ index
    std::vector<size_t> cb_queries_reset_; // per cb_queries_ entry (SIZE_MAX: none)
    std::deque<VkPerformanceQuerySubmitInfoKHR> pass_infos_; // alive until the call returns
};

} // namespace vkscope::performance_query
