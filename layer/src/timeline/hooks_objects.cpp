// The application's objects whose properties describe workloads: buffers (sizes, and the
// TRANSFER_SRC usage indirect parameters need to be copied), images and views (formats, samples,
// extents), render passes and framebuffers, and the compute shaders whose work-group size the
// dispatches report; and how many pipelines, shader objects and shader modules each frame
// created (warm-up frames, docs/timing.md).

#include "timeline/device.hpp"

#include "timeline/spirv_reader.hpp"

#include <cstring>
#include <span>

namespace vkscope {
namespace {

using timeline::timeline_of;
using timeline::TimelineDevice;

const DeviceDispatch& next_of(VkDevice device) {
    return find_device(device)->next;
}

// Counts the pipelines or shader objects a creation made (null entries: not made) for the frame
// they were made in.
template <typename Handle> void count_created(TimelineDevice& tl, std::span<const Handle> made) {
    uint64_t n = 0;
    for (const Handle h : made) {
        n += h != VK_NULL_HANDLE ? 1 : 0;
    }
    if (n) {
        tl.pipelines_created.fetch_add(n, std::memory_order_relaxed);
    }
}

// The work-group size of a compute stage, whether its SPIR-V is a module or inlined.
std::optional<timeline::Size3> stage_local_size(TimelineDevice& tl,
                                                const VkPipelineShaderStageCreateInfo& stage) {
    std::span<const uint32_t> code;
    if (const timeline::ShaderModuleInfo* m = tl.modules.find(key(stage.module))) {
        code = m->code;
    }
    for (auto* s = static_cast<const VkBaseInStructure*>(stage.pNext); s; s = s->pNext) {
        if (s->sType == VK_STRUCTURE_TYPE_SHADER_MODULE_CREATE_INFO) {
            const auto* inline_info = reinterpret_cast<const VkShaderModuleCreateInfo*>(s);
            code = {inline_info->pCode, inline_info->codeSize / 4};
        }
    }
    if (code.empty() || !stage.pName) {
        return std::nullopt;
    }
    return compute_local_size(code, stage.pName, stage.pSpecializationInfo);
}

} // namespace

VKAPI_ATTR VkResult VKAPI_CALL hooks::vkCreateBuffer(VkDevice device,
                                                     const VkBufferCreateInfo* pCreateInfo,
                                                     const VkAllocationCallbacks* pAllocator,
                                                     VkBuffer* pBuffer) {
    VkBufferCreateInfo info = *pCreateInfo;
    // Indirect parameters (and draw counts) are copied out by the layer; the copy needs this.
    if (info.usage & VK_BUFFER_USAGE_INDIRECT_BUFFER_BIT) {
        info.usage |= VK_BUFFER_USAGE_TRANSFER_SRC_BIT;
    }
    const VkResult result = next_of(device).CreateBuffer(device, &info, pAllocator, pBuffer);
    if (result == VK_SUCCESS) {
        if (TimelineDevice* tl = timeline_of(device)) {
            auto buffer = std::make_unique<timeline::BufferInfo>();
            buffer->size = info.size;
            buffer->usage = info.usage;
            tl->buffers.insert(key(*pBuffer), std::move(buffer));
        }
    }
    return result;
}

VKAPI_ATTR void VKAPI_CALL hooks::vkDestroyBuffer(VkDevice device, VkBuffer buffer,
                                                  const VkAllocationCallbacks* pAllocator) {
    if (TimelineDevice* tl = timeline_of(device); tl && buffer) {
        if (const timeline::BufferInfo* b = tl->buffers.find(key(buffer)); b && b->address) {
            std::lock_guard lock(tl->addresses_mutex);
            tl->addresses.erase(b->address);
        }
        tl->buffers.erase(key(buffer));
    }
    next_of(device).DestroyBuffer(device, buffer, pAllocator);
}

namespace {

template <auto Next>
VkDeviceAddress buffer_address(VkDevice device, const VkBufferDeviceAddressInfo* info) {
    const VkDeviceAddress address = (next_of(device).*Next)(device, info);
    TimelineDevice* tl = timeline_of(device);
    if (address && tl) {
        if (timeline::BufferInfo* b = tl->buffers.find(key(info->buffer))) {
            std::lock_guard lock(tl->addresses_mutex);
            tl->addresses[address] = {address + b->size, info->buffer};
            b->address = address;
        }
    }
    return address;
}

} // namespace

VKAPI_ATTR VkDeviceAddress VKAPI_CALL
hooks::vkGetBufferDeviceAddress(VkDevice device, const VkBufferDeviceAddressInfo* pInfo) {
    return buffer_address<&DeviceDispatch::GetBufferDeviceAddress>(device, pInfo);
}
VKAPI_ATTR VkDeviceAddress VKAPI_CALL
hooks::vkGetBufferDeviceAddressKHR(VkDevice device, const VkBufferDeviceAddressInfo* pInfo) {
    return buffer_address<&DeviceDispatch::GetBufferDeviceAddressKHR>(device, pInfo);
}
VKAPI_ATTR VkDeviceAddress VKAPI_CALL
hooks::vkGetBufferDeviceAddressEXT(VkDevice device, const VkBufferDeviceAddressInfo* pInfo) {
    return buffer_address<&DeviceDispatch::GetBufferDeviceAddressEXT>(device, pInfo);
}

VKAPI_ATTR VkResult VKAPI_CALL hooks::vkCreateImage(VkDevice device,
                                                    const VkImageCreateInfo* pCreateInfo,
                                                    const VkAllocationCallbacks* pAllocator,
                                                    VkImage* pImage) {
    const VkResult result = next_of(device).CreateImage(device, pCreateInfo, pAllocator, pImage);
    TimelineDevice* tl = timeline_of(device);
    if (result == VK_SUCCESS && tl) {
        tl->images.insert(key(*pImage),
                          std::make_unique<timeline::ImageInfo>(timeline::ImageInfo{
                              pCreateInfo->format, pCreateInfo->samples, pCreateInfo->extent,
                              pCreateInfo->mipLevels, pCreateInfo->arrayLayers}));
    }
    return result;
}

VKAPI_ATTR void VKAPI_CALL hooks::vkDestroyImage(VkDevice device, VkImage image,
                                                 const VkAllocationCallbacks* pAllocator) {
    if (TimelineDevice* tl = timeline_of(device); tl && image) {
        tl->images.erase(key(image));
    }
    next_of(device).DestroyImage(device, image, pAllocator);
}

VKAPI_ATTR VkResult VKAPI_CALL hooks::vkCreateImageView(VkDevice device,
                                                        const VkImageViewCreateInfo* pCreateInfo,
                                                        const VkAllocationCallbacks* pAllocator,
                                                        VkImageView* pView) {
    const VkResult result = next_of(device).CreateImageView(device, pCreateInfo, pAllocator, pView);
    TimelineDevice* tl = timeline_of(device);
    if (result == VK_SUCCESS && tl) {
        timeline::ImageViewInfo info{pCreateInfo->format, VK_SAMPLE_COUNT_1_BIT};
        if (const timeline::ImageInfo* image = tl->images.find(key(pCreateInfo->image))) {
            info.samples = image->samples;
        }
        tl->views.insert(key(*pView), std::make_unique<timeline::ImageViewInfo>(info));
    }
    return result;
}

VKAPI_ATTR void VKAPI_CALL hooks::vkDestroyImageView(VkDevice device, VkImageView imageView,
                                                     const VkAllocationCallbacks* pAllocator) {
    if (TimelineDevice* tl = timeline_of(device); tl && imageView) {
        tl->views.erase(key(imageView));
    }
    next_of(device).DestroyImageView(device, imageView, pAllocator);
}

namespace {

template <typename Info, auto Next>
VkResult create_render_pass(VkDevice device, const Info* info, const VkAllocationCallbacks* alloc,
                            VkRenderPass* pass) {
    const VkResult result = (next_of(device).*Next)(device, info, alloc, pass);
    TimelineDevice* tl = timeline_of(device);
    if (result == VK_SUCCESS && tl) {
        tl->render_passes.insert(key(*pass), std::make_unique<timeline::RenderPassInfo>(
                                                 timeline::describe_render_pass(*info)));
    }
    return result;
}

} // namespace

VKAPI_ATTR VkResult VKAPI_CALL hooks::vkCreateRenderPass(VkDevice device,
                                                         const VkRenderPassCreateInfo* pCreateInfo,
                                                         const VkAllocationCallbacks* pAllocator,
                                                         VkRenderPass* pRenderPass) {
    return create_render_pass<VkRenderPassCreateInfo, &DeviceDispatch::CreateRenderPass>(
        device, pCreateInfo, pAllocator, pRenderPass);
}
VKAPI_ATTR VkResult VKAPI_CALL
hooks::vkCreateRenderPass2(VkDevice device, const VkRenderPassCreateInfo2* pCreateInfo,
                           const VkAllocationCallbacks* pAllocator, VkRenderPass* pRenderPass) {
    return create_render_pass<VkRenderPassCreateInfo2, &DeviceDispatch::CreateRenderPass2>(
        device, pCreateInfo, pAllocator, pRenderPass);
}
VKAPI_ATTR VkResult VKAPI_CALL
hooks::vkCreateRenderPass2KHR(VkDevice device, const VkRenderPassCreateInfo2* pCreateInfo,
                              const VkAllocationCallbacks* pAllocator, VkRenderPass* pRenderPass) {
    return create_render_pass<VkRenderPassCreateInfo2, &DeviceDispatch::CreateRenderPass2KHR>(
        device, pCreateInfo, pAllocator, pRenderPass);
}

VKAPI_ATTR void VKAPI_CALL hooks::vkDestroyRenderPass(VkDevice device, VkRenderPass renderPass,
                                                      const VkAllocationCallbacks* pAllocator) {
    if (TimelineDevice* tl = timeline_of(device); tl && renderPass) {
        tl->render_passes.erase(key(renderPass));
    }
    next_of(device).DestroyRenderPass(device, renderPass, pAllocator);
}

VKAPI_ATTR VkResult VKAPI_CALL
hooks::vkCreateFramebuffer(VkDevice device, const VkFramebufferCreateInfo* pCreateInfo,
                           const VkAllocationCallbacks* pAllocator, VkFramebuffer* pFramebuffer) {
    const VkResult result =
        next_of(device).CreateFramebuffer(device, pCreateInfo, pAllocator, pFramebuffer);
    TimelineDevice* tl = timeline_of(device);
    if (result == VK_SUCCESS && tl) {
        tl->framebuffers.insert(key(*pFramebuffer),
                                std::make_unique<timeline::FramebufferInfo>(
                                    timeline::FramebufferInfo{pCreateInfo->layers}));
    }
    return result;
}

VKAPI_ATTR void VKAPI_CALL hooks::vkDestroyFramebuffer(VkDevice device, VkFramebuffer framebuffer,
                                                       const VkAllocationCallbacks* pAllocator) {
    if (TimelineDevice* tl = timeline_of(device); tl && framebuffer) {
        tl->framebuffers.erase(key(framebuffer));
    }
    next_of(device).DestroyFramebuffer(device, framebuffer, pAllocator);
}

VKAPI_ATTR VkResult VKAPI_CALL hooks::vkCreateShaderModule(
    VkDevice device, const VkShaderModuleCreateInfo* pCreateInfo,
    const VkAllocationCallbacks* pAllocator, VkShaderModule* pShaderModule) {
    const VkResult result =
        next_of(device).CreateShaderModule(device, pCreateInfo, pAllocator, pShaderModule);
    TimelineDevice* tl = timeline_of(device);
    if (result == VK_SUCCESS && tl) {
        tl->modules_created.fetch_add(1, std::memory_order_relaxed);
    }
    // Kept because the application may destroy the module as soon as its pipelines exist.
    if (result == VK_SUCCESS && tl &&
        is_spirv({reinterpret_cast<const uint8_t*>(pCreateInfo->pCode), pCreateInfo->codeSize})) {
        auto module = std::make_unique<timeline::ShaderModuleInfo>();
        module->code.assign(pCreateInfo->pCode, pCreateInfo->pCode + pCreateInfo->codeSize / 4);
        tl->modules.insert(key(*pShaderModule), std::move(module));
    }
    return result;
}

VKAPI_ATTR void VKAPI_CALL hooks::vkDestroyShaderModule(VkDevice device,
                                                        VkShaderModule shaderModule,
                                                        const VkAllocationCallbacks* pAllocator) {
    if (TimelineDevice* tl = timeline_of(device); tl && shaderModule) {
        tl->modules.erase(key(shaderModule));
    }
    next_of(device).DestroyShaderModule(device, shaderModule, pAllocator);
}

VKAPI_ATTR VkResult VKAPI_CALL hooks::vkCreateComputePipelines(
    VkDevice device, VkPipelineCache pipelineCache, uint32_t createInfoCount,
    const VkComputePipelineCreateInfo* pCreateInfos, const VkAllocationCallbacks* pAllocator,
    VkPipeline* pPipelines) {
    const VkResult result = next_of(device).CreateComputePipelines(
        device, pipelineCache, createInfoCount, pCreateInfos, pAllocator, pPipelines);
    TimelineDevice* tl = timeline_of(device);
    if (tl) {
        count_created(*tl, std::span<const VkPipeline>(pPipelines, createInfoCount));
    }
    // Some pipelines may exist even when the call failed (VK_PIPELINE_COMPILE_REQUIRED).
    for (uint32_t i = 0; tl && i < createInfoCount; ++i) {
        if (pPipelines[i]) {
            tl->pipelines.insert(
                key(pPipelines[i]),
                std::make_unique<timeline::ComputeShaderInfo>(
                    timeline::ComputeShaderInfo{stage_local_size(*tl, pCreateInfos[i].stage)}));
        }
    }
    return result;
}

VKAPI_ATTR VkResult VKAPI_CALL hooks::vkCreateGraphicsPipelines(
    VkDevice device, VkPipelineCache pipelineCache, uint32_t createInfoCount,
    const VkGraphicsPipelineCreateInfo* pCreateInfos, const VkAllocationCallbacks* pAllocator,
    VkPipeline* pPipelines) {
    const VkResult result = next_of(device).CreateGraphicsPipelines(
        device, pipelineCache, createInfoCount, pCreateInfos, pAllocator, pPipelines);
    if (TimelineDevice* tl = timeline_of(device)) {
        count_created(*tl, std::span<const VkPipeline>(pPipelines, createInfoCount));
    }
    return result;
}

VKAPI_ATTR VkResult VKAPI_CALL hooks::vkCreateRayTracingPipelinesKHR(
    VkDevice device, VkDeferredOperationKHR deferredOperation, VkPipelineCache pipelineCache,
    uint32_t createInfoCount, const VkRayTracingPipelineCreateInfoKHR* pCreateInfos,
    const VkAllocationCallbacks* pAllocator, VkPipeline* pPipelines) {
    const VkResult result = next_of(device).CreateRayTracingPipelinesKHR(
        device, deferredOperation, pipelineCache, createInfoCount, pCreateInfos, pAllocator,
        pPipelines);
    // A deferred creation compiles on the threads that join the operation: counted as it
    // starts, in the frame that asked for it.
    if (TimelineDevice* tl = timeline_of(device)) {
        if (result == VK_OPERATION_DEFERRED_KHR || result == VK_OPERATION_NOT_DEFERRED_KHR) {
            tl->pipelines_created.fetch_add(createInfoCount, std::memory_order_relaxed);
        } else {
            count_created(*tl, std::span<const VkPipeline>(pPipelines, createInfoCount));
        }
    }
    return result;
}

VKAPI_ATTR void VKAPI_CALL hooks::vkDestroyPipeline(VkDevice device, VkPipeline pipeline,
                                                    const VkAllocationCallbacks* pAllocator) {
    if (TimelineDevice* tl = timeline_of(device); tl && pipeline) {
        tl->pipelines.erase(key(pipeline));
    }
    next_of(device).DestroyPipeline(device, pipeline, pAllocator);
}

#ifdef VK_EXT_shader_object
VKAPI_ATTR VkResult VKAPI_CALL hooks::vkCreateShadersEXT(VkDevice device, uint32_t createInfoCount,
                                                         const VkShaderCreateInfoEXT* pCreateInfos,
                                                         const VkAllocationCallbacks* pAllocator,
                                                         VkShaderEXT* pShaders) {
    const VkResult result = next_of(device).CreateShadersEXT(device, createInfoCount, pCreateInfos,
                                                             pAllocator, pShaders);
    TimelineDevice* tl = timeline_of(device);
    if (tl) {
        count_created(*tl, std::span<const VkShaderEXT>(pShaders, createInfoCount));
    }
    for (uint32_t i = 0; tl && i < createInfoCount; ++i) {
        const VkShaderCreateInfoEXT& info = pCreateInfos[i];
        if (!pShaders[i] || info.stage != VK_SHADER_STAGE_COMPUTE_BIT) {
            continue;
        }
        std::optional<timeline::Size3> size;
        if (info.codeType == VK_SHADER_CODE_TYPE_SPIRV_EXT && info.pName) {
            size = compute_local_size({static_cast<const uint32_t*>(info.pCode), info.codeSize / 4},
                                      info.pName, info.pSpecializationInfo);
        }
        tl->shaders.insert(key(pShaders[i]), std::make_unique<timeline::ComputeShaderInfo>(
                                                 timeline::ComputeShaderInfo{size}));
    }
    return result;
}

VKAPI_ATTR void VKAPI_CALL hooks::vkDestroyShaderEXT(VkDevice device, VkShaderEXT shader,
                                                     const VkAllocationCallbacks* pAllocator) {
    if (TimelineDevice* tl = timeline_of(device); tl && shader) {
        tl->shaders.erase(key(shader));
    }
    next_of(device).DestroyShaderEXT(device, shader, pAllocator);
}
#endif

} // namespace vkscope
