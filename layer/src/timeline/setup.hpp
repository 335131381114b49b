#pragma once
// What the timeline changes in instance and device creation: VK_EXT_debug_utils for its labels
// and timeline semaphores for knowing when the GPU is done, both enabled even if the application
// did not ask for them.

#include "core/state.hpp"
#include "timeline/device.hpp"

#include <optional>
#include <vector>
#include <vulkan/vk_layer.h>

namespace vkscope::timeline {

// Calls next_create with VK_EXT_debug_utils added to the application's extensions, or, when the
// implementation refuses it, with the application's own create info. `link` is this layer's
// already advanced loader link, rewound for a second attempt.
VkResult create_instance(const VkInstanceCreateInfo* info, const VkAllocationCallbacks* allocator,
                         VkInstance* instance, PFN_vkCreateInstance next_create,
                         VkLayerInstanceCreateInfo* link, bool& debug_utils);

// Holds a modified copy of a VkDeviceCreateInfo for the duration of vkCreateDevice. A feature
// flag it had to switch on inside the application's own structures is switched back when it
// goes out of scope. Instruments add what they need through it (InstrumentProvider::prepare).
class DevicePatch {
public:
    DevicePatch(const InstanceState& instance, VkPhysicalDevice physical,
                const VkDeviceCreateInfo* info);
    ~DevicePatch();
    DevicePatch(const DevicePatch&) = delete;
    DevicePatch& operator=(const DevicePatch&) = delete;

    const VkDeviceCreateInfo* info() const { return &info_; }
    const DeviceSetup& setup() const { return setup_; }

    const InstanceState& instance() const { return instance_; }
    VkPhysicalDevice physical() const { return physical_; }
    // The physical device offers the extension.
    bool offers(const char* extension) const;
    // The device will be created with it (the application's or added).
    bool enables(const char* extension) const;
    void enable(const char* extension);
    // Enables a VkPhysicalDeviceFeatures member the physical device supports, wherever the
    // application's create info keeps its features (switched back afterwards in its own
    // structures). False when the device does not support it.
    bool enable_feature(VkBool32 VkPhysicalDeviceFeatures::*feature);
    // VK_EXT_mesh_shader's meshShaderQueries, where the application enables task or mesh shaders
    // (without them their statistics could only be zero) and the device supports it: switched on
    // in the application's own feature structure, and back afterwards.
    bool enable_mesh_shader_queries();
    // Switches on the VkBool32 at `flag_offset` of the application's structure of `type` when its
    // chain has one (switched back afterwards: a structure may appear once in a chain), else
    // chains `ours`, which the caller keeps alive until the device is created.
    void enable_chained_feature(VkStructureType type, size_t flag_offset, VkBaseOutStructure* ours);
    // hostQueryReset (Vulkan 1.2, or VK_EXT_host_query_reset before it), where the device
    // supports it; false where not. Asked by every instrument that resets queries on the host.
    bool enable_host_query_reset();

private:
    // The application's structure of `type` in the chain (null: none), to switch flags on in.
    VkBaseOutStructure* chained(VkStructureType type) const;
    // Switches a flag of the application's structures on, and back when the patch goes.
    void switch_on(VkBool32* flag);
    // Chains `ours` (kept alive by the caller until the device is created) in front.
    void chain(VkBaseOutStructure* ours);
    // A feature Vulkan 1.2 took over from `extension` (its structure of `type`, the feature at
    // `flag` there and at `flag12` in VkPhysicalDeviceVulkan12Features), where the device
    // supports it: switched on where the application names its features, else in `ours`; the
    // extension enabled below Vulkan 1.2. False where the device lacks it.
    template <typename T>
    bool enable_promoted_feature(const char* extension, VkStructureType type, VkBool32 T::*flag,
                                 VkBool32 VkPhysicalDeviceVulkan12Features::*flag12, T& ours);
    // Both the instance's and the device's Vulkan are 1.2 or later: its features are core.
    bool core_1_2() const;
    // vkGetPhysicalDeviceFeatures2 (Vulkan 1.1) or its KHR form, whichever the instance has; null
    // with neither.
    PFN_vkGetPhysicalDeviceFeatures2 features2_command() const;
    void enable_timeline_semaphores();

    const InstanceState& instance_;
    const VkPhysicalDevice physical_;
    VkDeviceCreateInfo info_;
    std::vector<const char*> extensions_;
    VkPhysicalDeviceTimelineSemaphoreFeatures timeline_semaphore_ours_{};
    VkPhysicalDeviceHostQueryResetFeatures host_query_reset_ours_{};
    std::optional<bool> host_query_reset_;
    std::vector<VkBool32*> switched_features_;
    std::optional<VkPhysicalDeviceFeatures> features_; // a copy of pEnabledFeatures, patched
    DeviceSetup setup_;
};

} // namespace vkscope::timeline
