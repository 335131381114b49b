#pragma once
// Pipeline statistics in the submissions of one queue: after each application command buffer, a
// layer command buffer copies the queries its workloads used into the queue's result ring (each
// submission its own region, so nothing waits and a resubmitted command buffer cannot overwrite
// results not yet read); the readback thread turns them into each instance's `counters` annex once
// the GPU is done.

#include "core/host_visible_buffer.hpp"
#include "core/ring.hpp"
#include "instruments/pipeline_statistics/device.hpp"
#include "timeline/instrument.hpp"

#include <cstdint>
#include <utility>
#include <vector>

namespace vkscope::pipeline_statistics {

// The queue's ring of copied query results.
class StatisticsResults {
public:
    // Up to 13 values and the availability word per query, 64-bit each.
    static constexpr uint32_t kWords = 16;
    static constexpr VkDeviceSize kEntryBytes = kWords * 8;
    // 1 MiB per queue: 8,192 queries in flight at once.
    static constexpr uint32_t kEntries = 8192;

    StatisticsResults(StatisticsDevice& device) : device_(device) {}
    bool ready();
    uint64_t word(uint32_t entry, uint32_t index) const;

    StatisticsDevice& device_;
    RingAllocator ring{kEntries};
    HostVisibleBuffer buffer;

private:
    bool tried_ = false;
};

class StatisticsQueue final : public timeline::InstrumentQueue {
public:
    StatisticsQueue(StatisticsDevice& device, uint32_t family, size_t slot)
        : device_(device), results_(device), statistics_(device.statistics(family)), slot_(slot) {}

    void begin_submission(const timeline::SubmissionStart& start) override;
    bool pairs_marks() const override { return active_; }
    void after_command_buffer(const timeline::SubmitRecord& record,
                              timeline::LayerCommandBuffers* layer,
                              std::vector<VkCommandBuffer>& out) override;
    void end_batch(timeline::LayerCommandBuffers* layer,
                   std::vector<VkCommandBuffer>& out) override;
    bool needs_completion() const override { return active_; }
    timeline::CompletionJob take_completion() override;
    void end_submission() override;

    // One instance's outcome: values at a ring entry, or why there are none.
    struct Resolved {
        uint64_t submit = 0;
        uint64_t tag = 0;
        const char* why = nullptr;
        uint32_t entry = 0;
    };

private:
    struct Entry {
        uint64_t submit = 0;
        uint64_t tag = 0;
        QueryBlock* block = nullptr; // null: `why`
        uint32_t slot = 0;
        const char* why = nullptr;
        bool twice = false; // its query ran more than once before a copy
    };

    void flush(timeline::LayerCommandBuffers& layer, std::vector<VkCommandBuffer>& out);
    void drop_pending(const char* why);

    StatisticsDevice& device_;
    StatisticsResults results_;
    const VkQueryPipelineStatisticFlags statistics_;
    const size_t slot_;
    bool active_ = false;
    std::vector<Entry> pending_;
    std::vector<std::pair<uint64_t, uint64_t>> listed_;
    std::vector<Resolved> done_;
    std::vector<uint64_t> regions_;
};

} // namespace vkscope::pipeline_statistics
