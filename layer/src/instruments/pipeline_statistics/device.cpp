#include "instruments/pipeline_statistics/device.hpp"

#include "core/query_reset.hpp"
#include "instruments/pipeline_statistics/selection.hpp"

#include <algorithm>

namespace vkscope::pipeline_statistics {

StatisticsDevice::StatisticsDevice(VkDevice device, const DeviceDispatch& next_layer,
                                   const VkPhysicalDeviceMemoryProperties& memory_properties,
                                   std::span<const VkQueueFamilyProperties> families,
                                   VkQueryPipelineStatisticFlags wanted, bool mesh_queries,
                                   bool host_query_reset)
    : handle(device), next(next_layer), memory(memory_properties) {
    for (const VkQueueFamilyProperties& f : families) {
        const VkQueryPipelineStatisticFlags s =
            family_statistics(f.queueFlags, wanted, mesh_queries);
        family_statistics_.push_back(s);
        if (s == 0 || caches_.count(s)) {
            continue;
        }
        QueryPoolCache::Backend b;
        b.create = [device, &next_layer, s]() {
            const VkQueryPoolCreateInfo info{VK_STRUCTURE_TYPE_QUERY_POOL_CREATE_INFO,
                                             nullptr,
                                             0,
                                             VK_QUERY_TYPE_PIPELINE_STATISTICS,
                                             QueryBlock::kSlots,
                                             s};
            VkQueryPool pool = VK_NULL_HANDLE;
            return next_layer.CreateQueryPool(device, &info, nullptr, &pool) == VK_SUCCESS
                       ? pool
                       : VK_NULL_HANDLE;
        };
        b.destroy = [device, &next_layer](VkQueryPool pool) {
            next_layer.DestroyQueryPool(device, pool, nullptr);
        };
        if (host_query_reset) {
            b.reset = host_block_reset(device, next_layer);
        }
        caches_.emplace(s, std::make_unique<QueryPoolCache>(std::move(b), kMaxQueryPools));
    }
}

bool StatisticsDevice::resets_on_host() const {
    return std::any_of(caches_.begin(), caches_.end(),
                       [](const auto& c) { return c.second->resets_on_host(); });
}

QueryPoolCache* StatisticsDevice::pools(uint32_t family) const {
    const auto found = caches_.find(statistics(family));
    return found == caches_.end() ? nullptr : found->second.get();
}

void StatisticsDevice::application_pool(VkQueryPool pool, bool alive) {
    std::lock_guard lock(mutex_);
    if (alive) {
        application_.insert(pool);
    } else {
        application_.erase(pool);
    }
    application_pools_.store(application_.size());
}

bool StatisticsDevice::is_application_pool(VkQueryPool pool) const {
    if (!has_application_pools()) {
        return false;
    }
    std::lock_guard lock(mutex_);
    return application_.count(pool) != 0;
}

} // namespace vkscope::pipeline_statistics
