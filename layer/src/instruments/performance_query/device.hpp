#pragma once
// The performance query instrument's state for one VkDevice: each queue family's plan, one query
// pool cache per family and pass (pools of that pass's counters, one pass each), and a generation
// per pool that a reset before a submission bumps, so a result read after the pool was reset
// again (its command buffer submitted anew) is known to be someone else's.

#include "core/query_pool.hpp"
#include "dispatch_tables.gen.hpp"
#include "instruments/performance_query/plan.hpp"

#include <atomic>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <unordered_map>
#include <vector>

namespace vkscope::performance_query {

class PerfDevice {
public:
    static constexpr size_t kMaxQueryPools = 4096;

    PerfDevice(VkDevice device, const DeviceDispatch& next, std::vector<FamilyPlan> plans);

    const FamilyPlan* plan(uint32_t family) const {
        return family < plans_.size() && !plans_[family].reason ? &plans_[family] : nullptr;
    }
    // The pools of `family`'s pass `pass`; null when the family collects nothing.
    QueryPoolCache* pools(uint32_t family, uint32_t pass) const;
    // Frames per complete set: the most passes any family needs.
    uint32_t cycle() const { return cycle_; }

    // Before a submission that runs `block`'s queries: keeps the values of its previous run (done:
    // a command buffer is not submitted again while pending), resets the pool on the host and
    // returns the run's generation. `counters`: values per query of the block's pool.
    uint64_t reset(QueryBlock* block, uint32_t counters);
    // The values of `slot` of the block's run `generation` into `out` (sized to its counters):
    // from the pool while that run is the latest, else from what reset() kept; false when
    // neither has them (not available, or run over twice since).
    bool read(const QueryBlock* block, uint64_t generation, uint32_t slot,
              std::vector<VkPerformanceCounterResultKHR>& out) const;

    const VkDevice handle;
    const DeviceDispatch& next;
    // A secondary command buffer was allocated on the device: from then on a primary may execute
    // one, which a COMMAND_BUFFER-scope query must not span (command_buffer_query.hpp).
    std::atomic<bool> secondaries{false};

private:
    std::vector<FamilyPlan> plans_;
    std::vector<std::vector<std::unique_ptr<QueryPoolCache>>> caches_; // [family][pass]
    uint32_t cycle_ = 1;
    mutable std::mutex mutex_;
    // Values of one earlier run, kept when its pool was reset for the next.
    struct Kept {
        uint64_t generation = 0;
        uint32_t counters = 0;
        std::vector<VkPerformanceCounterResultKHR> values; // per query, `counters` each
        std::vector<bool> ok;
    };
    struct BlockState {
        uint64_t generation = 0;
        uint32_t used = 0;     // queries its latest run wrote
        uint32_t counters = 0; // values per query
        std::deque<Kept> kept; // the latest runs before it, newest last
    };
    // Runs kept per pool: the readback thread can fall this many submissions of the same pool
    // behind before a result is lost (`overwritten`).
    static constexpr size_t kKeptRuns = 16;
    PFN_vkResetQueryPool reset_query_pool_ = nullptr;
    std::unordered_map<const QueryBlock*, BlockState> blocks_;
};

} // namespace vkscope::performance_query
