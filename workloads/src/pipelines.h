// Descriptor sets, pipeline layouts and pipelines.
#pragma once

#include "context.h"
#include "janitor.h"
#include "shaders.h"

#include <initializer_list>

namespace wl {

// A compute shader whose bindings 0..N-1 of set 0 are storage buffers, plus push constants.
struct ComputeProgram {
    VkDescriptorSetLayout setLayout = VK_NULL_HANDLE;
    VkPipelineLayout layout = VK_NULL_HANDLE;
    VkPipeline pipeline = VK_NULL_HANDLE;
};

// `localSizeX`, when given, feeds specialization constant 0 (local_size_x_id = 0).
ComputeProgram createComputeProgram(Context& ctx, Janitor& janitor, Spirv code,
                                    uint32_t storageBuffers, uint32_t pushBytes,
                                    VkPipelineCreateFlags flags = 0,
                                    const uint32_t* localSizeX = nullptr);

// A descriptor set (from a pool of its own) whose bindings point at whole `buffers`.
VkDescriptorSet createStorageSet(Context& ctx, Janitor& janitor, VkDescriptorSetLayout layout,
                                 std::initializer_list<VkBuffer> buffers);

// Binds the program and its set and pushes `push` (pushBytes long).
void bindCompute(VkCommandBuffer cmd, const ComputeProgram& program, VkDescriptorSet set,
                 const void* push, uint32_t pushBytes);

VkPipelineLayout createPipelineLayout(Context& ctx, Janitor& janitor,
                                      std::initializer_list<VkDescriptorSetLayout> sets,
                                      uint32_t pushBytes, VkShaderStageFlags pushStages);

struct GraphicsPipelineDesc {
    Spirv vertex{};
    Spirv fragment{};
    // Task and mesh stages instead of the vertex stage (VK_EXT_mesh_shader), when `mesh` is set.
    Spirv task{};
    Spirv mesh{};
    VkPipelineLayout layout = VK_NULL_HANDLE;
    // A classic render pass, or VK_NULL_HANDLE for dynamic rendering into `colorFormat`.
    VkRenderPass renderPass = VK_NULL_HANDLE;
    uint32_t subpass = 0;
    VkFormat colorFormat = VK_FORMAT_R8G8B8A8_UNORM;
    bool additive = false;  // ONE + ONE blending instead of replacing
    bool depthTest = false; // LESS_OR_EQUAL test with writes
};

// Triangle lists without vertex input; viewport and scissor are dynamic.
VkPipeline createGraphicsPipeline(Context& ctx, Janitor& janitor, const GraphicsPipelineDesc& desc);

} // namespace wl
