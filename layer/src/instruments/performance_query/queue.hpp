#pragma once
// Performance queries in the submissions of one queue: before each application command buffer
// whose recording holds queries, its pool is reset on the host (a performance query may not be
// reset in the command buffer, nor the submission, that begins it); every batch that runs such
// queries carries VkPerformanceQuerySubmitInfoKHR (pass 0: each pool needs one pass); once the GPU
// is done the readback thread reads each instance's query and sends its `counters`, unless its pool
// was reset for a later submission in between.

#include "instruments/performance_query/command_buffer_query.hpp"
#include "instruments/performance_query/device.hpp"
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
    bool needs_completion() const override { return active_; }
    timeline::CompletionJob take_completion() override;
    void end_submission() override;

    struct Entry {
        uint64_t submit = 0;
        uint64_t tag = 0;
        const QueryBlock* block = nullptr; // null: `why`
        uint32_t slot = 0;
        uint64_t generation = 0;
        uint32_t family = 0;
        uint32_t pass = 0;
        const char* why = nullptr;
    };

private:
    struct Reset {
        const QueryBlock* block;
        uint64_t generation;
        uint32_t pass;
    };

    PerfDevice& device_;
    const uint32_t family_;
    const size_t slot_;
    bool active_ = false;
    bool batch_queries_ = false; // the current batch runs performance queries
    // Blocks this submission reset, with their generation; blocks it could not reset.
    std::vector<Reset> reset_;
    std::vector<Entry> done_;
    // The COMMAND_BUFFER-scope query of the command buffer between before_ and
    // after_command_buffer, and those of the submission's command buffers.
    std::optional<CommandBufferEntry> cb_query_next_;
    std::vector<CommandBufferEntry> cb_queries_;
    std::deque<VkPerformanceQuerySubmitInfoKHR> pass_infos_; // alive until the call returns
};

} // namespace vkscope::performance_query
