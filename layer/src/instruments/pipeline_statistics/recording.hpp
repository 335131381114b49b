#pragma once
// The pipeline statistics queries of one command buffer's recording: one query begun right before
// each workload and ended right after it, in the same command buffer (a query cannot span command
// buffers, so a render pass instance split over several is not counted), never while the
// application's own pipeline statistics query is active, and around a render pass whose subpass
// executes secondaries only where the device has inheritedQueries (a query active across
// vkCmdExecuteCommands needs it, and the secondaries' inheritance info to name its statistics:
// the layer adds them to every secondary it sees begun).

#include "core/query_pool.hpp"
#include "instruments/pipeline_statistics/device.hpp"
#include "timeline/instrument.hpp"

namespace vkscope::pipeline_statistics {

class StatisticsRecording final : public timeline::InstrumentRecording {
public:
    StatisticsRecording(StatisticsDevice& device, VkCommandBuffer handle)
        : device_(device), handle_(handle) {}
    ~StatisticsRecording() override { release(); }

    void inherit(uint32_t family, VkCommandBufferInheritanceInfo& info) override;
    void begin(const timeline::RecordingStart& start) override;
    void release() override;
    timeline::Mark start() override;
    timeline::Mark finish() override;
    timeline::Mark start_render_pass(const timeline::RenderPassStart& how) override;
    const char* unmarked() const override { return why_ ? why_ : why(Reason::no_query_pool); }
    const char* left_out() const override { return why(Reason::budget); }
    // The last start wrote commands (a query's begin, a new block's reset): an instrument that
    // started before them (timing) starts again after them, so that no workload's time counts
    // them. A begin and end of these queries cost the GPU several times a small workload's own
    // time on some devices (an H200): counted in the next workload's time by a timestamp shared
    // with the previous workload's end, they would be most of it.
    bool waited() const override { return wrote_; }

    // The application begins or ends one of its own pipeline statistics queries.
    void application_query(bool begins);

private:
    timeline::Mark begin_query();

    StatisticsDevice& device_;
    const VkCommandBuffer handle_;
    QueryPoolCache* pools_ = nullptr;
    QueryArena arena_;
    const char* why_ = why(Reason::outside_frame); // null: this recording counts
    timeline::Mark open_;                          // the query begun and not yet ended
    uint32_t application_active_ = 0;
    bool one_run_ = false; // the blocks it takes are read in place (QueryBlock::one_run)
    bool wrote_ = false;   // the last start wrote commands
};

} // namespace vkscope::pipeline_statistics
