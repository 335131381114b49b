// What an instance and its physical devices show of the extension, which the driver below lacks:
// the extension itself, its features and properties, the counters and the passes they need.

#include "entry_points.hpp"
#include "state.hpp"

#include <algorithm>
#include <cstdio>
#include <cstring>

namespace pqfixture {
namespace {

constexpr const char* kLayerName = "VK_LAYER_VKSCOPE_test_performance_query";

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

} // namespace

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

VKAPI_ATTR void VKAPI_CALL get_features2(VkPhysicalDevice pd, VkPhysicalDeviceFeatures2* f) {
    features2_through(copy_instance(pd).features2, pd, f);
}

VKAPI_ATTR void VKAPI_CALL get_features2_khr(VkPhysicalDevice pd, VkPhysicalDeviceFeatures2* f) {
    features2_through(copy_instance(pd).features2_khr, pd, f);
}

VKAPI_ATTR void VKAPI_CALL get_properties2(VkPhysicalDevice pd, VkPhysicalDeviceProperties2* p) {
    properties2_through(copy_instance(pd).properties2, pd, p);
}

VKAPI_ATTR void VKAPI_CALL get_properties2_khr(VkPhysicalDevice pd,
                                               VkPhysicalDeviceProperties2* p) {
    properties2_through(copy_instance(pd).properties2_khr, pd, p);
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

} // namespace pqfixture
