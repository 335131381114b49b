// VK_LAYER_VKSCOPE_counting: the bottom of the record-cost benchmark's layer stack. vkCmdDraw and
// vkCmdDispatch stop here after bumping a counter, so a benchmark that places vkscope above this
// layer times vkscope's dispatch and nothing of the driver's recording. Everything else is the
// next layer's own pointer, so the layer is invisible to the rest of the application.

#include <cstdint>
#include <cstring>
#include <mutex>
#include <unordered_map>
#include <vulkan/vk_layer.h>

#define COUNTING_EXPORT extern "C" __attribute__((visibility("default")))

// Per thread, so two recording threads never write the same cache line. initial-exec keeps the
// access a single %fs-relative add instead of a __tls_get_addr call, which would put a second
// call into the floor being measured; the few bytes fit the static TLS reserve that dlopen'ed
// libraries share. (Checked: with this the swallowing functions time the same as empty ones.)
// External linkage (hidden by the visibility preset) so the compiler cannot prove the counter is
// never read and drop the increment.
namespace counting {
__attribute__((tls_model("initial-exec"))) thread_local std::uint64_t t_swallowed = 0;
} // namespace counting

namespace {

using counting::t_swallowed;

struct InstanceData {
    VkInstance handle = VK_NULL_HANDLE;
    PFN_vkGetInstanceProcAddr gipa = nullptr;
    PFN_vkDestroyInstance destroy = nullptr;
};

struct DeviceData {
    PFN_vkGetDeviceProcAddr gdpa = nullptr;
    PFN_vkDestroyDevice destroy = nullptr;
};

// Keyed by the loader's dispatch pointer, which an instance shares with its physical devices and
// a device with its queues and command buffers. Only creation, destruction and GetProcAddr take
// the lock; the swallowed commands never look anything up.
std::mutex g_lock;
std::unordered_map<void*, InstanceData> g_instances;
std::unordered_map<void*, DeviceData> g_devices;

template <typename Handle> void* key(Handle handle) {
    return *reinterpret_cast<void**>(handle);
}

template <typename LinkInfo> LinkInfo* find_link(const void* chain, VkStructureType type) {
    for (auto* s = static_cast<const VkBaseInStructure*>(chain); s; s = s->pNext) {
        auto* info = reinterpret_cast<const LinkInfo*>(s);
        if (s->sType == type && info->function == VK_LAYER_LINK_INFO) {
            // The loader hands the chain in as const yet expects each layer to advance it.
            return const_cast<LinkInfo*>(info);
        }
    }
    return nullptr;
}

VKAPI_ATTR void VKAPI_CALL cmd_draw(VkCommandBuffer, uint32_t, uint32_t, uint32_t, uint32_t) {
    ++t_swallowed;
}

VKAPI_ATTR void VKAPI_CALL cmd_dispatch(VkCommandBuffer, uint32_t, uint32_t, uint32_t) {
    ++t_swallowed;
}

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
    if (!next_create) {
        return VK_ERROR_INITIALIZATION_FAILED;
    }
    VkResult result = next_create(info, allocator, instance);
    if (result != VK_SUCCESS) {
        return result;
    }
    InstanceData data;
    data.handle = *instance;
    data.gipa = gipa;
    data.destroy = reinterpret_cast<PFN_vkDestroyInstance>(gipa(*instance, "vkDestroyInstance"));
    std::lock_guard guard(g_lock);
    g_instances[key(*instance)] = data;
    return VK_SUCCESS;
}

VKAPI_ATTR void VKAPI_CALL destroy_instance(VkInstance instance,
                                            const VkAllocationCallbacks* allocator) {
    if (!instance) {
        return;
    }
    InstanceData data;
    {
        std::lock_guard guard(g_lock);
        auto it = g_instances.find(key(instance));
        if (it == g_instances.end()) {
            return;
        }
        data = it->second;
        g_instances.erase(it);
    }
    data.destroy(instance, allocator);
}

VKAPI_ATTR VkResult VKAPI_CALL create_device(VkPhysicalDevice physical_device,
                                             const VkDeviceCreateInfo* info,
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

    VkInstance instance = VK_NULL_HANDLE;
    {
        // A physical device carries its instance's dispatch pointer.
        std::lock_guard guard(g_lock);
        auto it = g_instances.find(key(physical_device));
        if (it == g_instances.end()) {
            return VK_ERROR_INITIALIZATION_FAILED;
        }
        instance = it->second.handle;
    }
    auto next_create = reinterpret_cast<PFN_vkCreateDevice>(gipa(instance, "vkCreateDevice"));
    if (!next_create) {
        return VK_ERROR_INITIALIZATION_FAILED;
    }
    VkResult result = next_create(physical_device, info, allocator, device);
    if (result != VK_SUCCESS) {
        return result;
    }
    DeviceData data;
    data.gdpa = gdpa;
    data.destroy = reinterpret_cast<PFN_vkDestroyDevice>(gdpa(*device, "vkDestroyDevice"));
    std::lock_guard guard(g_lock);
    g_devices[key(*device)] = data;
    return VK_SUCCESS;
}

