#include "errors.h"

namespace wl {

const char* resultName(VkResult result) {
    switch (result) {
#define WL_RESULT(name)                                                                            \
    case name:                                                                                     \
        return #name;
        WL_RESULT(VK_SUCCESS)
        WL_RESULT(VK_NOT_READY)
        WL_RESULT(VK_TIMEOUT)
        WL_RESULT(VK_EVENT_SET)
        WL_RESULT(VK_EVENT_RESET)
        WL_RESULT(VK_INCOMPLETE)
        WL_RESULT(VK_ERROR_OUT_OF_HOST_MEMORY)
        WL_RESULT(VK_ERROR_OUT_OF_DEVICE_MEMORY)
        WL_RESULT(VK_ERROR_INITIALIZATION_FAILED)
        WL_RESULT(VK_ERROR_DEVICE_LOST)
        WL_RESULT(VK_ERROR_MEMORY_MAP_FAILED)
        WL_RESULT(VK_ERROR_LAYER_NOT_PRESENT)
        WL_RESULT(VK_ERROR_EXTENSION_NOT_PRESENT)
        WL_RESULT(VK_ERROR_FEATURE_NOT_PRESENT)
        WL_RESULT(VK_ERROR_INCOMPATIBLE_DRIVER)
        WL_RESULT(VK_ERROR_TOO_MANY_OBJECTS)
        WL_RESULT(VK_ERROR_FORMAT_NOT_SUPPORTED)
        WL_RESULT(VK_ERROR_FRAGMENTED_POOL)
        WL_RESULT(VK_ERROR_UNKNOWN)
        WL_RESULT(VK_ERROR_OUT_OF_POOL_MEMORY)
        WL_RESULT(VK_ERROR_INVALID_EXTERNAL_HANDLE)
        WL_RESULT(VK_ERROR_FRAGMENTATION)
        WL_RESULT(VK_ERROR_INVALID_OPAQUE_CAPTURE_ADDRESS)
        WL_RESULT(VK_PIPELINE_COMPILE_REQUIRED)
        WL_RESULT(VK_ERROR_SURFACE_LOST_KHR)
        WL_RESULT(VK_ERROR_NATIVE_WINDOW_IN_USE_KHR)
        WL_RESULT(VK_SUBOPTIMAL_KHR)
        WL_RESULT(VK_ERROR_OUT_OF_DATE_KHR)
        WL_RESULT(VK_ERROR_INCOMPATIBLE_DISPLAY_KHR)
        WL_RESULT(VK_ERROR_VALIDATION_FAILED_EXT)
        WL_RESULT(VK_ERROR_INVALID_SHADER_NV)
        WL_RESULT(VK_ERROR_NOT_PERMITTED_KHR)
#undef WL_RESULT
    default:
        return "VK_RESULT_UNKNOWN";
    }
}

void throwVulkanError(VkResult result, const char* expr, const char* file, int line) {
    throw VulkanError(result, std::string(resultName(result)) + " from " + expr + " (" + file +
                                  ":" + std::to_string(line) + ")");
}

} // namespace wl
