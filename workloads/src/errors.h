// Error kinds that map onto the program's exit codes.
#pragma once

#include <vulkan/vulkan.h>

#include <stdexcept>
#include <string>

namespace wl {

const char* resultName(VkResult result);

// A Vulkan call failed: exit code 4.
class VulkanError : public std::runtime_error {
public:
    VulkanError(VkResult result, const std::string& what)
        : std::runtime_error(what), result(result) {}
    VkResult result;
};

// The GPU produced a wrong result: exit code 1.
class VerifyError : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

// The device lacks something a scenario needs; reported as SKIP, not as a failure.
class SkipScenario : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

[[noreturn]] void throwVulkanError(VkResult result, const char* expr, const char* file, int line);

inline void check(VkResult result, const char* expr, const char* file, int line) {
    if (result != VK_SUCCESS) {
        throwVulkanError(result, expr, file, line);
    }
}

} // namespace wl

#define VK_CHECK(expr) ::wl::check((expr), #expr, __FILE__, __LINE__)
