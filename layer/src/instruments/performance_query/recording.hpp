#pragma once
// The performance queries of one command buffer's recording: one query around each workload, all
// from one pool (one performance query pool per command buffer unless the device allows more),
// of the pass that the frame it is recorded in collects. Queries of a performance pool may not be
// reset in the command buffer that begins them, so the queue resets the recording's pool on the
// host right before each submission of it.

#include "core/query_pool.hpp"
#include "instruments/performance_query/command_buffer_query.hpp"
#include "instruments/performance_query/device.hpp"
#include "timeline/instrument.hpp"

namespace vkscope::timeline {
class TimelineDevice;
}

namespace vkscope::performance_query {

class PerfRecording final : public timeline::InstrumentRecording {
public:
    PerfRecording(PerfDevice& device, const timeline::TimelineDevice& timeline,
                  VkCommandBuffer handle)
        : device_(device), timeline_(timeline), handle_(handle) {}
    ~PerfRecording() override { release(); }

    void begin(const timeline::RecordingStart& start) override;
    void end() override;
    void release() override;
    timeline::Mark start() override;
    timeline::Mark finish() override;
    timeline::Mark start_render_pass(const timeline::RenderPassStart& how) override;
    const char* unmarked() const override;
    void execute(std::span<timeline::InstrumentRecording* const> secondaries,
                 bool in_render_pass) override;

    // The pool its queries use (null: none yet), and the pass those collect.
    QueryBlock* block() const { return block_; }
    uint32_t pass() const { return pass_; }
    // Its query over the whole command buffer, in frames of COMMAND_BUFFER-scope passes.
    const CommandBufferQuery& command_buffer_query() const { return command_buffer_query_; }

private:
    PerfDevice& device_;
    const timeline::TimelineDevice& timeline_;
    const VkCommandBuffer handle_;
    QueryPoolCache* pools_ = nullptr;
    QueryBlock* block_ = nullptr;
    uint32_t pass_ = 0;
    const char* why_ = nullptr; // set: this recording counts nothing
    timeline::Mark open_;
    CommandBufferQuery command_buffer_query_;
};

} // namespace vkscope::performance_query
