#pragma once
// Reads what the layer needs from a SPIR-V module without a SPIR-V library: the work-group size of
// a compute entry point, so that a dispatch can report its invocation count.
//
// Modules come straight from the application (vkCreateShaderModule, or inlined in a pipeline's
// stage info), so nothing in them is trusted: every read is bounds-checked and a module that does
// not parse yields "unknown" rather than a guess.

#include <array>
#include <cstdint>
#include <optional>
#include <span>

#include <vulkan/vulkan.h>

namespace vkscope {

inline constexpr uint32_t kSpirvMagic = 0x07230203;

// True when `bytes` starts like a SPIR-V module in host word order (what Vulkan consumes): a whole
// number of words, a full header and the magic number. Tells SPIR-V from GLSL source handed to
// VK_NV_glsl_shader.
bool is_spirv(std::span<const uint8_t> bytes) noexcept;

// The work-group size of the GLCompute entry point named `entry_point`, with specialization
// constants taken from `spec` (may be null) or their defaults. Precedence follows the SPIR-V
// specification: a constant decorated BuiltIn WorkgroupSize, then OpExecutionModeId LocalSizeId,
// then OpExecutionMode LocalSize. nullopt when the module is malformed, the entry point does not
// exist, or the size cannot be evaluated (for example a component computed by OpSpecConstantOp).
std::optional<std::array<uint32_t, 3>> compute_local_size(std::span<const uint32_t> spirv,
                                                          const char* entry_point,
                                                          const VkSpecializationInfo* spec);

} // namespace vkscope
