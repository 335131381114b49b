#pragma once
// Pipeline statistics in the submissions of one queue. After each application command buffer
// the queries its workloads used are read: in place, on the host once the GPU is done, when every
// pool read belongs to a recording that runs once and the device reads in place
// (`counters_read`); otherwise a layer command buffer copies them into the queue's result ring
// (each submission its own region, so nothing waits and a resubmitted command buffer cannot
// overwrite results not yet read). Before the driver's call only that is decided, from the query
// blocks the command buffer's stream names (SubmitRecord::stream), so the timeline may pair the
// instances after the call, as it does for timing: the paired instances are copied for the job,
// and the readback thread finds each one's query and turns it into its `counters` annex once the
// GPU is done. A frame with statistics then starts on the GPU as early as one without.

#include "core/host_visible_buffer.hpp"
#include "core/query_reads.hpp"
#include "core/ring.hpp"
#include "instruments/pipeline_statistics/device.hpp"
#include "timeline/instrument.hpp"
#include "timeline/paired_instances.hpp"

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
        : device_(device), results_(device), statistics_(device.statistics(family)),
          pools_(device.pools(family)), slot_(slot) {}

    void begin_submission(const timeline::SubmissionStart& start) override;
    bool pairs_marks() const override { return active_; }
    // The reads it places need only the blocks the stream's queries are in.
    bool pairs_before_submit() const override { return false; }
    void paired(const timeline::SubmitRecord& record) override;
    void after_command_buffer(const timeline::SubmitRecord& record,
                              timeline::LayerCommandBuffers* layer,
                              std::vector<VkCommandBuffer>& out) override;
    void end_batch(timeline::LayerCommandBuffers* layer,
                   std::vector<VkCommandBuffer>& out) override;
    // Nothing to read or say when the cost budget left every workload out (the timeline sends
    // their annexes).
    bool needs_completion() const override {
        return active_ && (counted_ || lists_ || !paired_.empty());
    }
    timeline::CompletionJob take_completion() override;
    timeline::DeferredPairing take_pairing() override;
    std::string left_out_annex() const override;
    void end_submission() override;

    // One instance's query, or why it has none.
    struct Entry {
        uint64_t submit = 0;
        uint64_t tag = 0;
        QueryBlock* block = nullptr; // null: `why`
        uint32_t slot = 0;
        const char* why = nullptr;
        bool twice = false; // its query ran more than once before a read
    };
    using Read = ClosedReads::Read;
    struct Batch {
        uint32_t entries = 0;
        uint32_t listed = 0;
    };
    using ReadBlock = ClosedReads::Block;
    struct Job;

private:
    void flush(timeline::LayerCommandBuffers& layer, std::vector<VkCommandBuffer>& out);
    void drop_pending(const char* why);
    void close_read(const char* dropped, bool in_place, const QueryReads* reads);
    void release();

    StatisticsDevice& device_;
    StatisticsResults results_;
    const VkQueryPipelineStatisticFlags statistics_;
    QueryPoolCache* const pools_;
    const size_t slot_;
    bool active_ = false;
    bool pending() const { return added_ > closed_at_; }

    // reads_ holds the blocks of the command buffers added since the last read closed (at
    // closed_at_ command buffers).
    QueryReads reads_;
    uint32_t added_ = 0;
    uint32_t closed_at_ = 0;
    bool counted_ = false; // a command buffer added holds a query of this instrument's
    bool lists_ = false;   // a command buffer added lists workloads later (SubmitRecord)
    ClosedReads closed_;
    std::vector<Batch> batches_;
    // Every paired command buffer's instances with this instrument's marks, and the workloads
    // its SUBMIT lists: the job makes the entries.
    timeline::PairedInstances paired_;
    std::vector<uint64_t> regions_;
    std::vector<QueryBlock*> held_;
    uint32_t in_place_entries_ = 0;
    // The job take_completion() made last in this submission, for take_pairing().
    std::shared_ptr<Job> last_job_;
};

} // namespace vkscope::pipeline_statistics
