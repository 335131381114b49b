#include "context.h"

#include "errors.h"

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstring>
#include <iterator>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace wl {

namespace {

constexpr const char* kValidationLayer = "VK_LAYER_KHRONOS_validation";
constexpr const char* kVkscopeLayer = "VK_LAYER_VKSCOPE_profiler";
constexpr uint64_t kFenceTimeoutNs = 60ull * 1000 * 1000 * 1000;

std::atomic<uint32_t> g_messageCount{0};

// Validation layers older than VK_EXT_layer_settings (such as Debian 12's 1.3.239) reject the
// VkLayerSettingsCreateInfoEXT that --layer-setting chains into vkCreateInstance. That struct
// is deliberate and valid for newer layers, so this one report is shown but not counted.
bool isLayerSettingsFalsePositive(const VkDebugUtilsMessengerCallbackDataEXT* data) {
    return data && data->pMessageIdName && data->pMessage &&
           std::strcmp(data->pMessageIdName, "VUID-VkInstanceCreateInfo-pNext-pNext") == 0 &&
           std::strstr(data->pMessage, "unknown VkStructureType (1000496000)") != nullptr;
}

// Loader warnings such as "env var 'VK_INSTANCE_LAYERS' defined and adding layers" describe the
// environment, not the API usage; counting them would fail every run that injects a layer.
bool isLoaderWarning(VkDebugUtilsMessageSeverityFlagBitsEXT severity,
                     const VkDebugUtilsMessengerCallbackDataEXT* data) {
    return severity == VK_DEBUG_UTILS_MESSAGE_SEVERITY_WARNING_BIT_EXT && data &&
           data->pMessageIdName && std::strcmp(data->pMessageIdName, "Loader Message") == 0;
}

VKAPI_ATTR VkBool32 VKAPI_CALL onDebugMessage(VkDebugUtilsMessageSeverityFlagBitsEXT severity,
                                              VkDebugUtilsMessageTypeFlagsEXT,
                                              const VkDebugUtilsMessengerCallbackDataEXT* data,
                                              void*) {
    if (isLayerSettingsFalsePositive(data)) {
        std::fprintf(stderr,
                     "note: not counted, the validation layer predates "
                     "VK_EXT_layer_settings: %s\n",
                     data->pMessageIdName);
        return VK_FALSE;
    }
    if (isLoaderWarning(severity, data)) {
        std::fprintf(stderr, "note: loader: %s\n", data->pMessage ? data->pMessage : "");
        return VK_FALSE;
    }
    g_messageCount.fetch_add(1);
    const char* level =
        (severity & VK_DEBUG_UTILS_MESSAGE_SEVERITY_ERROR_BIT_EXT) ? "error" : "warning";
    std::fprintf(stderr, "vulkan %s: %s: %s\n", level,
                 data && data->pMessageIdName ? data->pMessageIdName : "-",
                 data && data->pMessage ? data->pMessage : "");
    return VK_FALSE;
}

VkDebugUtilsMessengerCreateInfoEXT messengerInfo(const void* next) {
    return VkDebugUtilsMessengerCreateInfoEXT{
        .sType = VK_STRUCTURE_TYPE_DEBUG_UTILS_MESSENGER_CREATE_INFO_EXT,
        .pNext = next,
        .messageSeverity = VK_DEBUG_UTILS_MESSAGE_SEVERITY_WARNING_BIT_EXT |
                           VK_DEBUG_UTILS_MESSAGE_SEVERITY_ERROR_BIT_EXT,
        .messageType = VK_DEBUG_UTILS_MESSAGE_TYPE_GENERAL_BIT_EXT |
                       VK_DEBUG_UTILS_MESSAGE_TYPE_VALIDATION_BIT_EXT |
                       VK_DEBUG_UTILS_MESSAGE_TYPE_PERFORMANCE_BIT_EXT,
        .pfnUserCallback = onDebugMessage,
    };
}

std::vector<VkExtensionProperties> instanceExtensions(const char* layer) {
    uint32_t count = 0;
    VK_CHECK(vkEnumerateInstanceExtensionProperties(layer, &count, nullptr));
    std::vector<VkExtensionProperties> list(count);
    VK_CHECK(vkEnumerateInstanceExtensionProperties(layer, &count, list.data()));
    list.resize(count);
    return list;
}

std::vector<VkExtensionProperties> deviceExtensions(VkPhysicalDevice physical, const char* layer) {
    uint32_t count = 0;
    VK_CHECK(vkEnumerateDeviceExtensionProperties(physical, layer, &count, nullptr));
    std::vector<VkExtensionProperties> list(count);
    VK_CHECK(vkEnumerateDeviceExtensionProperties(physical, layer, &count, list.data()));
    list.resize(count);
    return list;
}

bool hasExtension(const std::vector<VkExtensionProperties>& list, const char* name) {
    return std::any_of(list.begin(), list.end(), [&](const VkExtensionProperties& e) {
        return std::strcmp(e.extensionName, name) == 0;
    });
}

uint32_t majorMinor(uint32_t version) {
    return VK_MAKE_API_VERSION(0, VK_API_VERSION_MAJOR(version), VK_API_VERSION_MINOR(version), 0);
}

} // namespace

