#include "instruments/performance_query/device.hpp"

#include "core/query_reset.hpp"

#include <algorithm>

namespace vkscope::performance_query {
namespace {

// Pools of the counters at `positions` of the family's plan.
std::unique_ptr<QueryPoolCache> make_cache(VkDevice device, const DeviceDispatch& next,
                                           uint32_t family, const FamilyPlan& plan,
                                           const std::vector<uint32_t>& positions) {
    std::vector<uint32_t> indices;
    for (uint32_t pos : positions) {
        indices.push_back(plan.counters[pos].index);
    }
    QueryPoolCache::Backend b;
    b.create = [device, &next, family, indices]() {
        VkQueryPoolPerformanceCreateInfoKHR perf{};
        perf.sType = VK_STRUCTURE_TYPE_QUERY_POOL_PERFORMANCE_CREATE_INFO_KHR;
        perf.queueFamilyIndex = family;
        perf.counterIndexCount = static_cast<uint32_t>(indices.size());
        perf.pCounterIndices = indices.data();
        VkQueryPoolCreateInfo info{};
        info.sType = VK_STRUCTURE_TYPE_QUERY_POOL_CREATE_INFO;
        info.pNext = &perf;
        info.queryType = VK_QUERY_TYPE_PERFORMANCE_QUERY_KHR;
        info.queryCount = QueryBlock::kSlots;
        VkQueryPool pool = VK_NULL_HANDLE;
        return next.CreateQueryPool(device, &info, nullptr, &pool) == VK_SUCCESS ? pool
                                                                                 : VK_NULL_HANDLE;
    };
    b.destroy = [device, &next](VkQueryPool pool) { next.DestroyQueryPool(device, pool, nullptr); };
    return std::make_unique<QueryPoolCache>(std::move(b), PerfDevice::kMaxQueryPools);
}

} // namespace

PerfDevice::PerfDevice(VkDevice device, const DeviceDispatch& next_layer,
                       std::vector<FamilyPlan> plans)
    : handle(device), next(next_layer), plans_(std::move(plans)) {
    // Performance queries are reset on the host: a reset recorded in the same submission as the
    // queries' begin is one the validation layer counts against them.
    reset_query_pool_ = host_query_reset(next);
    caches_.resize(plans_.size());
    whole_.resize(plans_.size());
    for (uint32_t family = 0; family < plans_.size(); ++family) {
        const FamilyPlan& plan = plans_[family];
        if (plan.reason) {
            continue;
        }
        cycle_ = std::max(cycle_, static_cast<uint32_t>(plan.passes.size()));
        for (const std::vector<uint32_t>& positions : plan.passes) {
            caches_[family].push_back(make_cache(device, next_layer, family, plan, positions));
        }
        if (!plan.whole.empty()) {
            whole_[family] = make_cache(device, next_layer, family, plan, plan.whole);
        }
    }
}

QueryPoolCache* PerfDevice::pools(uint32_t family, uint32_t pass) const {
    if (family >= caches_.size() || pass >= caches_[family].size()) {
        return nullptr;
    }
    return caches_[family][pass].get();
}

QueryPoolCache* PerfDevice::whole_pools(uint32_t family) const {
    return family < whole_.size() ? whole_[family].get() : nullptr;
}

bool PerfDevice::records_anew(VkCommandPool pool) const {
    std::lock_guard lock(mutex_);
    return records_anew_.contains(pool);
}

void PerfDevice::saw_recorded_anew(VkCommandPool pool) {
    std::lock_guard lock(mutex_);
    records_anew_.insert(pool);
}

void PerfDevice::complete(const QueryBlock* block) {
    std::lock_guard lock(mutex_);
    if (const auto found = blocks_.find(block); found != blocks_.end()) {
        found->second.complete = true;
    }
}

uint64_t PerfDevice::reset(QueryBlock* block, uint32_t counters, bool one_pass) {
    std::lock_guard lock(mutex_);
    BlockState& st = blocks_[block];
    if (st.complete && st.generation > 0 && st.used > 0 && st.counters > 0) {
        Kept& kept = st.kept.emplace_back();
        kept.generation = st.generation;
        kept.counters = st.counters;
        kept.values.assign(size_t{st.used} * st.counters, VkPerformanceCounterResultKHR{});
        kept.ok.assign(st.used, false);
        const size_t stride = st.counters * sizeof(VkPerformanceCounterResultKHR);
        for (uint32_t q = 0; q < st.used; ++q) {
            kept.ok[q] = next.GetQueryPoolResults(handle, block->pool, q, 1, stride,
                                                  &kept.values[size_t{q} * st.counters], stride,
                                                  0) == VK_SUCCESS;
        }
        if (st.kept.size() > kKeptRuns) {
            st.kept.pop_front();
        }
    }
    if (reset_query_pool_) {
        reset_query_pool_(handle, block->pool, 0, QueryBlock::kSlots);
    }
    st.used = block->used;
    st.counters = counters;
    st.complete = one_pass;
    return ++st.generation;
}

bool PerfDevice::read(const QueryBlock* block, uint64_t generation, uint32_t slot,
                      std::vector<VkPerformanceCounterResultKHR>& out) const {
    std::lock_guard lock(mutex_);
    const auto found = blocks_.find(block);
    if (found == blocks_.end()) {
        return false;
    }
    const BlockState& st = found->second;
    if (st.generation == generation) {
        if (!st.complete) {
            return false;
        }
        const size_t bytes = out.size() * sizeof(VkPerformanceCounterResultKHR);
        return next.GetQueryPoolResults(handle, block->pool, slot, 1, bytes, out.data(), bytes,
                                        0) == VK_SUCCESS;
    }
    for (const Kept& kept : st.kept) {
        if (kept.generation == generation && slot < kept.ok.size() && kept.ok[slot] &&
            kept.counters == out.size()) {
            std::copy_n(kept.values.begin() +
                            static_cast<std::ptrdiff_t>(size_t{slot} * kept.counters),
                        kept.counters, out.begin());
            return true;
        }
    }
    return false;
}

} // namespace vkscope::performance_query
