#pragma once
// VkQueryPools the layer has created in this process. Every instrument that makes query pools
// counts them here; GOODBYE reports the total, so a capture says what profiling took in pools.

#include <atomic>
#include <cstdint>

namespace vkscope {

inline std::atomic<uint64_t> g_query_pools_created{0};

inline void count_query_pool() {
    g_query_pools_created.fetch_add(1, std::memory_order_relaxed);
}

inline uint64_t query_pools_created() {
    return g_query_pools_created.load(std::memory_order_relaxed);
}

} // namespace vkscope
