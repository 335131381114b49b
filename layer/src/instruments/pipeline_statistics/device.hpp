#pragma once
// The pipeline statistics instrument's state for one VkDevice: what each queue family counts, one
// query pool cache per distinct set of statistics (a graphics family's, a compute-only family's),
// and the application's own pipeline statistics query pools, which may not be active while one
// of the layer's is (one active query per type, VUID vkCmdBeginQuery 01922).

#include "core/query_pool.hpp"
#include "dispatch_tables.gen.hpp"
#include "protocol.gen.hpp"

#include <atomic>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <span>
#include <vector>
#include <vulkan/vulkan.h>

namespace vkscope::pipeline_statistics {

using Reason = protocol::CountersReason;

// A reason as the static string a Mark carries.
inline const char* why(Reason r) {
    return protocol::name(r);
}

class StatisticsDevice {
public:
    // Pools per device: far above what any application holds at once.
    static constexpr size_t kMaxQueryPools = 4096;

    StatisticsDevice(VkDevice device, const DeviceDispatch& next,
                     const VkPhysicalDeviceMemoryProperties& memory,
                     std::span<const VkQueueFamilyProperties> families,
                     VkQueryPipelineStatisticFlags wanted, bool mesh_queries,
                     bool host_query_reset);

    // What `family` counts (0: nothing) and the pools for it (null: none).
    VkQueryPipelineStatisticFlags statistics(uint32_t family) const {
        return family < family_statistics_.size() ? family_statistics_[family] : 0;
    }
    QueryPoolCache* pools(uint32_t family) const;
    // A one-time recording's pools come back reset on the host (hostQueryReset, read in place).
    bool resets_on_host() const;

    // The application's own pipeline statistics pools.
    void application_pool(VkQueryPool pool, bool alive);
    bool is_application_pool(VkQueryPool pool) const;
    bool has_application_pools() const { return application_pools_.load() > 0; }

    // The device was created with inheritedQueries (vkscope enables it where the device has it):
    // a query may stay active across vkCmdExecuteCommands when every secondary's inheritance info
    // names its statistics, which the layer adds at each secondary's vkBeginCommandBuffer.
    bool inherited_queries = false;
    // The pools of a one-time recording are read in place, not copied (the `counters_read`
    // setting and the device's type).
    bool read_in_place = false;

    const VkDevice handle;
    const DeviceDispatch& next;
    const VkPhysicalDeviceMemoryProperties memory;

private:
    std::vector<VkQueryPipelineStatisticFlags> family_statistics_;
    std::map<VkQueryPipelineStatisticFlags, std::unique_ptr<QueryPoolCache>> caches_;
    mutable std::mutex mutex_;
    std::set<VkQueryPool> application_;
    std::atomic<size_t> application_pools_{0};
};

} // namespace vkscope::pipeline_statistics
