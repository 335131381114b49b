#pragma once
// What the fixture's entry points share: the instances and devices it has seen, under one lock,
// and the walks of pNext chains that instance and device commands both make.

#include "pools.hpp"

#include <map>
#include <memory>
#include <mutex>
#include <unordered_map>
#include <vector>
#include <vulkan/vk_layer.h>

namespace pqfixture {

inline constexpr const char* kExtension = VK_KHR_PERFORMANCE_QUERY_EXTENSION_NAME;

struct InstanceData {
    VkInstance handle = VK_NULL_HANDLE;
    PFN_vkGetInstanceProcAddr gipa = nullptr;
    PFN_vkDestroyInstance destroy = nullptr;
    PFN_vkEnumerateDeviceExtensionProperties enumerate_extensions = nullptr;
    // The core commands and their KHR aliases, each passed on as itself: the core ones do not
    // exist for an instance of API 1.0, which has VK_KHR_get_physical_device_properties2.
    PFN_vkGetPhysicalDeviceFeatures2 features2 = nullptr;
    PFN_vkGetPhysicalDeviceFeatures2 features2_khr = nullptr;
    PFN_vkGetPhysicalDeviceProperties2 properties2 = nullptr;
    PFN_vkGetPhysicalDeviceProperties2 properties2_khr = nullptr;
    PFN_vkGetPhysicalDeviceProperties properties = nullptr;
    PFN_vkGetPhysicalDeviceQueueFamilyProperties families = nullptr;
};

// A recorded command buffer's use of performance queries, replayed onto the pools at submission.
struct Recorded {
    enum class Kind : uint8_t { reset, begin };
    Kind kind;
    PerfPool* pool;
    uint32_t first;
    uint32_t count;
};

struct DeviceData {
    PFN_vkGetDeviceProcAddr gdpa = nullptr;
    PFN_vkDestroyDevice destroy = nullptr;
    PFN_vkQueueSubmit queue_submit = nullptr;
    PFN_vkQueueSubmit2 queue_submit2 = nullptr;
    PFN_vkQueueWaitIdle queue_wait_idle = nullptr;
    PFN_vkBeginCommandBuffer begin_command_buffer = nullptr;
    PFN_vkCmdExecuteCommands cmd_execute_commands = nullptr;
    PFN_vkCmdCopyQueryPoolResults cmd_copy_query_pool_results = nullptr;
    LowerDevice lower;
    bool enabled = false; // the application enabled the extension
    std::vector<VkQueueFamilyProperties> families;
    uint32_t lock_holds = 0;
    std::map<VkQueryPool, std::unique_ptr<PerfPool>> pools;
    std::unordered_map<VkCommandBuffer, std::vector<Recorded>> recorded;
};

// One lock for everything: a test fixture, where simplicity beats the cost of contention.
extern std::mutex g_lock;
extern std::unordered_map<void*, InstanceData> g_instances;
extern std::unordered_map<void*, std::unique_ptr<DeviceData>> g_devices;

template <typename Handle> void* key(Handle handle) {
    return *reinterpret_cast<void**>(handle);
}

inline InstanceData* instance_of(void* k) {
    auto it = g_instances.find(k);
    return it == g_instances.end() ? nullptr : &it->second;
}

inline DeviceData* device_of(void* k) {
    auto it = g_devices.find(k);
    return it == g_devices.end() ? nullptr : it->second.get();
}

inline PerfPool* pool_of(DeviceData& d, VkQueryPool pool) {
    auto it = d.pools.find(pool);
    return it == d.pools.end() ? nullptr : it->second.get();
}

InstanceData copy_instance(VkPhysicalDevice pd);
std::vector<VkQueueFamilyProperties> families_of(const InstanceData& d, VkPhysicalDevice pd);

template <typename LinkInfo> LinkInfo* find_link(const void* chain, VkStructureType type) {
    for (auto* s = static_cast<const VkBaseInStructure*>(chain); s; s = s->pNext) {
        auto* info = reinterpret_cast<const LinkInfo*>(s);
        if (s->sType == type && info->function == VK_LAYER_LINK_INFO) {
            return const_cast<LinkInfo*>(info);
        }
    }
    return nullptr;
}

template <typename T> T* find_in(const void* chain, VkStructureType type) {
    for (auto* s = static_cast<const VkBaseInStructure*>(chain); s; s = s->pNext) {
        if (s->sType == type) {
            return reinterpret_cast<T*>(const_cast<VkBaseInStructure*>(s));
        }
    }
    return nullptr;
}

// Takes a structure of `type` out of a chain for the length of a call to the driver, which does
// not know it, and puts it back afterwards.
class Unlinked {
public:
    Unlinked(const void* head, VkStructureType type) {
        auto* prev = const_cast<VkBaseOutStructure*>(static_cast<const VkBaseOutStructure*>(head));
        while (prev && prev->pNext) {
            if (prev->pNext->sType == type) {
                prev_ = prev;
                removed_ = prev->pNext;
                prev->pNext = removed_->pNext;
                return;
            }
            prev = prev->pNext;
        }
    }
    ~Unlinked() {
        if (prev_) {
            prev_->pNext = removed_;
        }
    }
    Unlinked(const Unlinked&) = delete;
    Unlinked& operator=(const Unlinked&) = delete;

private:
    VkBaseOutStructure* prev_ = nullptr;
    VkBaseOutStructure* removed_ = nullptr;
};

} // namespace pqfixture
