// The loader interface and the dispatch: which commands the fixture answers itself, and which it
// leaves to the layers below.

#include "entry_points.hpp"
#include "state.hpp"

#include <cstring>
#include <string_view>
#include <unordered_map>

#define FIXTURE_EXPORT extern "C" __attribute__((visibility("default")))

namespace pqfixture {
namespace {

template <typename F> PFN_vkVoidFunction fn(F* f) {
    return reinterpret_cast<PFN_vkVoidFunction>(f);
}

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

} // namespace

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
