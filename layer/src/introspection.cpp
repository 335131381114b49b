// The layer's answers about itself. vkscope adds no extension, so each query about vkscope
// reports none, and a query about any other layer (or the implementation) goes down the chain
// unchanged: answering it here would hide the other layer's extensions.

#include "introspection.hpp"
#include "command_tables.hpp"
#include "core/layer_info.hpp"
#include "core/state.hpp"

#include <cstring>

namespace vkscope {
namespace {

bool is_this_layer(const char* name) {
    return name && std::strcmp(name, kLayerName) == 0;
}

} // namespace

VkResult layer_properties(uint32_t* pPropertyCount, VkLayerProperties* pProperties) {
    if (!pProperties) {
        *pPropertyCount = 1;
        return VK_SUCCESS;
    }
    if (*pPropertyCount < 1) {
        return VK_INCOMPLETE;
    }
    VkLayerProperties props{};
    std::strncpy(props.layerName, kLayerName, sizeof(props.layerName) - 1);
    std::strncpy(props.description, kLayerDescription, sizeof(props.description) - 1);
    props.specVersion = VK_MAKE_API_VERSION(0, 1, 3, kRegistryHeaderVersion);
    props.implementationVersion = 1;
    *pProperties = props;
    *pPropertyCount = 1;
    return VK_SUCCESS;
}

VkResult instance_extension_properties(const char* pLayerName, uint32_t* pPropertyCount,
                                       VkExtensionProperties* /*pProperties*/) {
    if (!is_this_layer(pLayerName)) {
        return VK_ERROR_LAYER_NOT_PRESENT;
    }
    *pPropertyCount = 0;
    return VK_SUCCESS;
}

VKAPI_ATTR VkResult VKAPI_CALL hooks::vkEnumerateDeviceExtensionProperties(
    VkPhysicalDevice physicalDevice, const char* pLayerName, uint32_t* pPropertyCount,
    VkExtensionProperties* pProperties) {
    if (is_this_layer(pLayerName)) {
        *pPropertyCount = 0;
        return VK_SUCCESS;
    }
    InstanceState* instance = find_instance(physicalDevice);
    if (!instance || !instance->next.EnumerateDeviceExtensionProperties) {
        return VK_ERROR_LAYER_NOT_PRESENT;
    }
    return instance->next.EnumerateDeviceExtensionProperties(physicalDevice, pLayerName,
                                                             pPropertyCount, pProperties);
}

} // namespace vkscope
