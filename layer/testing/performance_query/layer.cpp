// The fixture's entry points: the loader interface, what an instance and a physical device show
// of the extension, and the device commands that take performance query pools (fixture.hpp).

#include "pools.hpp"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <unordered_map>
#include <vulkan/vk_layer.h>

#define FIXTURE_EXPORT extern "C" __attribute__((visibility("default")))

namespace pqfixture {
namespace {

constexpr const char* kLayerName = "VK_LAYER_VKSCOPE_test_performance_query";
constexpr const char* kExtension = VK_KHR_PERFORMANCE_QUERY_EXTENSION_NAME;

struct InstanceData {
    VkInstance handle = VK_NULL_HANDLE;
    PFN_vkGetInstanceProcAddr gipa = nullptr;
    PFN_vkDestroyInstance destroy = nullptr;
    PFN_vkEnumerateDeviceExtensionProperties enumerate_extensions = nullptr;
    // The core commands and their KHR aliases, each passed on as itself: the core ones do not
    // exist for an instance of API 1.0, which has VK_KHR_get_physical_device_properties2.
    PFN_vkGetPhysicalDeviceFeatures2 features2 = nullptr;
    PFN_vkGetPhysicalDeviceFeatures2 features2_khr = nullptr;
    PFN_vkGetPhysicalDeviceProperties2 properties2 = nullptr;
    PFN_vkGetPhysicalDeviceProperties2 properties2_khr = nullptr;
    PFN_vkGetPhysicalDeviceProperties properties = nullptr;
    PFN_vkGetPhysicalDeviceQueueFamilyProperties families = nullptr;
};

// A recorded command buffer's use of performance queries, replayed onto the pools at submission.
struct Recorded {
    enum class Kind : uint8_t { reset, begin };
    Kind kind;
    PerfPool* pool;
    uint32_t first;
    uint32_t count;
};

struct DeviceData {
    PFN_vkGetDeviceProcAddr gdpa = nullptr;
    PFN_vkDestroyDevice destroy = nullptr;
    PFN_vkQueueSubmit queue_submit = nullptr;
    PFN_vkQueueSubmit2 queue_submit2 = nullptr;
    PFN_vkQueueWaitIdle queue_wait_idle = nullptr;
    PFN_vkBeginCommandBuffer begin_command_buffer = nullptr;
    PFN_vkCmdExecuteCommands cmd_execute_commands = nullptr;
    PFN_vkCmdCopyQueryPoolResults cmd_copy_query_pool_results = nullptr;
    LowerDevice lower;
    bool enabled = false; // the application enabled the extension
    std::vector<VkQueueFamilyProperties> families;
    uint32_t lock_holds = 0;
    std::map<VkQueryPool, std::unique_ptr<PerfPool>> pools;
    std::unordered_map<VkCommandBuffer, std::vector<Recorded>> recorded;
};

// One lock for everything: a test fixture, where simplicity beats the cost of contention.
std::mutex g_lock;
std::unordered_map<void*, InstanceData> g_instances;
std::unordered_map<void*, std::unique_ptr<DeviceData>> g_devices;

template <typename Handle> void* key(Handle handle) {
    return *reinterpret_cast<void**>(handle);
}

InstanceData* instance_of(void* k) {
    auto it = g_instances.find(k);
    return it == g_instances.end() ? nullptr : &it->second;
}

DeviceData* device_of(void* k) {
    auto it = g_devices.find(k);
    return it == g_devices.end() ? nullptr : it->second.get();
}

PerfPool* pool_of(DeviceData& d, VkQueryPool pool) {
    auto it = d.pools.find(pool);
    return it == d.pools.end() ? nullptr : it->second.get();
}

template <typename LinkInfo> LinkInfo* find_link(const void* chain, VkStructureType type) {
    for (auto* s = static_cast<const VkBaseInStructure*>(chain); s; s = s->pNext) {
        auto* info = reinterpret_cast<const LinkInfo*>(s);
        if (s->sType == type && info->function == VK_LAYER_LINK_INFO) {
            return const_cast<LinkInfo*>(info);
        }
    }
    return nullptr;
}

template <typename T> T* find_in(const void* chain, VkStructureType type) {
    for (auto* s = static_cast<const VkBaseInStructure*>(chain); s; s = s->pNext) {
        if (s->sType == type) {
            return reinterpret_cast<T*>(const_cast<VkBaseInStructure*>(s));
        }
    }
    return nullptr;
}

// Takes a structure of `type` out of a chain for the length of a call to the driver, which does
// not know it, and puts it back afterwards.
class Unlinked {
public:
    Unlinked(const void* head, VkStructureType type) {
        auto* prev = const_cast<VkBaseOutStructure*>(static_cast<const VkBaseOutStructure*>(head));
        while (prev && prev->pNext) {
            if (prev->pNext->sType == type) {
                prev_ = prev;
                removed_ = prev->pNext;
                prev->pNext = removed_->pNext;
                return;
            }
            prev = prev->pNext;
        }
    }
    ~Unlinked() {
        if (prev_) {
            prev_->pNext = removed_;
        }
    }
    Unlinked(const Unlinked&) = delete;
    Unlinked& operator=(const Unlinked&) = delete;

private:
    VkBaseOutStructure* prev_ = nullptr;
    VkBaseOutStructure* removed_ = nullptr;
};

bool lock_busy() {
    const char* v = std::getenv("VKSCOPE_TEST_PERFORMANCE_QUERY_LOCK");
    return v && std::strcmp(v, "busy") == 0;
}

// ---- instance and physical device ----

VKAPI_ATTR VkResult VKAPI_CALL create_instance(const VkInstanceCreateInfo* info,
                                               const VkAllocationCallbacks* allocator,
                                               VkInstance* instance) {
    auto* link = find_link<VkLayerInstanceCreateInfo>(
        info->pNext, VK_STRUCTURE_TYPE_LOADER_INSTANCE_CREATE_INFO);
    if (!link || !link->u.pLayerInfo) {
        return VK_ERROR_INITIALIZATION_FAILED;
    }
    PFN_vkGetInstanceProcAddr gipa = link->u.pLayerInfo->pfnNextGetInstanceProcAddr;
    link->u.pLayerInfo = link->u.pLayerInfo->pNext;
    auto next_create =
        reinterpret_cast<PFN_vkCreateInstance>(gipa(VK_NULL_HANDLE, "vkCreateInstance"));
    VkResult result = next_create(info, allocator, instance);
    if (result != VK_SUCCESS) {
        return result;
    }
    InstanceData d;
    d.handle = *instance;
    d.gipa = gipa;
    auto get = [&](const char* name) { return gipa(*instance, name); };
    d.destroy = reinterpret_cast<PFN_vkDestroyInstance>(get("vkDestroyInstance"));
    d.enumerate_extensions = reinterpret_cast<PFN_vkEnumerateDeviceExtensionProperties>(
        get("vkEnumerateDeviceExtensionProperties"));
    d.features2 =
        reinterpret_cast<PFN_vkGetPhysicalDeviceFeatures2>(get("vkGetPhysicalDeviceFeatures2"));
    d.features2_khr =
        reinterpret_cast<PFN_vkGetPhysicalDeviceFeatures2>(get("vkGetPhysicalDeviceFeatures2KHR"));
    d.properties2 =
        reinterpret_cast<PFN_vkGetPhysicalDeviceProperties2>(get("vkGetPhysicalDeviceProperties2"));
    d.properties2_khr = reinterpret_cast<PFN_vkGetPhysicalDeviceProperties2>(
        get("vkGetPhysicalDeviceProperties2KHR"));
    d.properties =
        reinterpret_cast<PFN_vkGetPhysicalDeviceProperties>(get("vkGetPhysicalDeviceProperties"));
    d.families = reinterpret_cast<PFN_vkGetPhysicalDeviceQueueFamilyProperties>(
        get("vkGetPhysicalDeviceQueueFamilyProperties"));
    std::lock_guard guard(g_lock);
    g_instances[key(*instance)] = d;
    return VK_SUCCESS;
}

VKAPI_ATTR void VKAPI_CALL destroy_instance(VkInstance instance,
                                            const VkAllocationCallbacks* allocator) {
    if (!instance) {
        return;
    }
    PFN_vkDestroyInstance destroy = nullptr;
    {
        std::lock_guard guard(g_lock);
        InstanceData* d = instance_of(key(instance));
        if (!d) {
            return;
        }
        destroy = d->destroy;
        g_instances.erase(key(instance));
    }
    destroy(instance, allocator);
}

InstanceData copy_instance(VkPhysicalDevice pd) {
    std::lock_guard guard(g_lock);
    InstanceData* d = instance_of(key(pd));
    return d ? *d : InstanceData{};
}

VkResult fill_extensions(uint32_t* count, VkExtensionProperties* out,
                         const std::vector<VkExtensionProperties>& list) {
    if (!out) {
        *count = static_cast<uint32_t>(list.size());
        return VK_SUCCESS;
    }
    const uint32_t n = std::min<uint32_t>(*count, static_cast<uint32_t>(list.size()));
    std::copy_n(list.begin(), n, out);
    *count = n;
    return n < list.size() ? VK_INCOMPLETE : VK_SUCCESS;
}

VKAPI_ATTR VkResult VKAPI_CALL enumerate_device_extensions(VkPhysicalDevice pd, const char* layer,
                                                           uint32_t* count,
                                                           VkExtensionProperties* out) {
    VkExtensionProperties own{};
    std::snprintf(own.extensionName, sizeof(own.extensionName), "%s", kExtension);
    own.specVersion = VK_KHR_PERFORMANCE_QUERY_SPEC_VERSION;
    if (layer && std::strcmp(layer, kLayerName) == 0) {
        return fill_extensions(count, out, {own});
    }
    InstanceData d = copy_instance(pd);
    if (!d.enumerate_extensions) {
        return VK_ERROR_INITIALIZATION_FAILED;
    }
    if (layer) {
        return d.enumerate_extensions(pd, layer, count, out);
    }
    uint32_t n = 0;
    if (VkResult r = d.enumerate_extensions(pd, nullptr, &n, nullptr); r != VK_SUCCESS) {
        return r;
    }
    std::vector<VkExtensionProperties> list(n);
    if (VkResult r = d.enumerate_extensions(pd, nullptr, &n, list.data()); r < 0) {
        return r;
    }
    list.resize(n);
    const bool present = std::any_of(list.begin(), list.end(), [](const auto& e) {
        return std::strcmp(e.extensionName, kExtension) == 0;
    });
    if (!present) {
        list.push_back(own);
    }
    return fill_extensions(count, out, list);
}

void features2_through(PFN_vkGetPhysicalDeviceFeatures2 lower, VkPhysicalDevice pd,
                       VkPhysicalDeviceFeatures2* f) {
    auto* own = find_in<VkPhysicalDevicePerformanceQueryFeaturesKHR>(
        f->pNext, VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PERFORMANCE_QUERY_FEATURES_KHR);
    {
        Unlinked out(f, VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PERFORMANCE_QUERY_FEATURES_KHR);
        lower(pd, f);
    }
    if (own) {
        own->performanceCounterQueryPools = VK_TRUE;
        own->performanceCounterMultipleQueryPools = VK_FALSE;
    }
}

VKAPI_ATTR void VKAPI_CALL get_features2(VkPhysicalDevice pd, VkPhysicalDeviceFeatures2* f) {
    features2_through(copy_instance(pd).features2, pd, f);
}

VKAPI_ATTR void VKAPI_CALL get_features2_khr(VkPhysicalDevice pd, VkPhysicalDeviceFeatures2* f) {
    features2_through(copy_instance(pd).features2_khr, pd, f);
}

void properties2_through(PFN_vkGetPhysicalDeviceProperties2 lower, VkPhysicalDevice pd,
                         VkPhysicalDeviceProperties2* p) {
    auto* own = find_in<VkPhysicalDevicePerformanceQueryPropertiesKHR>(
        p->pNext, VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PERFORMANCE_QUERY_PROPERTIES_KHR);
    {
        Unlinked out(p, VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PERFORMANCE_QUERY_PROPERTIES_KHR);
        lower(pd, p);
    }
    if (own) {
        // Values need arithmetic on the host (elapsed time), so no copies into buffers.
        own->allowCommandBufferQueryCopies = VK_FALSE;
    }
}

VKAPI_ATTR void VKAPI_CALL get_properties2(VkPhysicalDevice pd, VkPhysicalDeviceProperties2* p) {
    properties2_through(copy_instance(pd).properties2, pd, p);
}

VKAPI_ATTR void VKAPI_CALL get_properties2_khr(VkPhysicalDevice pd,
                                               VkPhysicalDeviceProperties2* p) {
    properties2_through(copy_instance(pd).properties2_khr, pd, p);
}

std::vector<VkQueueFamilyProperties> families_of(const InstanceData& d, VkPhysicalDevice pd) {
    uint32_t n = 0;
    d.families(pd, &n, nullptr);
    std::vector<VkQueueFamilyProperties> out(n);
    d.families(pd, &n, out.data());
    return out;
}

VKAPI_ATTR VkResult VKAPI_CALL enumerate_counters(VkPhysicalDevice pd, uint32_t family,
                                                  uint32_t* count,
                                                  VkPerformanceCounterKHR* counters,
                                                  VkPerformanceCounterDescriptionKHR* descs) {
    InstanceData d = copy_instance(pd);
    const auto families = families_of(d, pd);
    if (family >= families.size()) {
        *count = 0;
        return VK_SUCCESS;
    }
    const std::vector<uint32_t> offered = family_counters(families[family]);
    if (!counters && !descs) {
        *count = static_cast<uint32_t>(offered.size());
        return VK_SUCCESS;
    }
    const uint32_t n = std::min<uint32_t>(*count, static_cast<uint32_t>(offered.size()));
    for (uint32_t i = 0; i < n; ++i) {
        describe(kCounters[offered[i]], counters ? &counters[i] : nullptr,
                 descs ? &descs[i] : nullptr);
    }
    *count = n;
    return n < offered.size() ? VK_INCOMPLETE : VK_SUCCESS;
}

VKAPI_ATTR void VKAPI_CALL get_passes(VkPhysicalDevice,
                                      const VkQueryPoolPerformanceCreateInfoKHR* info,
                                      uint32_t* passes) {
    // Every counter its own pass: distinct counters, one pass each.
    std::vector<uint32_t> distinct(info->pCounterIndices,
                                   info->pCounterIndices + info->counterIndexCount);
    std::sort(distinct.begin(), distinct.end());
    distinct.erase(std::unique(distinct.begin(), distinct.end()), distinct.end());
    *passes = static_cast<uint32_t>(distinct.size());
}

// ---- device ----

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

// Under g_lock: the device of a command buffer and the perf pool `pool` names (null: not one).
PerfPool* perf_pool(VkCommandBuffer cb, VkQueryPool pool, DeviceData** out) {
    DeviceData* d = device_of(key(cb));
    *out = d;
    return d ? pool_of(*d, pool) : nullptr;
}

VKAPI_ATTR VkResult VKAPI_CALL begin_command_buffer(VkCommandBuffer cb,
                                                    const VkCommandBufferBeginInfo* info) {
    DeviceData* d;
    {
        std::lock_guard guard(g_lock);
        d = device_of(key(cb));
        d->recorded.erase(cb); // beginning resets what the command buffer held
    }
    return d->begin_command_buffer(cb, info);
}

VKAPI_ATTR void VKAPI_CALL cmd_reset_query_pool(VkCommandBuffer cb, VkQueryPool pool,
                                                uint32_t first, uint32_t count) {
    DeviceData* d;
    PerfPool* p;
    {
        std::lock_guard guard(g_lock);
        p = perf_pool(cb, pool, &d);
        if (p) {
            d->recorded[cb].push_back({Recorded::Kind::reset, p, first, count});
        }
    }
    if (p) {
        p->cmd_reset(cb, first, count);
    } else {
        d->lower.cmd_reset_query_pool(cb, pool, first, count);
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

VKAPI_ATTR void VKAPI_CALL cmd_begin_query(VkCommandBuffer cb, VkQueryPool pool, uint32_t query,
                                           VkQueryControlFlags flags) {
    DeviceData* d;
    PerfPool* p;
    {
        std::lock_guard guard(g_lock);
        p = perf_pool(cb, pool, &d);
        if (p) {
            d->recorded[cb].push_back({Recorded::Kind::begin, p, query, 1});
        }
    }
    if (p) {
        p->cmd_begin(cb, query);
    } else {
        d->lower.cmd_begin_query(cb, pool, query, flags);
    }
}

VKAPI_ATTR void VKAPI_CALL cmd_end_query(VkCommandBuffer cb, VkQueryPool pool, uint32_t query) {
    DeviceData* d;
    PerfPool* p;
    {
        std::lock_guard guard(g_lock);
        p = perf_pool(cb, pool, &d);
    }
    if (p) {
        p->cmd_end(cb, query);
    } else {
        d->lower.cmd_end_query(cb, pool, query);
    }
}

VKAPI_ATTR void VKAPI_CALL cmd_copy_query_pool_results(VkCommandBuffer cb, VkQueryPool pool,
                                                       uint32_t first, uint32_t count,
                                                       VkBuffer buffer, VkDeviceSize offset,
                                                       VkDeviceSize stride,
                                                       VkQueryResultFlags flags) {
    DeviceData* d;
    PerfPool* p;
    {
        std::lock_guard guard(g_lock);
        p = perf_pool(cb, pool, &d);
    }
    // allowCommandBufferQueryCopies is false: a copy of a performance pool is invalid usage,
    // which the validation layer reports; the fixture writes nothing.
    if (!p) {
        d->cmd_copy_query_pool_results(cb, pool, first, count, buffer, offset, stride, flags);
    }
}

VKAPI_ATTR void VKAPI_CALL cmd_execute_commands(VkCommandBuffer cb, uint32_t count,
                                                const VkCommandBuffer* secondaries) {
    DeviceData* d;
    {
        std::lock_guard guard(g_lock);
        d = device_of(key(cb));
        for (uint32_t i = 0; i < count; ++i) {
            if (auto it = d->recorded.find(secondaries[i]); it != d->recorded.end()) {
                const std::vector<Recorded> copy = it->second;
                auto& mine = d->recorded[cb];
                mine.insert(mine.end(), copy.begin(), copy.end());
            }
        }
    }
    d->cmd_execute_commands(cb, count, secondaries);
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

// Whether a command buffer of a batch runs a query again for another pass (PerfPool::rerun).
bool runs_again(DeviceData& d, const VkCommandBuffer* cbs, uint32_t count) {
    for (uint32_t i = 0; i < count; ++i) {
        auto it = d.recorded.find(cbs[i]);
        if (it == d.recorded.end()) {
            continue;
        }
        for (const Recorded& r : it->second) {
            // A reset recorded before it would make it a first run: waiting anyway costs time,
            // nothing else.
            if (r.kind == Recorded::Kind::begin && r.pool->runs_again(r.first)) {
                return true;
            }
        }
    }
    return false;
}

// What the command buffers of one batch did to performance queries, at the batch's pass.
void replay(DeviceData& d, const VkCommandBuffer* cbs, uint32_t count, uint32_t pass) {
    for (uint32_t i = 0; i < count; ++i) {
        auto it = d.recorded.find(cbs[i]);
        if (it == d.recorded.end()) {
            continue;
        }
        for (const Recorded& r : it->second) {
            if (r.kind == Recorded::Kind::reset) {
                r.pool->submitted_reset(r.first, r.count);
            } else {
                r.pool->rerun(r.first);
                r.pool->submitted_pass(r.first, pass);
            }
        }
    }
}

// The pass of each batch (VkPerformanceQuerySubmitInfoKHR) is the fixture's: the driver below
// has no such extension, and a layer below that reads it would take the fixture's own queries
// for performance queries of that pass.
class PassesUnlinked {
public:
    template <typename Submit> PassesUnlinked(const Submit* submits, uint32_t count) {
        for (uint32_t i = 0; i < count; ++i) {
            unlinked_.emplace_back(&submits[i],
                                   VK_STRUCTURE_TYPE_PERFORMANCE_QUERY_SUBMIT_INFO_KHR);
        }
    }

private:
    std::deque<Unlinked> unlinked_;
};

// Before a batch that runs queries again for another pass, which resets them on the host: the
// earlier passes' work must have completed (a reset of a query still in use is invalid), and the
// layers below must know it has. The passes of one query are taken to run on one queue; waiting
// for it to be idle is a test fixture's way, not a fast one.
void wait_before_rerun(DeviceData& d, VkQueue queue, bool reruns) {
    if (reruns && d.queue_wait_idle) {
        d.queue_wait_idle(queue);
    }
}

VKAPI_ATTR VkResult VKAPI_CALL queue_submit(VkQueue queue, uint32_t count,
                                            const VkSubmitInfo* submits, VkFence fence) {
    DeviceData* d;
    bool reruns = false;
    {
        std::lock_guard guard(g_lock);
        d = device_of(key(queue));
        for (uint32_t i = 0; i < count && !reruns; ++i) {
            reruns = runs_again(*d, submits[i].pCommandBuffers, submits[i].commandBufferCount);
        }
    }
    wait_before_rerun(*d, queue, reruns);
    {
        std::lock_guard guard(g_lock);
        for (uint32_t i = 0; i < count; ++i) {
            auto* pass = find_in<VkPerformanceQuerySubmitInfoKHR>(
                submits[i].pNext, VK_STRUCTURE_TYPE_PERFORMANCE_QUERY_SUBMIT_INFO_KHR);
            replay(*d, submits[i].pCommandBuffers, submits[i].commandBufferCount,
                   pass ? pass->counterPassIndex : 0);
        }
    }
    const PassesUnlinked unlinked(submits, count);
    return d->queue_submit(queue, count, submits, fence);
}

VKAPI_ATTR VkResult VKAPI_CALL queue_submit2(VkQueue queue, uint32_t count,
                                             const VkSubmitInfo2* submits, VkFence fence) {
    std::vector<std::vector<VkCommandBuffer>> batches(count);
    for (uint32_t i = 0; i < count; ++i) {
        for (uint32_t j = 0; j < submits[i].commandBufferInfoCount; ++j) {
            batches[i].push_back(submits[i].pCommandBufferInfos[j].commandBuffer);
        }
    }
    DeviceData* d;
    bool reruns = false;
    {
        std::lock_guard guard(g_lock);
        d = device_of(key(queue));
        for (uint32_t i = 0; i < count && !reruns; ++i) {
            reruns = runs_again(*d, batches[i].data(), static_cast<uint32_t>(batches[i].size()));
        }
    }
    wait_before_rerun(*d, queue, reruns);
    {
        std::lock_guard guard(g_lock);
        for (uint32_t i = 0; i < count; ++i) {
            auto* pass = find_in<VkPerformanceQuerySubmitInfoKHR>(
                submits[i].pNext, VK_STRUCTURE_TYPE_PERFORMANCE_QUERY_SUBMIT_INFO_KHR);
            replay(*d, batches[i].data(), static_cast<uint32_t>(batches[i].size()),
                   pass ? pass->counterPassIndex : 0);
        }
    }
    const PassesUnlinked unlinked(submits, count);
    return d->queue_submit2(queue, count, submits, fence);
}

// ---- dispatch ----

template <typename F> PFN_vkVoidFunction fn(F* f) {
    return reinterpret_cast<PFN_vkVoidFunction>(f);
}

VKAPI_ATTR PFN_vkVoidFunction VKAPI_CALL get_device_proc_addr(VkDevice device, const char* name);

PFN_vkVoidFunction own_device_command(const char* name) {
    static const std::unordered_map<std::string_view, PFN_vkVoidFunction> table{
        {"vkGetDeviceProcAddr", fn(&get_device_proc_addr)},
        {"vkDestroyDevice", fn(&destroy_device)},
        {"vkAcquireProfilingLockKHR", fn(&acquire_lock)},
        {"vkReleaseProfilingLockKHR", fn(&release_lock)},
        {"vkCreateQueryPool", fn(&create_query_pool)},
        {"vkDestroyQueryPool", fn(&destroy_query_pool)},
        {"vkBeginCommandBuffer", fn(&begin_command_buffer)},
        {"vkCmdResetQueryPool", fn(&cmd_reset_query_pool)},
        {"vkResetQueryPool", fn(&reset_query_pool)},
        {"vkResetQueryPoolEXT", fn(&reset_query_pool)},
        {"vkCmdBeginQuery", fn(&cmd_begin_query)},
        {"vkCmdEndQuery", fn(&cmd_end_query)},
        {"vkCmdCopyQueryPoolResults", fn(&cmd_copy_query_pool_results)},
        {"vkCmdExecuteCommands", fn(&cmd_execute_commands)},
        {"vkGetQueryPoolResults", fn(&get_query_pool_results)},
        {"vkQueueSubmit", fn(&queue_submit)},
        {"vkQueueSubmit2", fn(&queue_submit2)},
        {"vkQueueSubmit2KHR", fn(&queue_submit2)},
    };
    auto it = table.find(name);
    return it == table.end() ? nullptr : it->second;
}

VKAPI_ATTR PFN_vkVoidFunction VKAPI_CALL get_device_proc_addr(VkDevice device, const char* name) {
    if (!name) {
        return nullptr;
    }
    PFN_vkGetDeviceProcAddr next = nullptr;
    {
        std::lock_guard guard(g_lock);
        DeviceData* d = device_of(key(device));
        if (!d) {
            return nullptr;
        }
        next = d->gdpa;
    }
    if (PFN_vkVoidFunction own = own_device_command(name)) {
        // Functions of the lower device that the driver lacks stay absent (vkQueueSubmit2 on a
        // 1.0 device), except the extension's own.
        if (std::strcmp(name, "vkAcquireProfilingLockKHR") == 0 ||
            std::strcmp(name, "vkReleaseProfilingLockKHR") == 0 || next(device, name)) {
            return own;
        }
        return nullptr;
    }
    return next(device, name);
}

VKAPI_ATTR PFN_vkVoidFunction VKAPI_CALL get_instance_proc_addr(VkInstance instance,
                                                                const char* name);

PFN_vkVoidFunction own_instance_command(const char* name) {
    static const std::unordered_map<std::string_view, PFN_vkVoidFunction> table{
        {"vkGetInstanceProcAddr", fn(&get_instance_proc_addr)},
        {"vkCreateInstance", fn(&create_instance)},
        {"vkDestroyInstance", fn(&destroy_instance)},
        {"vkCreateDevice", fn(&create_device)},
        {"vkEnumerateDeviceExtensionProperties", fn(&enumerate_device_extensions)},
        {"vkGetPhysicalDeviceFeatures2", fn(&get_features2)},
        {"vkGetPhysicalDeviceFeatures2KHR", fn(&get_features2_khr)},
        {"vkGetPhysicalDeviceProperties2", fn(&get_properties2)},
        {"vkGetPhysicalDeviceProperties2KHR", fn(&get_properties2_khr)},
        {"vkEnumeratePhysicalDeviceQueueFamilyPerformanceQueryCountersKHR",
         fn(&enumerate_counters)},
        {"vkGetPhysicalDeviceQueueFamilyPerformanceQueryPassesKHR", fn(&get_passes)},
    };
    auto it = table.find(name);
    return it == table.end() ? nullptr : it->second;
}

VKAPI_ATTR PFN_vkVoidFunction VKAPI_CALL get_instance_proc_addr(VkInstance instance,
                                                                const char* name) {
    if (!name) {
        return nullptr;
    }
    PFN_vkVoidFunction own = own_instance_command(name);
    if (own && !instance) {
        return own;
    }
    if (PFN_vkVoidFunction device_own = own_device_command(name); device_own && instance) {
        return device_own;
    }
    if (!instance) {
        return nullptr;
    }
    PFN_vkGetInstanceProcAddr next = nullptr;
    {
        std::lock_guard guard(g_lock);
        InstanceData* d = instance_of(key(instance));
        if (!d) {
            return own;
        }
        next = d->gipa;
    }
    PFN_vkVoidFunction lower = next(instance, name);
    // The extension's own commands always; a command the fixture passes on (features2 and
    // properties2, core or KHR) only where the layers below have it.
    if (own && (lower || std::strstr(name, "PerformanceQuery") != nullptr)) {
        return own;
    }
    return lower;
}

} // namespace
} // namespace pqfixture

FIXTURE_EXPORT VKAPI_ATTR VkResult VKAPI_CALL
vkNegotiateLoaderLayerInterfaceVersion(VkNegotiateLayerInterface* version) {
    if (!version || version->sType != LAYER_NEGOTIATE_INTERFACE_STRUCT ||
        version->loaderLayerInterfaceVersion < 2) {
        return VK_ERROR_INITIALIZATION_FAILED;
    }
    version->loaderLayerInterfaceVersion = 2;
    version->pfnGetInstanceProcAddr = &pqfixture::get_instance_proc_addr;
    version->pfnGetDeviceProcAddr = &pqfixture::get_device_proc_addr;
    version->pfnGetPhysicalDeviceProcAddr = nullptr;
    return VK_SUCCESS;
}

FIXTURE_EXPORT VKAPI_ATTR PFN_vkVoidFunction VKAPI_CALL vkGetInstanceProcAddr(VkInstance instance,
                                                                              const char* name) {
    return pqfixture::get_instance_proc_addr(instance, name);
}

FIXTURE_EXPORT VKAPI_ATTR PFN_vkVoidFunction VKAPI_CALL vkGetDeviceProcAddr(VkDevice device,
                                                                            const char* name) {
    return pqfixture::get_device_proc_addr(device, name);
}
