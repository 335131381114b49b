#include "pipelines.h"

#include "errors.h"

#include <memory>
#include <utility>
#include <vector>

namespace wl {

namespace {

VkShaderModule createModule(Context& ctx, Spirv code) {
    const VkShaderModuleCreateInfo info{
        .sType = VK_STRUCTURE_TYPE_SHADER_MODULE_CREATE_INFO,
        .codeSize = code.bytes,
        .pCode = code.code,
    };
    VkShaderModule module = VK_NULL_HANDLE;
    VK_CHECK(vkCreateShaderModule(ctx.device, &info, nullptr, &module));
    return module;
}

// Shader modules are only needed while a pipeline is created.
class ScopedModule {
public:
    ScopedModule(Context& ctx, Spirv code)
        : device_(ctx.device), module_(createModule(ctx, code)) {}
    ~ScopedModule() { vkDestroyShaderModule(device_, module_, nullptr); }
    ScopedModule(const ScopedModule&) = delete;
    ScopedModule& operator=(const ScopedModule&) = delete;
    VkShaderModule get() const { return module_; }

private:
    VkDevice device_;
    VkShaderModule module_;
};

} // namespace

VkPipelineLayout createPipelineLayout(Context& ctx, Janitor& janitor,
                                      std::initializer_list<VkDescriptorSetLayout> sets,
                                      uint32_t pushBytes, VkShaderStageFlags pushStages) {
    const VkPushConstantRange range{.stageFlags = pushStages, .offset = 0, .size = pushBytes};
    const VkPipelineLayoutCreateInfo info{
        .sType = VK_STRUCTURE_TYPE_PIPELINE_LAYOUT_CREATE_INFO,
        .setLayoutCount = static_cast<uint32_t>(sets.size()),
        .pSetLayouts = sets.begin(),
        .pushConstantRangeCount = pushBytes ? 1u : 0u,
        .pPushConstantRanges = pushBytes ? &range : nullptr,
    };
    VkPipelineLayout layout = VK_NULL_HANDLE;
    VK_CHECK(vkCreatePipelineLayout(ctx.device, &info, nullptr, &layout));
    VkDevice device = ctx.device;
    janitor.defer([device, layout] { vkDestroyPipelineLayout(device, layout, nullptr); });
    return layout;
}

ComputeProgram createComputeProgram(Context& ctx, Janitor& janitor, Spirv code,
                                    uint32_t storageBuffers, uint32_t pushBytes,
                                    VkPipelineCreateFlags flags, const uint32_t* localSizeX) {
    VkDevice device = ctx.device;
    ComputeProgram program;
    std::vector<VkDescriptorSetLayoutBinding> bindings;
    for (uint32_t i = 0; i < storageBuffers; ++i) {
        bindings.push_back(VkDescriptorSetLayoutBinding{
            .binding = i,
            .descriptorType = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER,
            .descriptorCount = 1,
            .stageFlags = VK_SHADER_STAGE_COMPUTE_BIT,
        });
    }
    const VkDescriptorSetLayoutCreateInfo setInfo{
        .sType = VK_STRUCTURE_TYPE_DESCRIPTOR_SET_LAYOUT_CREATE_INFO,
        .bindingCount = storageBuffers,
        .pBindings = bindings.data(),
    };
    VK_CHECK(vkCreateDescriptorSetLayout(ctx.device, &setInfo, nullptr, &program.setLayout));
    janitor.defer(
        [device, l = program.setLayout] { vkDestroyDescriptorSetLayout(device, l, nullptr); });
    program.layout = createPipelineLayout(ctx, janitor, {program.setLayout}, pushBytes,
                                          VK_SHADER_STAGE_COMPUTE_BIT);

    const VkSpecializationMapEntry entry{.constantID = 0, .offset = 0, .size = sizeof(uint32_t)};
    const VkSpecializationInfo specialization{
        .mapEntryCount = 1,
        .pMapEntries = &entry,
        .dataSize = sizeof(uint32_t),
        .pData = localSizeX,
    };
    ScopedModule module(ctx, code);
    const VkComputePipelineCreateInfo info{
        .sType = VK_STRUCTURE_TYPE_COMPUTE_PIPELINE_CREATE_INFO,
        .flags = flags,
        .stage =
            {
                .sType = VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO,
                .stage = VK_SHADER_STAGE_COMPUTE_BIT,
                .module = module.get(),
                .pName = "main",
                .pSpecializationInfo = localSizeX ? &specialization : nullptr,
            },
        .layout = program.layout,
    };
    VK_CHECK(
        vkCreateComputePipelines(ctx.device, VK_NULL_HANDLE, 1, &info, nullptr, &program.pipeline));
    janitor.defer([device, p = program.pipeline] { vkDestroyPipeline(device, p, nullptr); });
    return program;
}

VkDescriptorSet createStorageSet(Context& ctx, Janitor& janitor, VkDescriptorSetLayout layout,
                                 std::initializer_list<VkBuffer> buffers) {
    const VkDescriptorPoolSize size{
        .type = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER,
        .descriptorCount = static_cast<uint32_t>(buffers.size()),
    };
    const VkDescriptorPoolCreateInfo poolInfo{
        .sType = VK_STRUCTURE_TYPE_DESCRIPTOR_POOL_CREATE_INFO,
        .maxSets = 1,
        .poolSizeCount = 1,
        .pPoolSizes = &size,
    };
    VkDescriptorPool pool = VK_NULL_HANDLE;
    VK_CHECK(vkCreateDescriptorPool(ctx.device, &poolInfo, nullptr, &pool));
    VkDevice device = ctx.device;
    janitor.defer([device, pool] { vkDestroyDescriptorPool(device, pool, nullptr); });

    const VkDescriptorSetAllocateInfo allocInfo{
        .sType = VK_STRUCTURE_TYPE_DESCRIPTOR_SET_ALLOCATE_INFO,
        .descriptorPool = pool,
        .descriptorSetCount = 1,
        .pSetLayouts = &layout,
    };
    VkDescriptorSet set = VK_NULL_HANDLE;
    VK_CHECK(vkAllocateDescriptorSets(ctx.device, &allocInfo, &set));

    std::vector<VkDescriptorBufferInfo> infos;
    for (VkBuffer buffer : buffers) {
        infos.push_back({buffer, 0, VK_WHOLE_SIZE});
    }
    std::vector<VkWriteDescriptorSet> writes;
    for (uint32_t i = 0; i < infos.size(); ++i) {
        writes.push_back(VkWriteDescriptorSet{
            .sType = VK_STRUCTURE_TYPE_WRITE_DESCRIPTOR_SET,
            .dstSet = set,
            .dstBinding = i,
            .descriptorCount = 1,
            .descriptorType = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER,
            .pBufferInfo = &infos[i],
        });
    }
    vkUpdateDescriptorSets(ctx.device, static_cast<uint32_t>(writes.size()), writes.data(), 0,
                           nullptr);
    return set;
}

void bindCompute(VkCommandBuffer cmd, const ComputeProgram& program, VkDescriptorSet set,
                 const void* push, uint32_t pushBytes) {
    vkCmdBindPipeline(cmd, VK_PIPELINE_BIND_POINT_COMPUTE, program.pipeline);
    vkCmdBindDescriptorSets(cmd, VK_PIPELINE_BIND_POINT_COMPUTE, program.layout, 0, 1, &set, 0,
                            nullptr);
    vkCmdPushConstants(cmd, program.layout, VK_SHADER_STAGE_COMPUTE_BIT, 0, pushBytes, push);
}

VkPipeline createGraphicsPipeline(Context& ctx, Janitor& janitor,
                                  const GraphicsPipelineDesc& desc) {
    const bool mesh = desc.mesh.code != nullptr;
    std::vector<std::pair<VkShaderStageFlagBits, Spirv>> wanted;
    if (mesh) {
        if (desc.task.code) {
            wanted.emplace_back(VK_SHADER_STAGE_TASK_BIT_EXT, desc.task);
        }
        wanted.emplace_back(VK_SHADER_STAGE_MESH_BIT_EXT, desc.mesh);
    } else {
        wanted.emplace_back(VK_SHADER_STAGE_VERTEX_BIT, desc.vertex);
    }
    wanted.emplace_back(VK_SHADER_STAGE_FRAGMENT_BIT, desc.fragment);
    std::vector<std::unique_ptr<ScopedModule>> modules;
    std::vector<VkPipelineShaderStageCreateInfo> stages;
    for (const auto& [stage, code] : wanted) {
        modules.push_back(std::make_unique<ScopedModule>(ctx, code));
        stages.push_back({
            .sType = VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO,
            .stage = stage,
            .module = modules.back()->get(),
            .pName = "main",
        });
    }
    const VkPipelineVertexInputStateCreateInfo vertexInput{
        .sType = VK_STRUCTURE_TYPE_PIPELINE_VERTEX_INPUT_STATE_CREATE_INFO};
    const VkPipelineInputAssemblyStateCreateInfo assembly{
        .sType = VK_STRUCTURE_TYPE_PIPELINE_INPUT_ASSEMBLY_STATE_CREATE_INFO,
        .topology = VK_PRIMITIVE_TOPOLOGY_TRIANGLE_LIST,
    };
    const VkPipelineViewportStateCreateInfo viewport{
        .sType = VK_STRUCTURE_TYPE_PIPELINE_VIEWPORT_STATE_CREATE_INFO,
        .viewportCount = 1,
        .scissorCount = 1,
    };
    const VkPipelineRasterizationStateCreateInfo raster{
        .sType = VK_STRUCTURE_TYPE_PIPELINE_RASTERIZATION_STATE_CREATE_INFO,
        .polygonMode = VK_POLYGON_MODE_FILL,
        .cullMode = VK_CULL_MODE_NONE,
        .frontFace = VK_FRONT_FACE_COUNTER_CLOCKWISE,
        .lineWidth = 1.0f,
    };
    const VkPipelineMultisampleStateCreateInfo multisample{
        .sType = VK_STRUCTURE_TYPE_PIPELINE_MULTISAMPLE_STATE_CREATE_INFO,
        .rasterizationSamples = VK_SAMPLE_COUNT_1_BIT,
    };
    const VkPipelineDepthStencilStateCreateInfo depth{
        .sType = VK_STRUCTURE_TYPE_PIPELINE_DEPTH_STENCIL_STATE_CREATE_INFO,
        .depthTestEnable = desc.depthTest,
        .depthWriteEnable = desc.depthTest,
        .depthCompareOp = VK_COMPARE_OP_LESS_OR_EQUAL,
    };
    const VkPipelineColorBlendAttachmentState blendAttachment{
        .blendEnable = desc.additive,
        .srcColorBlendFactor = VK_BLEND_FACTOR_ONE,
        .dstColorBlendFactor = VK_BLEND_FACTOR_ONE,
        .colorBlendOp = VK_BLEND_OP_ADD,
        .srcAlphaBlendFactor = VK_BLEND_FACTOR_ONE,
        .dstAlphaBlendFactor = VK_BLEND_FACTOR_ONE,
        .alphaBlendOp = VK_BLEND_OP_ADD,
        .colorWriteMask = VK_COLOR_COMPONENT_R_BIT | VK_COLOR_COMPONENT_G_BIT |
                          VK_COLOR_COMPONENT_B_BIT | VK_COLOR_COMPONENT_A_BIT,
    };
    const VkPipelineColorBlendStateCreateInfo blend{
        .sType = VK_STRUCTURE_TYPE_PIPELINE_COLOR_BLEND_STATE_CREATE_INFO,
        .attachmentCount = 1,
        .pAttachments = &blendAttachment,
    };
    const VkDynamicState dynamicStates[] = {VK_DYNAMIC_STATE_VIEWPORT, VK_DYNAMIC_STATE_SCISSOR};
    const VkPipelineDynamicStateCreateInfo dynamic{
        .sType = VK_STRUCTURE_TYPE_PIPELINE_DYNAMIC_STATE_CREATE_INFO,
        .dynamicStateCount = 2,
        .pDynamicStates = dynamicStates,
    };
    const VkPipelineRenderingCreateInfo rendering{
        .sType = VK_STRUCTURE_TYPE_PIPELINE_RENDERING_CREATE_INFO,
        .colorAttachmentCount = 1,
        .pColorAttachmentFormats = &desc.colorFormat,
    };
    const VkGraphicsPipelineCreateInfo info{
        .sType = VK_STRUCTURE_TYPE_GRAPHICS_PIPELINE_CREATE_INFO,
        .pNext = desc.renderPass ? nullptr : &rendering,
        .stageCount = static_cast<uint32_t>(stages.size()),
        .pStages = stages.data(),
        // A mesh pipeline has no vertex input or input assembly.
        .pVertexInputState = mesh ? nullptr : &vertexInput,
        .pInputAssemblyState = mesh ? nullptr : &assembly,
        .pViewportState = &viewport,
        .pRasterizationState = &raster,
        .pMultisampleState = &multisample,
        .pDepthStencilState = &depth,
        .pColorBlendState = &blend,
        .pDynamicState = &dynamic,
        .layout = desc.layout,
        .renderPass = desc.renderPass,
        .subpass = desc.subpass,
    };
    VkPipeline pipeline = VK_NULL_HANDLE;
    VK_CHECK(vkCreateGraphicsPipelines(ctx.device, VK_NULL_HANDLE, 1, &info, nullptr, &pipeline));
    VkDevice device = ctx.device;
    janitor.defer([device, pipeline] { vkDestroyPipeline(device, pipeline, nullptr); });
    return pipeline;
}

} // namespace wl
