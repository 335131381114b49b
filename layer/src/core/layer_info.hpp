#pragma once
// The layer's identity as the loader and the capture server see it.

namespace vkscope {

inline constexpr const char* kLayerName = "VK_LAYER_VKSCOPE_profiler";
// Key of the layer in vk_layer_settings.txt: the layer name without VK_LAYER_, lower case.
inline constexpr const char* kSettingsFileKey = "vkscope_profiler";
inline constexpr const char* kEnvPrefix = "VK_VKSCOPE_";
inline constexpr const char* kLayerDescription =
    "vkscope: per-workload GPU timeline, timing and counters";

} // namespace vkscope
