// Instance and device creation and destruction: link into the loader's chain, build the next
// layer's dispatch tables, read the settings, register the state. Which features are on and which
// instruments a device's timeline gets are decided here, from the settings, and nowhere else.

#include "command_tables.hpp"
#include "core/layer_info.hpp"
#include "core/log.hpp"
#include "core/settings.hpp"
#include "core/state.hpp"
#include "instruments/performance_query/instrument.hpp"
#include "instruments/pipeline_statistics/instrument.hpp"
#include "instruments/samplers/instrument.hpp"
#include "instruments/timing/instrument.hpp"
#include "timeline/server_connection.hpp"
#include "timeline/setup.hpp"

#include <memory>
#include <optional>
#include <unistd.h>
#include <vulkan/vk_layer.h>

namespace vkscope {
namespace {

// The loader's link info for this layer in a create-info chain. The structures are const for the
// application but the loader expects each layer to advance the link for the next one.
template <typename LinkInfo> LinkInfo* find_link(const void* next, VkStructureType type) {
    for (auto* s = static_cast<const VkBaseInStructure*>(next); s; s = s->pNext) {
        auto* info = reinterpret_cast<const LinkInfo*>(s);
        if (s->sType == type && info->function == VK_LAYER_LINK_INFO) {
            return const_cast<LinkInfo*>(info);
        }
    }
    return nullptr;
}

// Timing and counters need the timeline: their values belong to its workload instances.
bool wants_timeline(const SettingValues& settings) {
    return settings.timeline || settings.timing != Timing::off ||
           pipeline_statistics::selected(settings) || performance_query::selected(settings) ||
           samplers::selected(settings);
}

void enable_features(InstanceState& state) {
    state.features.set(static_cast<unsigned>(Feature::core));
    if (wants_timeline(state.settings)) {
        state.features.set(static_cast<unsigned>(Feature::timeline));
    }
    if (state.settings.timing != Timing::off) {
        state.features.set(static_cast<unsigned>(Feature::timing));
        state.features.set(static_cast<unsigned>(Feature::instruments));
    }
    if (pipeline_statistics::selected(state.settings)) {
        state.features.set(static_cast<unsigned>(Feature::pipeline_statistics));
        state.features.set(static_cast<unsigned>(Feature::instruments));
    }
    if (performance_query::selected(state.settings) || samplers::selected(state.settings)) {
        state.features.set(static_cast<unsigned>(Feature::instruments));
    }
}

// The instruments of a device of this instance, in the order their marks take.
timeline::InstrumentProviders instrument_providers(const InstanceState& instance) {
    timeline::InstrumentProviders providers;
    // First: its handover before a workload must come before the other instruments' starts, so
    // that no time or count includes the GPU held for a sample.
    if (auto handover = samplers::provider(instance.settings)) {
        providers.push_back(std::move(handover));
    }
    if (auto timing = timing::provider(instance.settings)) {
        providers.push_back(std::move(timing));
    }
    if (auto statistics = pipeline_statistics::provider(instance.settings)) {
        providers.push_back(std::move(statistics));
    }
    if (auto khr = performance_query::provider(instance.settings)) {
        providers.push_back(std::move(khr));
    }
    return providers;
}

} // namespace

VKAPI_ATTR VkResult VKAPI_CALL hooks::vkCreateInstance(const VkInstanceCreateInfo* pCreateInfo,
                                                       const VkAllocationCallbacks* pAllocator,
                                                       VkInstance* pInstance) {
    auto* link = find_link<VkLayerInstanceCreateInfo>(
        pCreateInfo->pNext, VK_STRUCTURE_TYPE_LOADER_INSTANCE_CREATE_INFO);
    if (!link || !link->u.pLayerInfo) {
        return VK_ERROR_INITIALIZATION_FAILED;
    }
    PFN_vkGetInstanceProcAddr next_gipa = link->u.pLayerInfo->pfnNextGetInstanceProcAddr;
    link->u.pLayerInfo = link->u.pLayerInfo->pNext;
    auto next_create =
        reinterpret_cast<PFN_vkCreateInstance>(next_gipa(VK_NULL_HANDLE, "vkCreateInstance"));
    if (!next_create) {
        return VK_ERROR_INITIALIZATION_FAILED;
    }

    SettingsReport settings = read_settings(pCreateInfo->pNext);
    log_configure(settings.values.log_level, settings.values.log_file);
    for (const std::string& problem : settings.problems) {
        log_once(LogLevel::warn, "%s", problem.c_str());
    }

    bool debug_utils = false;
    FrameSelection frames;
    if (std::string why; !frames.parse(settings.values.frames, why)) {
        log_once(LogLevel::warn, "setting frames='%s' ignored (every frame is captured): %s",
                 settings.values.frames.c_str(), why.c_str());
    }

    VkResult result = wants_timeline(settings.values)
                          ? timeline::create_instance(pCreateInfo, pAllocator, pInstance,
                                                      next_create, link, debug_utils)
                          : next_create(pCreateInfo, pAllocator, pInstance);
    if (result != VK_SUCCESS) {
        return result;
    }
    auto state = std::make_unique<InstanceState>();
    state->debug_utils = debug_utils;
    if (pCreateInfo->pApplicationInfo && pCreateInfo->pApplicationInfo->apiVersion) {
        state->api_version = pCreateInfo->pApplicationInfo->apiVersion;
    }
    state->handle = *pInstance;
    state->next_gipa = next_gipa;
    state->settings = std::move(settings.values);
    state->frames = std::move(frames);
    state->next.load(*pInstance, next_gipa);
    enable_features(*state);
    if (state->enabled(Feature::timeline)) {
        // Timing makes query pools: GOODBYE says how many.
        state->server = timeline::acquire_server_channel(
            state->settings, state->enabled(Feature::timing), state->server_user);
    }
    if (state->frames.server_driven() && !state->server) {
        log_once(LogLevel::warn, "setting frames='host' with no host to ask for frames (no "
                                 "timeline or no host address): no frame will be captured");
    }
    if (!g_instances.insert(dispatch_key(*pInstance), state.get())) {
        log(LogLevel::error, "too many live VkInstances; this one is not profiled");
        if (state->enabled(Feature::timeline)) {
            state->server.reset();
            timeline::release_server_channel(state->server_user);
        }
        return VK_SUCCESS;
    }
    state.release();
    log(LogLevel::info, "%s loaded (instance %p, registry header %u, pid %d)", kLayerName,
        static_cast<void*>(*pInstance), kRegistryHeaderVersion, static_cast<int>(getpid()));
    return VK_SUCCESS;
}

VKAPI_ATTR void VKAPI_CALL hooks::vkDestroyInstance(VkInstance instance,
                                                    const VkAllocationCallbacks* pAllocator) {
    if (!instance) {
        return;
    }
    std::unique_ptr<InstanceState> state(g_instances.erase(dispatch_key(instance)));
    if (state) {
        state->next.DestroyInstance(instance, pAllocator);
        if (state->enabled(Feature::timeline)) {
            state->server.reset();
            timeline::release_server_channel(state->server_user);
        }
    }
}

VKAPI_ATTR VkResult VKAPI_CALL hooks::vkCreateDevice(VkPhysicalDevice physicalDevice,
                                                     const VkDeviceCreateInfo* pCreateInfo,
                                                     const VkAllocationCallbacks* pAllocator,
                                                     VkDevice* pDevice) {
    InstanceState* instance = find_instance(physicalDevice);
    auto* link = find_link<VkLayerDeviceCreateInfo>(pCreateInfo->pNext,
                                                    VK_STRUCTURE_TYPE_LOADER_DEVICE_CREATE_INFO);
    if (!instance || !link || !link->u.pLayerInfo) {
        return VK_ERROR_INITIALIZATION_FAILED;
    }
    PFN_vkGetInstanceProcAddr next_gipa = link->u.pLayerInfo->pfnNextGetInstanceProcAddr;
    PFN_vkGetDeviceProcAddr next_gdpa = link->u.pLayerInfo->pfnNextGetDeviceProcAddr;
    link->u.pLayerInfo = link->u.pLayerInfo->pNext;
    auto next_create =
        reinterpret_cast<PFN_vkCreateDevice>(next_gipa(instance->handle, "vkCreateDevice"));
    if (!next_create) {
        return VK_ERROR_INITIALIZATION_FAILED;
    }
    std::optional<timeline::DevicePatch> patch;
    timeline::InstrumentProviders instruments;
    if (instance->enabled(Feature::timeline)) {
        patch.emplace(*instance, physicalDevice, pCreateInfo);
        instruments = instrument_providers(*instance);
        for (const auto& instrument : instruments) {
            instrument->prepare(*patch);
        }
    }
    VkResult result =
        next_create(physicalDevice, patch ? patch->info() : pCreateInfo, pAllocator, pDevice);
    if (result != VK_SUCCESS) {
        return result;
    }
    auto state = std::make_unique<DeviceState>();
    state->handle = *pDevice;
    state->physical = physicalDevice;
    state->instance = instance;
    state->next_gdpa = next_gdpa;
    state->next.load(*pDevice, next_gdpa);
    if (patch) {
        state->features =
            std::make_unique<timeline::TimelineDevice>(*state, patch->setup(), instruments);
    }
    if (!g_devices.insert(dispatch_key(*pDevice), state.get())) {
        log(LogLevel::error, "too many live VkDevices; this one is not profiled");
        return VK_SUCCESS;
    }
    state.release();
    log(LogLevel::debug, "device %p created", static_cast<void*>(*pDevice));
    return VK_SUCCESS;
}

VKAPI_ATTR void VKAPI_CALL hooks::vkDestroyDevice(VkDevice device,
                                                  const VkAllocationCallbacks* pAllocator) {
    if (!device) {
        return;
    }
    std::unique_ptr<DeviceState> state(g_devices.erase(dispatch_key(device)));
    if (state) {
        // The layer's own objects go before the device they belong to.
        state->features.reset();
        state->next.DestroyDevice(device, pAllocator);
    }
}

} // namespace vkscope
