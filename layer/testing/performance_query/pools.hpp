#pragma once
// A performance query pool of the fixture: its counters, and the driver's queries behind each of
// its queries (one pipeline statistics query, two timestamps for elapsed time). Which passes a
// query has been submitted with since its last reset is kept on the host, at submission.

#include "fixture.hpp"

#include <mutex>

namespace pqfixture {

struct LowerDevice {
    VkDevice handle = VK_NULL_HANDLE;
    PFN_vkCreateQueryPool create_query_pool = nullptr;
    PFN_vkDestroyQueryPool destroy_query_pool = nullptr;
    PFN_vkCmdResetQueryPool cmd_reset_query_pool = nullptr;
    PFN_vkResetQueryPool reset_query_pool = nullptr;
    PFN_vkCmdBeginQuery cmd_begin_query = nullptr;
    PFN_vkCmdEndQuery cmd_end_query = nullptr;
    PFN_vkCmdWriteTimestamp cmd_write_timestamp = nullptr;
    PFN_vkGetQueryPoolResults get_query_pool_results = nullptr;
    float timestamp_period = 1.0f;
};

class PerfPool {
public:
    // `counters`: indices into kCounters, in the application's order.
    PerfPool(const LowerDevice& lower, std::vector<uint32_t> counters, uint32_t count);
    ~PerfPool();
    PerfPool(const PerfPool&) = delete;
    PerfPool& operator=(const PerfPool&) = delete;

    VkResult create(const VkAllocationCallbacks* allocator);
    // The handle the application holds: one of the driver's pools, so a stray pass-through of
    // it (a debug name) names a real object.
    VkQueryPool identity() const { return statistics_ ? statistics_ : timestamps_; }

    void cmd_reset(VkCommandBuffer cb, uint32_t first, uint32_t count) const;
    void host_reset(uint32_t first, uint32_t count);
    void cmd_begin(VkCommandBuffer cb, uint32_t query) const;
    void cmd_end(VkCommandBuffer cb, uint32_t query) const;
    // At submission: a reset (before the begins of the same batch) and an executed pass.
    void submitted_reset(uint32_t first, uint32_t count);
    // Whether a submission of `query` runs it again for another pass since its last reset.
    bool runs_again(uint32_t query) const;
    // Before such a submission, once the work of the earlier pass has completed: the driver's
    // queries behind it are reset on the host (they may not be written twice without a reset,
    // nor reset while a submission still uses them), so its values are those of the latest pass.
    void rerun(uint32_t query);
    void submitted_pass(uint32_t query, uint32_t pass);

    VkResult results(uint32_t first, uint32_t count, size_t size, void* data, VkDeviceSize stride,
                     VkQueryResultFlags flags);

    uint32_t passes() const { return static_cast<uint32_t>(counters_.size()); }

private:
    bool complete(uint32_t query) const;

    const LowerDevice& lower_;
    const std::vector<uint32_t> counters_;
    const uint32_t count_;
    VkQueryPipelineStatisticFlags statistic_flags_ = 0;
    bool elapsed_ = false;
    VkQueryPool statistics_ = VK_NULL_HANDLE;
    VkQueryPool timestamps_ = VK_NULL_HANDLE;
    mutable std::mutex mutex_;
    std::vector<uint64_t> passes_done_; // per query, a bit per pass
};

} // namespace pqfixture