VKAPI_ATTR void VKAPI_CALL destroy_device(VkDevice device, const VkAllocationCallbacks* allocator) {
    if (!device) {
        return;
    }
    DeviceData data;
    {
        std::lock_guard guard(g_lock);
        auto it = g_devices.find(key(device));
        if (it == g_devices.end()) {
            return;
        }
        data = it->second;
        g_devices.erase(it);
    }
    data.destroy(device, allocator);
}

PFN_vkVoidFunction own_device_command(const char* name);

VKAPI_ATTR PFN_vkVoidFunction VKAPI_CALL get_device_proc_addr(VkDevice device, const char* name) {
    if (!name) {
        return nullptr;
    }
    if (PFN_vkVoidFunction own = own_device_command(name)) {
        return own;
    }
    PFN_vkGetDeviceProcAddr next = nullptr;
    {
        std::lock_guard guard(g_lock);
        auto it = g_devices.find(key(device));
        if (it == g_devices.end()) {
            return nullptr;
        }
        next = it->second.gdpa;
    }
    return next(device, name);
}

PFN_vkVoidFunction own_device_command(const char* name) {
    if (std::strcmp(name, "vkGetDeviceProcAddr") == 0) {
        return reinterpret_cast<PFN_vkVoidFunction>(&get_device_proc_addr);
    }
    if (std::strcmp(name, "vkDestroyDevice") == 0) {
        return reinterpret_cast<PFN_vkVoidFunction>(&destroy_device);
    }
    if (std::strcmp(name, "vkCmdDraw") == 0) {
        return reinterpret_cast<PFN_vkVoidFunction>(&cmd_draw);
    }
    if (std::strcmp(name, "vkCmdDispatch") == 0) {
        return reinterpret_cast<PFN_vkVoidFunction>(&cmd_dispatch);
    }
    return nullptr;
}

VKAPI_ATTR PFN_vkVoidFunction VKAPI_CALL get_instance_proc_addr(VkInstance instance,
                                                                const char* name) {
    if (!name) {
        return nullptr;
    }
    if (std::strcmp(name, "vkGetInstanceProcAddr") == 0) {
        return reinterpret_cast<PFN_vkVoidFunction>(&get_instance_proc_addr);
    }
    if (std::strcmp(name, "vkCreateInstance") == 0) {
        return reinterpret_cast<PFN_vkVoidFunction>(&create_instance);
    }
    if (std::strcmp(name, "vkDestroyInstance") == 0) {
        return reinterpret_cast<PFN_vkVoidFunction>(&destroy_instance);
    }
    if (std::strcmp(name, "vkCreateDevice") == 0) {
        return reinterpret_cast<PFN_vkVoidFunction>(&create_device);
    }
    // Device commands asked through the instance must still land on the swallowing versions.
    if (PFN_vkVoidFunction own = own_device_command(name)) {
        return own;
    }
    if (!instance) {
        return nullptr;
    }
    PFN_vkGetInstanceProcAddr next = nullptr;
    {
        std::lock_guard guard(g_lock);
        auto it = g_instances.find(key(instance));
        if (it == g_instances.end()) {
            return nullptr;
        }
        next = it->second.gipa;
    }
    return next(instance, name);
}

} // namespace

COUNTING_EXPORT VKAPI_ATTR VkResult VKAPI_CALL
vkNegotiateLoaderLayerInterfaceVersion(VkNegotiateLayerInterface* version) {
    if (!version || version->sType != LAYER_NEGOTIATE_INTERFACE_STRUCT ||
        version->loaderLayerInterfaceVersion < 2) {
        return VK_ERROR_INITIALIZATION_FAILED;
    }
    version->loaderLayerInterfaceVersion = 2;
    version->pfnGetInstanceProcAddr = &get_instance_proc_addr;
    version->pfnGetDeviceProcAddr = &get_device_proc_addr;
    version->pfnGetPhysicalDeviceProcAddr = nullptr;
    return VK_SUCCESS;
}

COUNTING_EXPORT VKAPI_ATTR PFN_vkVoidFunction VKAPI_CALL vkGetInstanceProcAddr(VkInstance instance,
                                                                               const char* name) {
    return get_instance_proc_addr(instance, name);
}

COUNTING_EXPORT VKAPI_ATTR PFN_vkVoidFunction VKAPI_CALL vkGetDeviceProcAddr(VkDevice device,
                                                                             const char* name) {
    return get_device_proc_addr(device, name);
}
