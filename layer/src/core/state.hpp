#pragma once
// The layer's state for each VkInstance and VkDevice, and the registries that find it from any
// handle of that instance or device.

#include "core/frame_selection.hpp"
#include "core/handle_registry.hpp"
#include "dispatch_tables.gen.hpp"
#include "hooks.gen.hpp"
#include "settings.gen.hpp"

#include <bitset>
#include <memory>
#include <vulkan/vulkan.h>

namespace vkscope {

class MessageChannel;

struct InstanceState {
    VkInstance handle = VK_NULL_HANDLE;
    PFN_vkGetInstanceProcAddr next_gipa = nullptr;
    InstanceDispatch next;
    SettingValues settings;
    std::bitset<kFeatureCount> features;
    uint32_t api_version = VK_API_VERSION_1_0; // what the application asked for
    bool debug_utils = false;                  // VK_EXT_debug_utils enabled (maybe by the layer)
    std::shared_ptr<MessageChannel> server;    // timeline only; null when nothing is sent
    uint64_t server_user = 0;                  // for release_server_channel
    FrameSelection frames;                     // the `frames` setting, parsed

    bool enabled(Feature f) const { return features.test(static_cast<unsigned>(f)); }
};

// What the layer's features keep for one device (the timeline and its instruments). The core only
// owns it, so that it lives exactly as long as the device and goes before the device itself; it
// never looks inside.
class DeviceFeatureState {
public:
    virtual ~DeviceFeatureState() = default;
};

struct DeviceState {
    VkDevice handle = VK_NULL_HANDLE;
    VkPhysicalDevice physical = VK_NULL_HANDLE;
    InstanceState* instance = nullptr;
    PFN_vkGetDeviceProcAddr next_gdpa = nullptr;
    DeviceDispatch next;
    std::unique_ptr<DeviceFeatureState> features; // null when no feature is on for the device

    DeviceState() = default;
    DeviceState(const DeviceState&) = delete;
    DeviceState& operator=(const DeviceState&) = delete;
};

extern HandleRegistry<InstanceState> g_instances;
extern HandleRegistry<DeviceState> g_devices;

// Instance of a VkInstance or VkPhysicalDevice (they share the instance's dispatch key).
[[gnu::always_inline]] inline InstanceState* find_instance(const void* handle) {
    return handle ? g_instances.find(dispatch_key(handle)) : nullptr;
}
// Device of a VkDevice, VkQueue or VkCommandBuffer.
[[gnu::always_inline]] inline DeviceState* find_device(const void* handle) {
    return handle ? g_devices.find(dispatch_key(handle)) : nullptr;
}

} // namespace vkscope
