#pragma once

#include <vulkan/vulkan.h>

namespace vkscope {

VkResult layer_properties(uint32_t* pPropertyCount, VkLayerProperties* pProperties);
VkResult instance_extension_properties(const char* pLayerName, uint32_t* pPropertyCount,
                                       VkExtensionProperties* pProperties);

} // namespace vkscope
