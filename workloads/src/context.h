// Instance, physical device, logical device and queues for one cycle of the program.
#pragma once

#include "options.h"
#include "vkscope/vk_compat.h"

#include <cstdint>
#include <string>
#include <vector>

namespace wl {

struct QueueInfo {
    uint32_t family = UINT32_MAX;
    uint32_t index = 0;
    VkQueue queue = VK_NULL_HANDLE;
    VkQueueFlags flags = 0;
    uint32_t timestampValidBits = 0;

    bool valid() const { return family != UINT32_MAX; }
};

// What the device offers that scenarios may depend on; each flag is only set when the
// corresponding feature or extension was also enabled on the device.
struct Features {
    uint32_t apiVersion = VK_API_VERSION_1_0; // the lower of instance and device versions
    bool renderPass2 = false;
    bool dynamicRendering = false;
    bool synchronization2 = false;
    bool timelineSemaphore = false;
    bool hostQueryReset = false;
    bool multiview = false;
    bool debugUtils = false;
    bool debugMarker = false;
    bool frameBoundary = false;
    bool multiDrawIndirect = false;
    bool drawIndirectCount = false;
    bool pipelineStatisticsQuery = false;
    // VK_KHR_ray_tracing_pipeline, VK_KHR_acceleration_structure and buffer device addresses
    // (with indirect trace rays), enabled only when the ray_tracing scenario is selected.
    bool rayTracing = false;
    // Why rayTracing is false.
    const char* rayTracingMissing = "the ray_tracing scenario is not selected";
    // VK_EXT_mesh_shader with task and mesh shaders, enabled only when the mesh_shader scenario
    // is selected.
    bool meshShader = false;
    const char* meshShaderMissing = "the mesh_shader scenario is not selected";
};

class Context {
public:
    explicit Context(const Options& options);
    ~Context();
    Context(const Context&) = delete;
    Context& operator=(const Context&) = delete;

    bool hasGraphics() const { return (main.flags & VK_QUEUE_GRAPHICS_BIT) != 0; }
    // Index of a memory type with all `required` flags, preferring one with `preferred` too.
    uint32_t memoryType(uint32_t typeBits, VkMemoryPropertyFlags required,
                        VkMemoryPropertyFlags preferred = 0) const;
    // Marks the end of a frame with VK_EXT_frame_boundary when the device has it, unless a
    // scenario's own submission already did (`frameEnded`, cleared here).
    void endFrame(uint64_t frameId);
    // One line naming the device, the queues in use and the optional extensions found.
    std::string describe() const;

    const Options& options;
    VkInstance instance = VK_NULL_HANDLE;
    VkDebugUtilsMessengerEXT messenger = VK_NULL_HANDLE;
    VkPhysicalDevice physical = VK_NULL_HANDLE;
    VkDevice device = VK_NULL_HANDLE;
    VkPhysicalDeviceProperties properties{};
    VkPhysicalDeviceMemoryProperties memoryProperties{};
    QueueInfo main;   // graphics+compute when there is such a family, else compute
    QueueInfo second; // invalid when the device has a single queue
    Features features;
    // Set by a scenario whose submission chained VkFrameBoundaryEXT for the current frame.
    bool frameEnded = false;

    // Extension entry points, null when the extension is not enabled.
    PFN_vkCmdBeginDebugUtilsLabelEXT cmdBeginLabel = nullptr;
    PFN_vkCmdEndDebugUtilsLabelEXT cmdEndLabel = nullptr;
    PFN_vkCmdInsertDebugUtilsLabelEXT cmdInsertLabel = nullptr;
    PFN_vkQueueBeginDebugUtilsLabelEXT queueBeginLabel = nullptr;
    PFN_vkQueueEndDebugUtilsLabelEXT queueEndLabel = nullptr;
    PFN_vkQueueInsertDebugUtilsLabelEXT queueInsertLabel = nullptr;
    PFN_vkSetDebugUtilsObjectNameEXT setObjectName = nullptr;
    PFN_vkCmdDebugMarkerBeginEXT cmdMarkerBegin = nullptr;
    PFN_vkCmdDebugMarkerEndEXT cmdMarkerEnd = nullptr;
    PFN_vkCmdDebugMarkerInsertEXT cmdMarkerInsert = nullptr;
    PFN_vkCmdDrawMeshTasksEXT cmdDrawMeshTasks = nullptr;
    // Ray tracing limits, valid when features.rayTracing.
    VkPhysicalDeviceRayTracingPipelinePropertiesKHR rayTracingProperties{};
    VkPhysicalDeviceAccelerationStructurePropertiesKHR accelerationStructureProperties{};

private:
    void createInstance();
    void pickPhysicalDevice();
    void createDevice();
    bool scenarioSelected(const char* name) const;
    void destroy();

    bool debugReportEnabled_ = false;
    std::vector<std::string> enabledLayers_;
};

// Warnings and errors reported through the debug messenger, over all cycles.
uint32_t validationMessageCount();

} // namespace wl
