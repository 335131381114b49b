// What the loader calls: interface negotiation, the two GetProcAddr functions, and the exported
// introspection functions. Everything else reaches the layer through the pointers handed out here.

#include "command_tables.hpp"
#include "core/layer_info.hpp"
#include "core/state.hpp"
#include "introspection.hpp"

#include <cstring>
#include <vulkan/vk_layer.h>

#define VKSCOPE_EXPORT extern "C" __attribute__((visibility("default")))

namespace vkscope {
namespace {

VKAPI_ATTR PFN_vkVoidFunction VKAPI_CALL get_device_proc_addr(VkDevice device, const char* pName);

bool wrapped(const InstanceState& s) {
    return s.settings.passthrough == Passthrough::wrapped;
}

// The layer's own pointer for `name` if it has one to give for this instance, else `next`.
PFN_vkVoidFunction choose(const InstanceState& instance, const char* name,
                          PFN_vkVoidFunction next) {
    if (const HookEntry* hook = find_hook(name); hook && instance.enabled(hook->feature)) {
        return hook->function;
    }
    if (wrapped(instance)) {
        if (const PassthroughEntry* pt = find_passthrough(name)) {
            return pt->function;
        }
    }
    // Not ours, or newer than the registry the layer was built from: forwarded untouched.
    return next;
}

VKAPI_ATTR PFN_vkVoidFunction VKAPI_CALL get_instance_proc_addr(VkInstance instance,
                                                                const char* pName) {
    if (!pName) {
        return nullptr;
    }
    if (std::strcmp(pName, "vkGetInstanceProcAddr") == 0) {
        return reinterpret_cast<PFN_vkVoidFunction>(&get_instance_proc_addr);
    }
    if (std::strcmp(pName, "vkGetDeviceProcAddr") == 0) {
        return reinterpret_cast<PFN_vkVoidFunction>(&get_device_proc_addr);
    }
    const HookEntry* hook = find_hook(pName);
    if (hook && hook->level == CommandLevel::global) {
        return hook->function; // vkCreateInstance: there is no instance yet
    }
    InstanceState* state = find_instance(instance);
    if (!state) {
        return nullptr;
    }
    // Expose nothing the layers and driver below do not expose.
    PFN_vkVoidFunction next = state->next_gipa(instance, pName);
    return next ? choose(*state, pName, next) : nullptr;
}

VKAPI_ATTR PFN_vkVoidFunction VKAPI_CALL get_device_proc_addr(VkDevice device, const char* pName) {
    if (!pName) {
        return nullptr;
    }
    if (std::strcmp(pName, "vkGetDeviceProcAddr") == 0) {
        return reinterpret_cast<PFN_vkVoidFunction>(&get_device_proc_addr);
    }
    DeviceState* state = find_device(device);
    if (!state) {
        return nullptr;
    }
    PFN_vkVoidFunction next = state->next_gdpa(device, pName);
    return next ? choose(*state->instance, pName, next) : nullptr;
}

} // namespace
} // namespace vkscope

using namespace vkscope;

VKSCOPE_EXPORT VKAPI_ATTR VkResult VKAPI_CALL
vkNegotiateLoaderLayerInterfaceVersion(VkNegotiateLayerInterface* pVersionStruct) {
    if (!pVersionStruct || pVersionStruct->sType != LAYER_NEGOTIATE_INTERFACE_STRUCT) {
        return VK_ERROR_INITIALIZATION_FAILED;
    }
    if (pVersionStruct->loaderLayerInterfaceVersion < 2) {
        return VK_ERROR_INITIALIZATION_FAILED;
    }
    pVersionStruct->loaderLayerInterfaceVersion = 2;
    pVersionStruct->pfnGetInstanceProcAddr = &get_instance_proc_addr;
    pVersionStruct->pfnGetDeviceProcAddr = &get_device_proc_addr;
    pVersionStruct->pfnGetPhysicalDeviceProcAddr = nullptr;
    return VK_SUCCESS;
}

VKSCOPE_EXPORT VKAPI_ATTR PFN_vkVoidFunction VKAPI_CALL vkGetInstanceProcAddr(VkInstance instance,
                                                                              const char* pName) {
    return get_instance_proc_addr(instance, pName);
}

VKSCOPE_EXPORT VKAPI_ATTR PFN_vkVoidFunction VKAPI_CALL vkGetDeviceProcAddr(VkDevice device,
                                                                            const char* pName) {
    return get_device_proc_addr(device, pName);
}

VKSCOPE_EXPORT VKAPI_ATTR VkResult VKAPI_CALL
vkEnumerateInstanceLayerProperties(uint32_t* pPropertyCount, VkLayerProperties* pProperties) {
    return layer_properties(pPropertyCount, pProperties);
}

VKSCOPE_EXPORT VKAPI_ATTR VkResult VKAPI_CALL vkEnumerateInstanceExtensionProperties(
    const char* pLayerName, uint32_t* pPropertyCount, VkExtensionProperties* pProperties) {
    return instance_extension_properties(pLayerName, pPropertyCount, pProperties);
}

VKSCOPE_EXPORT VKAPI_ATTR VkResult VKAPI_CALL vkEnumerateDeviceLayerProperties(
    VkPhysicalDevice, uint32_t* pPropertyCount, VkLayerProperties* pProperties) {
    return layer_properties(pPropertyCount, pProperties);
}

VKSCOPE_EXPORT VKAPI_ATTR VkResult VKAPI_CALL
vkEnumerateDeviceExtensionProperties(VkPhysicalDevice physicalDevice, const char* pLayerName,
                                     uint32_t* pPropertyCount, VkExtensionProperties* pProperties) {
    return hooks::vkEnumerateDeviceExtensionProperties(physicalDevice, pLayerName, pPropertyCount,
                                                       pProperties);
}