uint32_t validationMessageCount() {
    return g_messageCount.load();
}

Context::Context(const Options& opts) : options(opts) {
    try {
        createInstance();
        pickPhysicalDevice();
        createDevice();
    } catch (...) {
        destroy();
        throw;
    }
}

Context::~Context() {
    destroy();
}

void Context::destroy() {
    if (device) {
        vkDeviceWaitIdle(device);
        vkDestroyDevice(device, nullptr);
        device = VK_NULL_HANDLE;
    }
    if (messenger) {
        auto destroyMessenger = reinterpret_cast<PFN_vkDestroyDebugUtilsMessengerEXT>(
            vkGetInstanceProcAddr(instance, "vkDestroyDebugUtilsMessengerEXT"));
        destroyMessenger(instance, messenger, nullptr);
        messenger = VK_NULL_HANDLE;
    }
    if (instance) {
        vkDestroyInstance(instance, nullptr);
        instance = VK_NULL_HANDLE;
    }
}

void Context::createInstance() {
    uint32_t loaderVersion = VK_API_VERSION_1_0;
    VK_CHECK(vkEnumerateInstanceVersion(&loaderVersion));
    const uint32_t apiVersion = std::min(majorMinor(loaderVersion), VK_API_VERSION_1_3);
    features.apiVersion = apiVersion;

    std::vector<const char*> layers;
    if (options.validation != ValidationOrder::None) {
        uint32_t count = 0;
        VK_CHECK(vkEnumerateInstanceLayerProperties(&count, nullptr));
        std::vector<VkLayerProperties> available(count);
        VK_CHECK(vkEnumerateInstanceLayerProperties(&count, available.data()));
        available.resize(count);
        auto present = [&](const char* name) {
            return std::any_of(available.begin(), available.end(), [&](const VkLayerProperties& l) {
                return std::strcmp(l.layerName, name) == 0;
            });
        };
        if (!present(kValidationLayer)) {
            throw VulkanError(VK_ERROR_LAYER_NOT_PRESENT,
                              "VK_ERROR_LAYER_NOT_PRESENT: VK_LAYER_KHRONOS_validation is not "
                              "installed");
        }
        const bool vkscope = present(kVkscopeLayer);
        if (!vkscope) {
            std::fprintf(stderr, "note: %s is not installed; enabling %s alone\n", kVkscopeLayer,
                         kValidationLayer);
        }
        // The first entry of ppEnabledLayerNames is the layer closest to the application.
        if (vkscope && options.validation == ValidationOrder::Above) {
            layers.push_back(kVkscopeLayer);
        }
        layers.push_back(kValidationLayer);
        if (vkscope && options.validation == ValidationOrder::Below) {
            layers.push_back(kVkscopeLayer);
        }
    }

    std::vector<VkExtensionProperties> available = instanceExtensions(nullptr);
    for (const char* layer : layers) {
        std::vector<VkExtensionProperties> more = instanceExtensions(layer);
        available.insert(available.end(), more.begin(), more.end());
    }
    std::vector<const char*> extensions;
    features.debugUtils = hasExtension(available, VK_EXT_DEBUG_UTILS_EXTENSION_NAME);
    if (features.debugUtils) {
        extensions.push_back(VK_EXT_DEBUG_UTILS_EXTENSION_NAME);
    }
    // VK_EXT_debug_marker, used when a device offers it, depends on VK_EXT_debug_report.
    debugReportEnabled_ = hasExtension(available, VK_EXT_DEBUG_REPORT_EXTENSION_NAME);
    if (debugReportEnabled_) {
        extensions.push_back(VK_EXT_DEBUG_REPORT_EXTENSION_NAME);
    }
    const bool validationFeatures =
        options.validation != ValidationOrder::None &&
        hasExtension(available, VK_EXT_VALIDATION_FEATURES_EXTENSION_NAME);
    if (validationFeatures) {
        extensions.push_back(VK_EXT_VALIDATION_FEATURES_EXTENSION_NAME);
    }

    const void* chain = nullptr;

    // VK_EXT_layer_settings is implemented by the layers themselves, so the extension is
    // not enabled by name; chaining the struct is what the layers look for.
    std::vector<const char*> settingValues;
    std::vector<VkLayerSettingEXT> settings;
    settingValues.reserve(options.layerSettings.size());
    for (const auto& [key, value] : options.layerSettings) {
        settingValues.push_back(value.c_str());
        settings.push_back(VkLayerSettingEXT{
            .pLayerName = kVkscopeLayer,
            .pSettingName = key.c_str(),
            .type = VK_LAYER_SETTING_TYPE_STRING_EXT,
            .valueCount = 1,
            .pValues = &settingValues.back(),
        });
    }
    VkLayerSettingsCreateInfoEXT layerSettings{
        .sType = VK_STRUCTURE_TYPE_LAYER_SETTINGS_CREATE_INFO_EXT,
        .pNext = chain,
        .settingCount = static_cast<uint32_t>(settings.size()),
        .pSettings = settings.data(),
    };
    if (!settings.empty()) {
        chain = &layerSettings;
    }

    const VkValidationFeatureEnableEXT enables[] = {
        VK_VALIDATION_FEATURE_ENABLE_SYNCHRONIZATION_VALIDATION_EXT};
    VkValidationFeaturesEXT validationInfo{
        .sType = VK_STRUCTURE_TYPE_VALIDATION_FEATURES_EXT,
        .pNext = chain,
        .enabledValidationFeatureCount = 1,
        .pEnabledValidationFeatures = enables,
    };
    if (validationFeatures) {
        chain = &validationInfo;
    }

    // Also chained into instance creation so messages from vkCreateInstance and
    // vkDestroyInstance are counted.
    VkDebugUtilsMessengerCreateInfoEXT instanceMessenger = messengerInfo(chain);
    if (features.debugUtils) {
        chain = &instanceMessenger;
    }

    const VkApplicationInfo app{
        .sType = VK_STRUCTURE_TYPE_APPLICATION_INFO,
        .pApplicationName = "vkscope-workload",
        .applicationVersion = 1,
        .pEngineName = "vkscope-workload",
        .engineVersion = 1,
        .apiVersion = apiVersion,
    };
    const VkInstanceCreateInfo info{
        .sType = VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO,
        .pNext = chain,
        .pApplicationInfo = &app,
        .enabledLayerCount = static_cast<uint32_t>(layers.size()),
        .ppEnabledLayerNames = layers.data(),
        .enabledExtensionCount = static_cast<uint32_t>(extensions.size()),
        .ppEnabledExtensionNames = extensions.data(),
    };
    VK_CHECK(vkCreateInstance(&info, nullptr, &instance));
    enabledLayers_.assign(layers.begin(), layers.end());

    if (features.debugUtils) {
        auto load = [&](const char* name) { return vkGetInstanceProcAddr(instance, name); };
        auto createMessenger = reinterpret_cast<PFN_vkCreateDebugUtilsMessengerEXT>(
            load("vkCreateDebugUtilsMessengerEXT"));
        const VkDebugUtilsMessengerCreateInfoEXT standalone = messengerInfo(nullptr);
        VK_CHECK(createMessenger(instance, &standalone, nullptr, &messenger));
        cmdBeginLabel = reinterpret_cast<PFN_vkCmdBeginDebugUtilsLabelEXT>(
            load("vkCmdBeginDebugUtilsLabelEXT"));
        cmdEndLabel =
            reinterpret_cast<PFN_vkCmdEndDebugUtilsLabelEXT>(load("vkCmdEndDebugUtilsLabelEXT"));
        cmdInsertLabel = reinterpret_cast<PFN_vkCmdInsertDebugUtilsLabelEXT>(
            load("vkCmdInsertDebugUtilsLabelEXT"));
        queueBeginLabel = reinterpret_cast<PFN_vkQueueBeginDebugUtilsLabelEXT>(
            load("vkQueueBeginDebugUtilsLabelEXT"));
        queueEndLabel = reinterpret_cast<PFN_vkQueueEndDebugUtilsLabelEXT>(
            load("vkQueueEndDebugUtilsLabelEXT"));
        queueInsertLabel = reinterpret_cast<PFN_vkQueueInsertDebugUtilsLabelEXT>(
            load("vkQueueInsertDebugUtilsLabelEXT"));
        setObjectName = reinterpret_cast<PFN_vkSetDebugUtilsObjectNameEXT>(
            load("vkSetDebugUtilsObjectNameEXT"));
    }
}

