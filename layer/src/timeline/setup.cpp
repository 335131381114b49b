#include "timeline/setup.hpp"

#include "core/log.hpp"

#include <algorithm>
#include <cstddef>
#include <cstring>

namespace vkscope::timeline {
namespace {

bool listed(const char* const* names, uint32_t count, const char* name) {
    for (uint32_t i = 0; i < count; ++i) {
        if (names[i] && std::strcmp(names[i], name) == 0) {
            return true;
        }
    }
    return false;
}

bool device_has_extension(const InstanceState& instance, VkPhysicalDevice physical,
                          const char* name) {
    uint32_t count = 0;
    auto enumerate = instance.next.EnumerateDeviceExtensionProperties;
    if (!enumerate || enumerate(physical, nullptr, &count, nullptr) != VK_SUCCESS) {
        return false;
    }
    std::vector<VkExtensionProperties> list(count);
    if (enumerate(physical, nullptr, &count, list.data()) < 0) {
        return false;
    }
    list.resize(count);
    return std::any_of(list.begin(), list.end(), [&](const VkExtensionProperties& e) {
        return std::strcmp(e.extensionName, name) == 0;
    });
}

// The physical device's support for the features of structure `T` (of sType `type`).
template <typename T>
T supported_features(PFN_vkGetPhysicalDeviceFeatures2 features2, VkPhysicalDevice physical,
                     VkStructureType type) {
    T out{};
    out.sType = type;
    VkPhysicalDeviceFeatures2 query{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2, &out, {}};
    features2(physical, &query);
    return out;
}

} // namespace

VkResult create_instance(const VkInstanceCreateInfo* info, const VkAllocationCallbacks* allocator,
                         VkInstance* instance, PFN_vkCreateInstance next_create,
                         VkLayerInstanceCreateInfo* link, bool& debug_utils) {
    debug_utils = listed(info->ppEnabledExtensionNames, info->enabledExtensionCount,
                         VK_EXT_DEBUG_UTILS_EXTENSION_NAME);
    if (debug_utils) {
        return next_create(info, allocator, instance);
    }
    std::vector<const char*> extensions(
        info->ppEnabledExtensionNames, info->ppEnabledExtensionNames + info->enabledExtensionCount);
    extensions.push_back(VK_EXT_DEBUG_UTILS_EXTENSION_NAME);
    VkInstanceCreateInfo copy = *info;
    copy.enabledExtensionCount = static_cast<uint32_t>(extensions.size());
    copy.ppEnabledExtensionNames = extensions.data();
    VkLayerInstanceLink* const rewind = link->u.pLayerInfo;
    const VkResult result = next_create(&copy, allocator, instance);
    if (result != VK_ERROR_EXTENSION_NOT_PRESENT) {
        debug_utils = result == VK_SUCCESS;
        return result;
    }
    // The layers below advanced the link on the way down; they need it back for a second try.
    link->u.pLayerInfo = rewind;
    log_once(LogLevel::warn, "timeline: VK_EXT_debug_utils is not available; workloads are not "
                             "tagged unless the device has VK_EXT_debug_marker");
    return next_create(info, allocator, instance);
}

DevicePatch::DevicePatch(const InstanceState& instance, VkPhysicalDevice physical,
                         const VkDeviceCreateInfo* info)
    : instance_(instance), physical_(physical), info_(*info),
      extensions_(info->ppEnabledExtensionNames,
                  info->ppEnabledExtensionNames + info->enabledExtensionCount) {
    for (uint32_t i = 0; i < info->queueCreateInfoCount; ++i) {
        VkDeviceQueueCreateInfo q = info->pQueueCreateInfos[i];
        q.pNext = nullptr;
        q.pQueuePriorities = nullptr;
        setup_.queues.push_back(q);
    }
    for (auto* s = static_cast<const VkBaseInStructure*>(info->pNext); s; s = s->pNext) {
        auto* link = reinterpret_cast<const VkLayerDeviceCreateInfo*>(s);
        if (s->sType == VK_STRUCTURE_TYPE_LOADER_DEVICE_CREATE_INFO &&
            link->function == VK_LOADER_DATA_CALLBACK) {
            setup_.set_loader_data = link->u.pfnSetDeviceLoaderData;
        }
    }
    if (instance.debug_utils) {
        setup_.label_api = LabelApi::debug_utils;
    } else if (listed(info->ppEnabledExtensionNames, info->enabledExtensionCount,
                      VK_EXT_DEBUG_MARKER_EXTENSION_NAME)) {
        setup_.label_api = LabelApi::debug_marker;
    }
    enable_timeline_semaphores();
    info_.enabledExtensionCount = static_cast<uint32_t>(extensions_.size());
    info_.ppEnabledExtensionNames = extensions_.data();
}

bool DevicePatch::offers(const char* extension) const {
    return device_has_extension(instance_, physical_, extension);
}

bool DevicePatch::enables(const char* extension) const {
    return listed(extensions_.data(), static_cast<uint32_t>(extensions_.size()), extension);
}

void DevicePatch::enable(const char* extension) {
    if (!enables(extension)) {
        extensions_.push_back(extension);
        info_.enabledExtensionCount = static_cast<uint32_t>(extensions_.size());
        info_.ppEnabledExtensionNames = extensions_.data();
    }
}

bool DevicePatch::enable_feature(VkBool32 VkPhysicalDeviceFeatures::*feature) {
    VkPhysicalDeviceFeatures supported{};
    instance_.next.GetPhysicalDeviceFeatures(physical_, &supported);
    if (!(supported.*feature)) {
        return false;
    }
    // With VkPhysicalDeviceFeatures2 in the chain, pEnabledFeatures must stay null: the flag goes
    // into the application's structure and is switched back after the call.
    if (VkBaseOutStructure* app = chained(VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2)) {
        switch_on(&(reinterpret_cast<VkPhysicalDeviceFeatures2*>(app)->features.*feature));
        return true;
    }
    if (!features_) {
        features_ = info_.pEnabledFeatures ? *info_.pEnabledFeatures : VkPhysicalDeviceFeatures{};
    }
    (*features_).*feature = VK_TRUE;
    info_.pEnabledFeatures = &*features_;
    return true;
}

bool DevicePatch::enable_mesh_shader_queries() {
    if (!enables(VK_EXT_MESH_SHADER_EXTENSION_NAME)) {
        return false;
    }
    auto* app = reinterpret_cast<VkPhysicalDeviceMeshShaderFeaturesEXT*>(
        chained(VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_MESH_SHADER_FEATURES_EXT));
    if (!app || !(app->taskShader || app->meshShader)) {
        return false;
    }
    const PFN_vkGetPhysicalDeviceFeatures2 features2 = features2_command();
    if (!features2) {
        return false;
    }
    if (!supported_features<VkPhysicalDeviceMeshShaderFeaturesEXT>(
             features2, physical_, VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_MESH_SHADER_FEATURES_EXT)
             .meshShaderQueries) {
        return false;
    }
    switch_on(&app->meshShaderQueries);
    return true;
}

DevicePatch::~DevicePatch() {
    for (VkBool32* flag : switched_features_) {
        *flag = VK_FALSE;
    }
}

VkBaseOutStructure* DevicePatch::chained(VkStructureType type) const {
    for (auto* s = static_cast<const VkBaseInStructure*>(info_.pNext); s; s = s->pNext) {
        if (s->sType == type) {
            return reinterpret_cast<VkBaseOutStructure*>(const_cast<VkBaseInStructure*>(s));
        }
    }
    return nullptr;
}

void DevicePatch::switch_on(VkBool32* flag) {
    if (!*flag) {
        *flag = VK_TRUE;
        switched_features_.push_back(flag);
    }
}

void DevicePatch::chain(VkBaseOutStructure* ours) {
    ours->pNext = static_cast<VkBaseOutStructure*>(const_cast<void*>(info_.pNext));
    info_.pNext = ours;
}

void DevicePatch::enable_chained_feature(VkStructureType type, size_t flag_offset,
                                         VkBaseOutStructure* ours) {
    if (VkBaseOutStructure* app = chained(type)) {
        switch_on(reinterpret_cast<VkBool32*>(reinterpret_cast<char*>(app) + flag_offset));
    } else {
        chain(ours);
    }
}

bool DevicePatch::core_1_2() const {
    VkPhysicalDeviceProperties props{};
    instance_.next.GetPhysicalDeviceProperties(physical_, &props);
    return std::min(instance_.api_version, props.apiVersion) >= VK_API_VERSION_1_2;
}

PFN_vkGetPhysicalDeviceFeatures2 DevicePatch::features2_command() const {
    const InstanceDispatch& in = instance_.next;
    if (instance_.api_version >= VK_API_VERSION_1_1 && in.GetPhysicalDeviceFeatures2) {
        return in.GetPhysicalDeviceFeatures2;
    }
    return in.GetPhysicalDeviceFeatures2KHR;
}

template <typename T>
bool DevicePatch::enable_promoted_feature(const char* extension, VkStructureType type,
                                          VkBool32 T::*flag,
                                          VkBool32 VkPhysicalDeviceVulkan12Features::*flag12,
                                          T& ours) {
    const bool core = core_1_2();
    const PFN_vkGetPhysicalDeviceFeatures2 features2 = features2_command();
    const bool by_extension = !core && offers(extension);
    if (!features2 || (!core && !by_extension) ||
        !(supported_features<T>(features2, physical_, type).*flag)) {
        return false;
    }
    // A feature may be named once in a chain: in the application's Vulkan 1.2 features or the
    // extension's structure where it chains either (switched back after the call), else in ours.
    if (VkBaseOutStructure* app = chained(VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES)) {
        switch_on(&(reinterpret_cast<VkPhysicalDeviceVulkan12Features*>(app)->*flag12));
    } else if (VkBaseOutStructure* app_ext = chained(type)) {
        switch_on(&(reinterpret_cast<T*>(app_ext)->*flag));
    } else {
        ours.sType = type;
        ours.*flag = VK_TRUE;
        chain(reinterpret_cast<VkBaseOutStructure*>(&ours));
    }
    if (by_extension) {
        enable(extension);
    }
    return true;
}

bool DevicePatch::enable_host_query_reset() {
    if (!host_query_reset_) {
        host_query_reset_ = enable_promoted_feature(
            VK_EXT_HOST_QUERY_RESET_EXTENSION_NAME,
            VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_HOST_QUERY_RESET_FEATURES,
            &VkPhysicalDeviceHostQueryResetFeatures::hostQueryReset,
            &VkPhysicalDeviceVulkan12Features::hostQueryReset, host_query_reset_ours_);
    }
    return *host_query_reset_;
}

void DevicePatch::enable_timeline_semaphores() {
    setup_.timeline_semaphores = enable_promoted_feature(
        VK_KHR_TIMELINE_SEMAPHORE_EXTENSION_NAME,
        VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_TIMELINE_SEMAPHORE_FEATURES,
        &VkPhysicalDeviceTimelineSemaphoreFeatures::timelineSemaphore,
        &VkPhysicalDeviceVulkan12Features::timelineSemaphore, timeline_semaphore_ours_);
}

} // namespace vkscope::timeline
