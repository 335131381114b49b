#pragma once
// The performance query instrument's state for one VkDevice: each queue family's plan, one query
// pool cache per family and pass (pools of that pass's counters, one pass each) and one of the
// whole selection (for command buffers recorded once), a generation per pool that a reset before
// a submission bumps, so a result read after the pool was reset again (its command buffer
// submitted anew) is known to be someone else's, and the command pools seen recording their
// command buffers anew after a single submission.

#include "core/query_pool.hpp"
#include "dispatch_tables.gen.hpp"
#include "instruments/performance_query/plan.hpp"

#include <atomic>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <unordered_map>
#include <unordered_set>
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
    // The pools of the family's whole selection (FamilyPlan::whole); null when it has none.
    QueryPoolCache* whole_pools(uint32_t family) const;
    // Frames per complete set: the most passes any family needs.
    uint32_t cycle() const { return cycle_; }

    // Before a submission that runs `block`'s queries: keeps the values of its previous run (done:
    // a command buffer is not submitted again while pending) if that ran every pass of its pool
    // (reading it otherwise is invalid), resets the pool on the host and returns the run's
    // generation. `counters`: values per query of the block's pool; `one_pass`: the submission
    // about to go runs every pass (else complete() says when the last one went).
    uint64_t reset(QueryBlock* block, uint32_t counters, bool one_pass = true);
    void complete(const QueryBlock* block);

    // Whether `pool`'s command buffers were seen recorded anew after fewer submissions than the
    // whole selection's passes (then its recordings take one frame's pass each), and noting it.
    bool records_anew(VkCommandPool pool) const;
    void saw_recorded_anew(VkCommandPool pool);
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
    std::vector<std::unique_ptr<QueryPoolCache>> whole_;               // [family]
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
        bool complete = false; // its latest run went through every pass
        std::deque<Kept> kept; // the latest runs before it, newest last
    };
    // Runs kept per pool: the readback thread can fall this many submissions of the same pool
    // behind before a result is lost (`overwritten`).
    static constexpr size_t kKeptRuns = 16;
    PFN_vkResetQueryPool reset_query_pool_ = nullptr;
    std::unordered_map<const QueryBlock*, BlockState> blocks_;
    std::unordered_set<VkCommandPool> records_anew_;
};

} // namespace vkscope::performance_query