void Context::pickPhysicalDevice() {
    uint32_t count = 0;
    VK_CHECK(vkEnumeratePhysicalDevices(instance, &count, nullptr));
    std::vector<VkPhysicalDevice> devices(count);
    VK_CHECK(vkEnumeratePhysicalDevices(instance, &count, devices.data()));
    if (options.device >= count) {
        throw VulkanError(VK_ERROR_INITIALIZATION_FAILED,
                          "VK_ERROR_INITIALIZATION_FAILED: --device " +
                              std::to_string(options.device) + " but there are " +
                              std::to_string(count) + " physical devices");
    }
    physical = devices[options.device];
    vkGetPhysicalDeviceProperties(physical, &properties);
    vkGetPhysicalDeviceMemoryProperties(physical, &memoryProperties);
    features.apiVersion = std::min(features.apiVersion, majorMinor(properties.apiVersion));

    uint32_t familyCount = 0;
    vkGetPhysicalDeviceQueueFamilyProperties(physical, &familyCount, nullptr);
    std::vector<VkQueueFamilyProperties> families(familyCount);
    vkGetPhysicalDeviceQueueFamilyProperties(physical, &familyCount, families.data());

    auto pick = [&](QueueInfo& queue, uint32_t family, uint32_t index) {
        queue.family = family;
        queue.index = index;
        queue.flags = families[family].queueFlags;
        queue.timestampValidBits = families[family].timestampValidBits;
    };
    constexpr VkQueueFlags kGraphicsCompute = VK_QUEUE_GRAPHICS_BIT | VK_QUEUE_COMPUTE_BIT;
    for (uint32_t i = 0; i < familyCount && !main.valid(); ++i) {
        if ((families[i].queueFlags & kGraphicsCompute) == kGraphicsCompute) {
            pick(main, i, 0);
        }
    }
    for (uint32_t i = 0; i < familyCount && !main.valid(); ++i) {
        if (families[i].queueFlags & VK_QUEUE_COMPUTE_BIT) {
            pick(main, i, 0);
        }
    }
    if (!main.valid()) {
        throw VulkanError(VK_ERROR_FEATURE_NOT_PRESENT,
                          "VK_ERROR_FEATURE_NOT_PRESENT: no queue family supports compute");
    }

    // The second queue: a compute-only family is the most interesting (async compute), then
    // any other family that can run commands, then a second queue of the main family.
    auto findOther = [&](VkQueueFlags required, VkQueueFlags excluded) {
        for (uint32_t i = 0; i < familyCount && !second.valid(); ++i) {
            VkQueueFlags flags = families[i].queueFlags;
            if (i != main.family && families[i].queueCount > 0 && (flags & required) &&
                !(flags & excluded)) {
                pick(second, i, 0);
            }
        }
    };
    findOther(VK_QUEUE_COMPUTE_BIT, VK_QUEUE_GRAPHICS_BIT);
    findOther(kGraphicsCompute, 0);
    if (!second.valid() && families[main.family].queueCount >= 2) {
        pick(second, main.family, 1);
    }
    findOther(VK_QUEUE_TRANSFER_BIT, 0);
}

