#pragma once
// Reads the layer settings from their three sources, in Vulkan's usual precedence (lowest
// first): VK_EXT_layer_settings from the application, then vk_layer_settings.txt, then
// VK_VKSCOPE_<SETTING> environment variables. A later source overrides an earlier one.
//
// An unknown setting or a value a setting cannot take is reported (once per process, as a
// warning) and ignored, so the setting keeps what the lower sources or its default gave it.

#include "settings.gen.hpp"

#include <string>
#include <vector>
#include <vulkan/vulkan.h>

namespace vkscope {

struct SettingsReport {
    SettingValues values;
    std::vector<std::string> problems; // one human-readable line each
};

// `next` is the pNext chain of VkInstanceCreateInfo.
SettingsReport read_settings(const void* next);

} // namespace vkscope
