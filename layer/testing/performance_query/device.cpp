// A device's lifetime, its profiling lock and the performance query pools' own commands: where
// the extension is enabled, and where a pool is made, reset on the host, read and destroyed.

#include "entry_points.hpp"
#include "state.hpp"

#include <cstdlib>
#include <cstring>
#include <memory>
#include <vector>

namespace pqfixture {
namespace {

bool lock_busy() {
    const char* v = std::getenv("VKSCOPE_TEST_PERFORMANCE_QUERY_LOCK");
    return v && std::strcmp(v, "busy") == 0;
}

} // namespace

VKAPI_ATTR VkResult VKAPI_CALL create_device(VkPhysicalDevice pd, const VkDeviceCreateInfo* info,
                                             const VkAllocationCallbacks* allocator,
                                             VkDevice* device) {
    auto* link = find_link<VkLayerDeviceCreateInfo>(info->pNext,
                                                    VK_STRUCTURE_TYPE_LOADER_DEVICE_CREATE_INFO);
    if (!link || !link->u.pLayerInfo) {
        return VK_ERROR_INITIALIZATION_FAILED;
    }
    PFN_vkGetInstanceProcAddr gipa = link->u.pLayerInfo->pfnNextGetInstanceProcAddr;
    PFN_vkGetDeviceProcAddr gdpa = link->u.pLayerInfo->pfnNextGetDeviceProcAddr;
    link->u.pLayerInfo = link->u.pLayerInfo->pNext;
    InstanceData inst = copy_instance(pd);
    auto next_create = reinterpret_cast<PFN_vkCreateDevice>(gipa(inst.handle, "vkCreateDevice"));

    // The driver below has no such extension: it never sees it, nor its feature structure.
    std::vector<const char*> extensions;
    bool asked = false;
    for (uint32_t i = 0; i < info->enabledExtensionCount; ++i) {
        if (std::strcmp(info->ppEnabledExtensionNames[i], kExtension) == 0) {
            asked = true;
        } else {
            extensions.push_back(info->ppEnabledExtensionNames[i]);
        }
    }
    auto* feature = find_in<VkPhysicalDevicePerformanceQueryFeaturesKHR>(
        info->pNext, VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PERFORMANCE_QUERY_FEATURES_KHR);
    const bool enabled = asked && feature && feature->performanceCounterQueryPools;

    VkDeviceCreateInfo lower = *info;
    lower.enabledExtensionCount = static_cast<uint32_t>(extensions.size());
    lower.ppEnabledExtensionNames = extensions.data();
    // The backing queries need pipeline statistics on the driver's device.
    VkPhysicalDeviceFeatures plain{};
    auto* features2 = find_in<VkPhysicalDeviceFeatures2>(
        info->pNext, VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2);
    VkBool32 saved = VK_FALSE;
    if (enabled && features2) {
        saved = features2->features.pipelineStatisticsQuery;
        features2->features.pipelineStatisticsQuery = VK_TRUE;
    } else if (enabled) {
        if (info->pEnabledFeatures) {
            plain = *info->pEnabledFeatures;
        }
        plain.pipelineStatisticsQuery = VK_TRUE;
        lower.pEnabledFeatures = &plain;
    }
    VkResult result;
    {
        Unlinked out(&lower, VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PERFORMANCE_QUERY_FEATURES_KHR);
        result = next_create(pd, &lower, allocator, device);
    }
    if (enabled && features2) {
        features2->features.pipelineStatisticsQuery = saved;
    }
    if (result != VK_SUCCESS) {
        return result;
    }
    auto d = std::make_unique<DeviceData>();
    auto get = [&](const char* name) { return gdpa(*device, name); };
    d->gdpa = gdpa;
    d->destroy = reinterpret_cast<PFN_vkDestroyDevice>(get("vkDestroyDevice"));
    d->queue_submit = reinterpret_cast<PFN_vkQueueSubmit>(get("vkQueueSubmit"));
    d->queue_wait_idle = reinterpret_cast<PFN_vkQueueWaitIdle>(get("vkQueueWaitIdle"));
    d->queue_submit2 = reinterpret_cast<PFN_vkQueueSubmit2>(get("vkQueueSubmit2"));
    if (!d->queue_submit2) {
        d->queue_submit2 = reinterpret_cast<PFN_vkQueueSubmit2>(get("vkQueueSubmit2KHR"));
    }
    d->begin_command_buffer =
        reinterpret_cast<PFN_vkBeginCommandBuffer>(get("vkBeginCommandBuffer"));
    d->cmd_execute_commands =
        reinterpret_cast<PFN_vkCmdExecuteCommands>(get("vkCmdExecuteCommands"));
    d->cmd_copy_query_pool_results =
        reinterpret_cast<PFN_vkCmdCopyQueryPoolResults>(get("vkCmdCopyQueryPoolResults"));
    LowerDevice& l = d->lower;
    l.handle = *device;
    l.create_query_pool = reinterpret_cast<PFN_vkCreateQueryPool>(get("vkCreateQueryPool"));
    l.destroy_query_pool = reinterpret_cast<PFN_vkDestroyQueryPool>(get("vkDestroyQueryPool"));
    l.cmd_reset_query_pool = reinterpret_cast<PFN_vkCmdResetQueryPool>(get("vkCmdResetQueryPool"));
    l.reset_query_pool = reinterpret_cast<PFN_vkResetQueryPool>(get("vkResetQueryPool"));
    if (!l.reset_query_pool) {
        l.reset_query_pool = reinterpret_cast<PFN_vkResetQueryPool>(get("vkResetQueryPoolEXT"));
    }
    l.cmd_begin_query = reinterpret_cast<PFN_vkCmdBeginQuery>(get("vkCmdBeginQuery"));
    l.cmd_end_query = reinterpret_cast<PFN_vkCmdEndQuery>(get("vkCmdEndQuery"));
    l.cmd_write_timestamp = reinterpret_cast<PFN_vkCmdWriteTimestamp>(get("vkCmdWriteTimestamp"));
    l.get_query_pool_results =
        reinterpret_cast<PFN_vkGetQueryPoolResults>(get("vkGetQueryPoolResults"));
    VkPhysicalDeviceProperties props{};
    inst.properties(pd, &props);
    l.timestamp_period = props.limits.timestampPeriod;
    d->enabled = enabled;
    d->families = families_of(inst, pd);
    std::lock_guard guard(g_lock);
    g_devices[key(*device)] = std::move(d);
    return VK_SUCCESS;
}

VKAPI_ATTR void VKAPI_CALL destroy_device(VkDevice device, const VkAllocationCallbacks* allocator) {
    if (!device) {
        return;
    }
    std::unique_ptr<DeviceData> d;
    {
        std::lock_guard guard(g_lock);
        auto it = g_devices.find(key(device));
        if (it == g_devices.end()) {
            return;
        }
        d = std::move(it->second);
        g_devices.erase(it);
    }
    d->pools.clear();
    d->destroy(device, allocator);
}

VKAPI_ATTR VkResult VKAPI_CALL acquire_lock(VkDevice device, const VkAcquireProfilingLockInfoKHR*) {
    std::lock_guard guard(g_lock);
    DeviceData* d = device_of(key(device));
    if (!d || !d->enabled) {
        return VK_ERROR_INITIALIZATION_FAILED;
    }
    if (lock_busy()) {
        return VK_TIMEOUT;
    }
    ++d->lock_holds;
    return VK_SUCCESS;
}

VKAPI_ATTR void VKAPI_CALL release_lock(VkDevice device) {
    std::lock_guard guard(g_lock);
    if (DeviceData* d = device_of(key(device)); d && d->lock_holds) {
        --d->lock_holds;
    }
}

VKAPI_ATTR VkResult VKAPI_CALL create_query_pool(VkDevice device, const VkQueryPoolCreateInfo* info,
                                                 const VkAllocationCallbacks* allocator,
                                                 VkQueryPool* pool) {
    DeviceData* d;
    {
        std::lock_guard guard(g_lock);
        d = device_of(key(device));
    }
    if (info->queryType != VK_QUERY_TYPE_PERFORMANCE_QUERY_KHR) {
        return d->lower.create_query_pool(device, info, allocator, pool);
    }
    auto* perf = find_in<VkQueryPoolPerformanceCreateInfoKHR>(
        info->pNext, VK_STRUCTURE_TYPE_QUERY_POOL_PERFORMANCE_CREATE_INFO_KHR);
    if (!d->enabled || !perf) {
        return VK_ERROR_FEATURE_NOT_PRESENT;
    }
    if (perf->queueFamilyIndex >= d->families.size()) {
        return VK_ERROR_FEATURE_NOT_PRESENT;
    }
    // Counter indices are the family's enumeration order: the same list enumerate_counters gives.
    const std::vector<uint32_t> offered = family_counters(d->families[perf->queueFamilyIndex]);
    std::vector<uint32_t> counters;
    for (uint32_t i = 0; i < perf->counterIndexCount; ++i) {
        if (perf->pCounterIndices[i] >= offered.size()) {
            return VK_ERROR_FEATURE_NOT_PRESENT;
        }
        counters.push_back(offered[perf->pCounterIndices[i]]);
    }
    auto p = std::make_unique<PerfPool>(d->lower, std::move(counters), info->queryCount);
    if (VkResult r = p->create(allocator); r != VK_SUCCESS) {
        return r;
    }
    *pool = p->identity();
    std::lock_guard guard(g_lock);
    d->pools[*pool] = std::move(p);
    return VK_SUCCESS;
}

VKAPI_ATTR void VKAPI_CALL destroy_query_pool(VkDevice device, VkQueryPool pool,
                                              const VkAllocationCallbacks* allocator) {
    std::unique_ptr<PerfPool> owned;
    DeviceData* d;
    {
        std::lock_guard guard(g_lock);
        d = device_of(key(device));
        if (auto it = d->pools.find(pool); it != d->pools.end()) {
            owned = std::move(it->second);
            d->pools.erase(it);
        }
    }
    if (!owned) {
        d->lower.destroy_query_pool(device, pool, allocator);
    }
}

VKAPI_ATTR void VKAPI_CALL reset_query_pool(VkDevice device, VkQueryPool pool, uint32_t first,
                                            uint32_t count) {
    DeviceData* d;
    PerfPool* p;
    {
        std::lock_guard guard(g_lock);
        d = device_of(key(device));
        p = pool_of(*d, pool);
    }
    if (p) {
        p->host_reset(first, count);
    } else {
        d->lower.reset_query_pool(device, pool, first, count);
    }
}

VKAPI_ATTR VkResult VKAPI_CALL get_query_pool_results(VkDevice device, VkQueryPool pool,
                                                      uint32_t first, uint32_t count, size_t size,
                                                      void* data, VkDeviceSize stride,
                                                      VkQueryResultFlags flags) {
    DeviceData* d;
    PerfPool* p;
    {
        std::lock_guard guard(g_lock);
        d = device_of(key(device));
        p = pool_of(*d, pool);
    }
    if (!p) {
        return d->lower.get_query_pool_results(device, pool, first, count, size, data, stride,
                                               flags);
    }
    return p->results(first, count, size, data, stride, flags);
}

} // namespace pqfixture