void Context::createDevice() {
    // Layers we enabled may implement device extensions themselves (validation implements
    // VK_EXT_debug_marker, for one); those count as offered by the device.
    std::vector<VkExtensionProperties> available = deviceExtensions(physical, nullptr);
    for (const std::string& layer : enabledLayers_) {
        std::vector<VkExtensionProperties> more = deviceExtensions(physical, layer.c_str());
        available.insert(available.end(), more.begin(), more.end());
    }
    const bool hasFrameBoundary = hasExtension(available, VK_EXT_FRAME_BOUNDARY_EXTENSION_NAME);
    const bool hasDebugMarker =
        debugReportEnabled_ && hasExtension(available, VK_EXT_DEBUG_MARKER_EXTENSION_NAME);
    // Ray tracing is only switched on for a run that includes its scenario, so that the other
    // scenarios run on the same device configuration everywhere.
    const char* const rayTracingExtensions[] = {
        VK_KHR_RAY_TRACING_PIPELINE_EXTENSION_NAME,
        VK_KHR_ACCELERATION_STRUCTURE_EXTENSION_NAME,
        VK_KHR_DEFERRED_HOST_OPERATIONS_EXTENSION_NAME,
    };
    static const char* const rayTracingMissing[] = {
        "needs VK_KHR_ray_tracing_pipeline",
        "needs VK_KHR_acceleration_structure",
        "needs VK_KHR_deferred_host_operations",
    };
    bool queryRayTracing = scenarioSelected("ray_tracing");
    for (size_t i = 0; i < std::size(rayTracingExtensions) && queryRayTracing; ++i) {
        if (!hasExtension(available, rayTracingExtensions[i])) {
            features.rayTracingMissing = rayTracingMissing[i];
            queryRayTracing = false;
        }
    }
    if (queryRayTracing && features.apiVersion < VK_API_VERSION_1_2) {
        features.rayTracingMissing = "needs Vulkan 1.2 (buffer device addresses)";
        queryRayTracing = false;
    }

    // Named only: --all leaves mesh shaders off, so its device is the same everywhere.
    bool queryMesh = std::find(options.scenarios.begin(), options.scenarios.end(),
                               std::string_view("mesh_shader")) != options.scenarios.end();
    if (queryMesh && !hasExtension(available, VK_EXT_MESH_SHADER_EXTENSION_NAME)) {
        features.meshShaderMissing = "needs VK_EXT_mesh_shader";
        queryMesh = false;
    }
    if (queryMesh && features.apiVersion < VK_API_VERSION_1_2) {
        features.meshShaderMissing = "needs Vulkan 1.2 (SPIR-V 1.4)";
        queryMesh = false;
    }
    VkPhysicalDeviceMeshShaderFeaturesEXT supportedMesh{
        .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_MESH_SHADER_FEATURES_EXT};
    VkPhysicalDeviceFrameBoundaryFeaturesEXT supportedBoundary{
        .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FRAME_BOUNDARY_FEATURES_EXT};
    VkPhysicalDeviceVulkan13Features supported13{
        .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_3_FEATURES};
    VkPhysicalDeviceVulkan12Features supported12{
        .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES};
    VkPhysicalDeviceVulkan11Features supported11{
        .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_1_FEATURES};
    VkPhysicalDeviceRayTracingPipelineFeaturesKHR supportedRayTracing{
        .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_RAY_TRACING_PIPELINE_FEATURES_KHR};
    VkPhysicalDeviceAccelerationStructureFeaturesKHR supportedStructures{
        .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_ACCELERATION_STRUCTURE_FEATURES_KHR};
    VkPhysicalDeviceFeatures2 supported{.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2};
    // The VulkanXY feature structs are only valid on devices of at least version 1.2 / 1.3.
    void** tail = &supported.pNext;
    auto append = [&tail](auto& s) {
        *tail = &s;
        tail = &s.pNext;
    };
    if (features.apiVersion >= VK_API_VERSION_1_2) {
        append(supported11);
        append(supported12);
    }
    if (features.apiVersion >= VK_API_VERSION_1_3) {
        append(supported13);
    }
    if (hasFrameBoundary) {
        append(supportedBoundary);
    }
    if (queryRayTracing) {
        append(supportedRayTracing);
        append(supportedStructures);
    }
    if (queryMesh) {
        append(supportedMesh);
    }
    if (features.apiVersion >= VK_API_VERSION_1_1) {
        vkGetPhysicalDeviceFeatures2(physical, &supported);
    } else {
        vkGetPhysicalDeviceFeatures(physical, &supported.features);
    }
    const bool rayTracing = queryRayTracing && supportedRayTracing.rayTracingPipeline &&
                            supportedRayTracing.rayTracingPipelineTraceRaysIndirect &&
                            supportedStructures.accelerationStructure &&
                            supported12.bufferDeviceAddress;
    if (queryRayTracing && !rayTracing) {
        features.rayTracingMissing =
            "needs the rayTracingPipeline, rayTracingPipelineTraceRaysIndirect, "
            "accelerationStructure and bufferDeviceAddress features";
    }

    const bool mesh = queryMesh && supportedMesh.taskShader && supportedMesh.meshShader;
    if (queryMesh && !mesh) {
        features.meshShaderMissing = "needs the taskShader and meshShader features";
    }
    // The application's own choice: no meshShaderQueries (a profiler that wants the statistics
    // enables them itself).
    VkPhysicalDeviceMeshShaderFeaturesEXT enableMesh{
        .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_MESH_SHADER_FEATURES_EXT,
        .taskShader = VK_TRUE,
        .meshShader = VK_TRUE,
    };
    VkPhysicalDeviceFrameBoundaryFeaturesEXT enableBoundary{
        .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FRAME_BOUNDARY_FEATURES_EXT,
        .frameBoundary = supportedBoundary.frameBoundary,
    };
    VkPhysicalDeviceVulkan13Features enable13{
        .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_3_FEATURES,
        .synchronization2 = supported13.synchronization2,
        .dynamicRendering = supported13.dynamicRendering,
    };
    VkPhysicalDeviceVulkan12Features enable12{
        .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES,
        .drawIndirectCount = supported12.drawIndirectCount,
        .hostQueryReset = supported12.hostQueryReset,
        .timelineSemaphore = supported12.timelineSemaphore,
        .bufferDeviceAddress = rayTracing ? VK_TRUE : VK_FALSE,
    };
    VkPhysicalDeviceRayTracingPipelineFeaturesKHR enableRayTracing{
        .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_RAY_TRACING_PIPELINE_FEATURES_KHR,
        .rayTracingPipeline = VK_TRUE,
        .rayTracingPipelineTraceRaysIndirect = VK_TRUE,
    };
    VkPhysicalDeviceAccelerationStructureFeaturesKHR enableStructures{
        .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_ACCELERATION_STRUCTURE_FEATURES_KHR,
        .accelerationStructure = VK_TRUE,
    };
    const VkPhysicalDeviceFeatures enableCore{
        .multiDrawIndirect = supported.features.multiDrawIndirect,
        .pipelineStatisticsQuery = supported.features.pipelineStatisticsQuery,
    };
    VkPhysicalDeviceVulkan11Features enable11{
        .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_1_FEATURES,
        .multiview = supported11.multiview,
    };
    const void* chain = nullptr;
    auto prepend = [&chain](auto& s) {
        s.pNext = const_cast<void*>(chain);
        chain = &s;
    };
    if (features.apiVersion >= VK_API_VERSION_1_2) {
        prepend(enable11);
        prepend(enable12);
    }
    if (features.apiVersion >= VK_API_VERSION_1_3) {
        prepend(enable13);
    }
    features.frameBoundary = hasFrameBoundary && supportedBoundary.frameBoundary;
    if (features.frameBoundary) {
        prepend(enableBoundary);
    }
    features.rayTracing = rayTracing;
    if (rayTracing) {
        prepend(enableRayTracing);
        prepend(enableStructures);
    }
    features.meshShader = mesh;
    if (mesh) {
        prepend(enableMesh);
    }
    features.multiDrawIndirect = enableCore.multiDrawIndirect;
    features.pipelineStatisticsQuery = enableCore.pipelineStatisticsQuery;
    features.drawIndirectCount = enable12.drawIndirectCount;
    features.renderPass2 = features.apiVersion >= VK_API_VERSION_1_2;
    features.multiview = enable11.multiview;
    features.timelineSemaphore = enable12.timelineSemaphore;
    features.hostQueryReset = enable12.hostQueryReset;
    features.dynamicRendering = enable13.dynamicRendering;
    features.synchronization2 = enable13.synchronization2;
    features.debugMarker = hasDebugMarker;

    std::vector<const char*> extensions;
    if (features.debugMarker) {
        extensions.push_back(VK_EXT_DEBUG_MARKER_EXTENSION_NAME);
    }
    if (features.frameBoundary) {
        extensions.push_back(VK_EXT_FRAME_BOUNDARY_EXTENSION_NAME);
    }
    if (features.rayTracing) {
        extensions.insert(extensions.end(), std::begin(rayTracingExtensions),
                          std::end(rayTracingExtensions));
    }
    if (features.meshShader) {
        extensions.push_back(VK_EXT_MESH_SHADER_EXTENSION_NAME);
    }

    const float priorities[2] = {1.0f, 1.0f};
    std::vector<VkDeviceQueueCreateInfo> queues;
    queues.push_back(VkDeviceQueueCreateInfo{
        .sType = VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO,
        .queueFamilyIndex = main.family,
        .queueCount = (second.valid() && second.family == main.family) ? 2u : 1u,
        .pQueuePriorities = priorities,
    });
    if (second.valid() && second.family != main.family) {
        queues.push_back(VkDeviceQueueCreateInfo{
            .sType = VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO,
            .queueFamilyIndex = second.family,
            .queueCount = 1,
            .pQueuePriorities = priorities,
        });
    }
    const VkDeviceCreateInfo info{
        .sType = VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO,
        .pNext = chain,
        .queueCreateInfoCount = static_cast<uint32_t>(queues.size()),
        .pQueueCreateInfos = queues.data(),
        .enabledExtensionCount = static_cast<uint32_t>(extensions.size()),
        .ppEnabledExtensionNames = extensions.data(),
        .pEnabledFeatures = &enableCore,
    };
    VK_CHECK(vkCreateDevice(physical, &info, nullptr, &device));
    vkGetDeviceQueue(device, main.family, main.index, &main.queue);
    if (second.valid()) {
        vkGetDeviceQueue(device, second.family, second.index, &second.queue);
    }

    if (features.debugMarker) {
        auto load = [&](const char* name) { return vkGetDeviceProcAddr(device, name); };
        cmdMarkerBegin =
            reinterpret_cast<PFN_vkCmdDebugMarkerBeginEXT>(load("vkCmdDebugMarkerBeginEXT"));
        cmdMarkerEnd = reinterpret_cast<PFN_vkCmdDebugMarkerEndEXT>(load("vkCmdDebugMarkerEndEXT"));
        cmdMarkerInsert =
            reinterpret_cast<PFN_vkCmdDebugMarkerInsertEXT>(load("vkCmdDebugMarkerInsertEXT"));
        features.debugMarker = cmdMarkerBegin && cmdMarkerEnd && cmdMarkerInsert;
    }

    if (features.meshShader) {
        cmdDrawMeshTasks = reinterpret_cast<PFN_vkCmdDrawMeshTasksEXT>(
            vkGetDeviceProcAddr(device, "vkCmdDrawMeshTasksEXT"));
        features.meshShader = cmdDrawMeshTasks != nullptr;
    }

    if (features.rayTracing) {
        accelerationStructureProperties = {
            .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_ACCELERATION_STRUCTURE_PROPERTIES_KHR};
        rayTracingProperties = {
            .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_RAY_TRACING_PIPELINE_PROPERTIES_KHR,
            .pNext = &accelerationStructureProperties,
        };
        VkPhysicalDeviceProperties2 properties2{
            .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2,
            .pNext = &rayTracingProperties,
        };
        vkGetPhysicalDeviceProperties2(physical, &properties2);
        rayTracingProperties.pNext = nullptr;
    }
}

