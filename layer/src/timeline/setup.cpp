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
    for (auto* s = static_cast<const VkBaseInStructure*>(info_.pNext); s; s = s->pNext) {
        if (s->sType == VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2) {
            VkBool32* flag = &(const_cast<VkPhysicalDeviceFeatures2*>(
                                   reinterpret_cast<const VkPhysicalDeviceFeatures2*>(s))
                                   ->features.*
                               feature);
            if (!*flag) {
                *flag = VK_TRUE;
                switched_features_.push_back(flag);
            }
            return true;
        }
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
    VkPhysicalDeviceMeshShaderFeaturesEXT* app = nullptr;
    for (auto* s = static_cast<const VkBaseInStructure*>(info_.pNext); s; s = s->pNext) {
        if (s->sType == VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_MESH_SHADER_FEATURES_EXT) {
            app = const_cast<VkPhysicalDeviceMeshShaderFeaturesEXT*>(
                reinterpret_cast<const VkPhysicalDeviceMeshShaderFeaturesEXT*>(s));
        }
    }
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
    if (!app->meshShaderQueries) {
        app->meshShaderQueries = VK_TRUE;
        switched_features_.push_back(&app->meshShaderQueries);
    }
    return true;
}

DevicePatch::~DevicePatch() {
    if (switched_on_) {
        *switched_on_ = VK_FALSE;
    }
    for (VkBool32* flag : switched_features_) {
        *flag = VK_FALSE;
    }
}

void DevicePatch::enable_chained_feature(VkStructureType type, size_t flag_offset,
                                         VkBaseOutStructure* ours) {
    for (auto* s = static_cast<const VkBaseInStructure*>(info_.pNext); s; s = s->pNext) {
        if (s->sType == type) {
            auto* flag = reinterpret_cast<VkBool32*>(
                reinterpret_cast<char*>(const_cast<VkBaseInStructure*>(s)) + flag_offset);
            if (!*flag) {
                *flag = VK_TRUE;
                switched_features_.push_back(flag);
            }
            return;
        }
    }
    ours->pNext = static_cast<VkBaseOutStructure*>(const_cast<void*>(info_.pNext));
    info_.pNext = ours;
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

bool DevicePatch::enable_host_query_reset() {
    if (host_query_reset_) {
        return *host_query_reset_;
    }
    host_query_reset_ = false;
    const bool core = core_1_2();
    const PFN_vkGetPhysicalDeviceFeatures2 features2 = features2_command();
    const bool extension = !core && offers(VK_EXT_HOST_QUERY_RESET_EXTENSION_NAME);
    if (!features2 || (!core && !extension)) {
        return false;
    }
    if (!supported_features<VkPhysicalDeviceHostQueryResetFeatures>(
             features2, physical_, VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_HOST_QUERY_RESET_FEATURES)
             .hostQueryReset) {
        return false;
    }
    // Named in the application's Vulkan 1.2 features where it chains those (a feature may be
    // named once), else in its own structure.
    bool vulkan12 = false;
    for (auto* s = static_cast<const VkBaseInStructure*>(info_.pNext); s; s = s->pNext) {
        vulkan12 = vulkan12 || s->sType == VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES;
    }
    if (vulkan12) {
        enable_chained_feature(VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES,
                               offsetof(VkPhysicalDeviceVulkan12Features, hostQueryReset), nullptr);
    } else {
        host_query_reset_ours_.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_HOST_QUERY_RESET_FEATURES;
        host_query_reset_ours_.hostQueryReset = VK_TRUE;
        enable_chained_feature(VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_HOST_QUERY_RESET_FEATURES,
                               offsetof(VkPhysicalDeviceHostQueryResetFeatures, hostQueryReset),
                               reinterpret_cast<VkBaseOutStructure*>(&host_query_reset_ours_));
    }
    if (extension) {
        enable(VK_EXT_HOST_QUERY_RESET_EXTENSION_NAME);
    }
    host_query_reset_ = true;
    return true;
}

void DevicePatch::enable_timeline_semaphores() {
    const bool core = core_1_2();
    const PFN_vkGetPhysicalDeviceFeatures2 features2 = features2_command();
    const bool extension = !core && offers("VK_KHR_timeline_semaphore");
    if (!features2 || (!core && !extension)) {
        return;
    }
    if (!supported_features<VkPhysicalDeviceTimelineSemaphoreFeatures>(
             features2, physical_, VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_TIMELINE_SEMAPHORE_FEATURES)
             .timelineSemaphore) {
        return;
    }
    bool found = false;
    for (auto* s = static_cast<const VkBaseInStructure*>(info_.pNext); s; s = s->pNext) {
        VkBool32* flag = nullptr;
        if (s->sType == VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES) {
            flag = &const_cast<VkPhysicalDeviceVulkan12Features*>(
                        reinterpret_cast<const VkPhysicalDeviceVulkan12Features*>(s))
                        ->timelineSemaphore;
        } else if (s->sType == VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_TIMELINE_SEMAPHORE_FEATURES) {
            flag = &const_cast<VkPhysicalDeviceTimelineSemaphoreFeatures*>(
                        reinterpret_cast<const VkPhysicalDeviceTimelineSemaphoreFeatures*>(s))
                        ->timelineSemaphore;
        }
        if (flag) {
            found = true;
            // The feature may only be named once in the chain, so the application's own structure
            // carries it; switched back after the call.
            if (!*flag) {
                *flag = VK_TRUE;
                switched_on_ = flag;
            }
        }
    }
    if (!found) {
        ours_.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_TIMELINE_SEMAPHORE_FEATURES;
        ours_.pNext = const_cast<void*>(info_.pNext);
        ours_.timelineSemaphore = VK_TRUE;
        info_.pNext = &ours_;
    }
    if (!core && !listed(extensions_.data(), static_cast<uint32_t>(extensions_.size()),
                         "VK_KHR_timeline_semaphore")) {
        extensions_.push_back("VK_KHR_timeline_semaphore");
    }
    setup_.timeline_semaphores = true;
}

} // namespace vkscope::timeline