bool Context::scenarioSelected(const char* name) const {
    return options.scenarios.empty() ||
           std::find(options.scenarios.begin(), options.scenarios.end(), name) !=
               options.scenarios.end();
}

uint32_t Context::memoryType(uint32_t typeBits, VkMemoryPropertyFlags required,
                             VkMemoryPropertyFlags preferred) const {
    for (VkMemoryPropertyFlags wanted : {required | preferred, required}) {
        for (uint32_t i = 0; i < memoryProperties.memoryTypeCount; ++i) {
            if ((typeBits & (1u << i)) &&
                (memoryProperties.memoryTypes[i].propertyFlags & wanted) == wanted) {
                return i;
            }
        }
    }
    throw VulkanError(VK_ERROR_FEATURE_NOT_PRESENT,
                      "VK_ERROR_FEATURE_NOT_PRESENT: no suitable memory type");
}

std::string Context::describe() const {
    auto version = [](uint32_t v) {
        return std::to_string(VK_API_VERSION_MAJOR(v)) + "." +
               std::to_string(VK_API_VERSION_MINOR(v)) + "." +
               std::to_string(VK_API_VERSION_PATCH(v));
    };
    auto queue = [](const QueueInfo& q) {
        std::string flags;
        if (q.flags & VK_QUEUE_GRAPHICS_BIT) {
            flags += "G";
        }
        if (q.flags & VK_QUEUE_COMPUTE_BIT) {
            flags += "C";
        }
        if (q.flags & VK_QUEUE_TRANSFER_BIT) {
            flags += "T";
        }
        return "family " + std::to_string(q.family) + " index " + std::to_string(q.index) + " (" +
               flags + ")";
    };
    std::string line = std::string("device ") + std::to_string(options.device) + ": " +
                       properties.deviceName + ", Vulkan " + version(properties.apiVersion) +
                       "; main queue " + queue(main) + "; second queue " +
                       (second.valid() ? queue(second) : std::string("none"));
    line += std::string("; frame boundary ") + (features.frameBoundary ? "yes" : "no");
    line += std::string("; debug marker ") + (features.debugMarker ? "yes" : "no");
    line += std::string("; ray tracing ") + (features.rayTracing ? "yes" : "no");
    return line;
}

void Context::endFrame(uint64_t frameId) {
    if (!features.frameBoundary || std::exchange(frameEnded, false)) {
        return;
    }
    const VkFrameBoundaryEXT boundary{
        .sType = VK_STRUCTURE_TYPE_FRAME_BOUNDARY_EXT,
        .flags = VK_FRAME_BOUNDARY_FRAME_END_BIT_EXT,
        .frameID = frameId,
    };
    const VkSubmitInfo submit{.sType = VK_STRUCTURE_TYPE_SUBMIT_INFO, .pNext = &boundary};
    const VkFenceCreateInfo fenceInfo{.sType = VK_STRUCTURE_TYPE_FENCE_CREATE_INFO};
    VkFence fence = VK_NULL_HANDLE;
    VK_CHECK(vkCreateFence(device, &fenceInfo, nullptr, &fence));
    VkResult result = vkQueueSubmit(main.queue, 1, &submit, fence);
    if (result == VK_SUCCESS) {
        result = vkWaitForFences(device, 1, &fence, VK_TRUE, kFenceTimeoutNs);
    }
    vkDestroyFence(device, fence, nullptr);
    VK_CHECK(result);
}

} // namespace wl
