// Render pass instances and the draws inside them. A draw only bumps its command buffer's
// counter: one lock-free lookup, no allocation, nothing written into the command buffer.

#include "timeline/device.hpp"
#include "timeline/record_sink.hpp"

namespace vkscope {
namespace {

using timeline::CommandBufferState;
using timeline::find_command_buffer;
using timeline::ParameterRequest;

const DeviceDispatch& next_of(const void* handle) {
    return find_device(handle)->next;
}

std::string begin_info_fields(CommandBufferState& cb, const VkRenderPassBeginInfo& begin,
                              const char* api) {
    timeline::TimelineDevice& tl = *cb.device;
    const timeline::FramebufferInfo* fb = tl.framebuffers.find(key(begin.framebuffer));
    static const timeline::RenderPassInfo kUnknown{1, 0, "[]"};
    const timeline::RenderPassInfo* pass = tl.render_passes.find(key(begin.renderPass));
    return timeline::cached_render_pass_fields(tl.id, api, begin.renderArea, fb ? fb->layers : 1,
                                               pass ? *pass : kUnknown);
}

// The first subpass executes secondaries (VK_SUBPASS_CONTENTS_INLINE_AND_SECONDARY_COMMAND_
// BUFFERS_EXT too: anything but inline).
bool executes_secondaries(VkSubpassContents contents) {
    return contents != VK_SUBPASS_CONTENTS_INLINE;
}

template <typename Forward>
void begin_render_pass(VkCommandBuffer handle, const VkRenderPassBeginInfo* begin, const char* api,
                       VkSubpassContents contents, Forward&& forward) {
    CommandBufferState* cb = find_command_buffer(handle);
    if (cb) {
        timeline::VulkanRecordSink sink(*cb);
        timeline::RenderPassFlags flags;
        flags.secondaries = executes_secondaries(contents);
        // The tag opens before the instance so that its whole time is inside the label.
        cb->recorder.begin_render_pass(begin_info_fields(*cb, *begin, api), flags, sink);
    }
    forward(cb ? cb->device->next : next_of(handle));
}

template <typename Forward> void end_render_pass(VkCommandBuffer handle, Forward&& forward) {
    CommandBufferState* cb = find_command_buffer(handle);
    forward(cb ? cb->device->next : next_of(handle));
    if (cb) {
        timeline::VulkanRecordSink sink(*cb);
        cb->recorder.end_render_pass(sink);
    }
}

template <auto Next>
void begin_rendering(VkCommandBuffer handle, const VkRenderingInfo* info, const char* api) {
    CommandBufferState* cb = find_command_buffer(handle);
    if (!cb) {
        return (next_of(handle).*Next)(handle, info);
    }
    const timeline::RenderPassFlags flags{
        (info->flags & VK_RENDERING_RESUMING_BIT) != 0,
        (info->flags & VK_RENDERING_SUSPENDING_BIT) != 0,
        (info->flags & VK_RENDERING_CONTENTS_SECONDARY_COMMAND_BUFFERS_BIT) != 0};
    std::string fields;
    if (!flags.resuming) {
        timeline::TimelineDevice& tl = *cb->device;
        fields = cb->rendering_fields.fields(timeline::describe_rendering(
            tl.id, api, *info, [&tl](VkImageView view) -> std::optional<timeline::ImageViewInfo> {
                const timeline::ImageViewInfo* v = tl.views.find(key(view));
                return v ? std::optional(*v) : std::nullopt;
            }));
    }
    timeline::VulkanRecordSink sink(*cb);
    cb->recorder.begin_render_pass(std::move(fields), flags, sink);
    (cb->device->next.*Next)(handle, info);
}

// Draws with a CPU-known count.
[[gnu::always_inline]] inline const DeviceDispatch& count(VkCommandBuffer handle, uint64_t n) {
    if (CommandBufferState* cb = find_command_buffer(handle)) [[likely]] {
        cb->recorder.count_draws(n);
        return cb->device->next;
    }
    return next_of(handle);
}

// Draws whose count the GPU reads from a buffer.
const DeviceDispatch& count_indirect(VkCommandBuffer handle, VkBuffer count_buffer,
                                     VkDeviceSize offset, uint32_t max_draws) {
    if (CommandBufferState* cb = find_command_buffer(handle)) {
        cb->recorder.count_indirect_draws(ParameterRequest{key(count_buffer), offset, 4},
                                          max_draws);
        return cb->device->next;
    }
    return next_of(handle);
}

} // namespace

VKAPI_ATTR void VKAPI_CALL hooks::vkCmdBeginRenderPass(VkCommandBuffer commandBuffer,
                                                       const VkRenderPassBeginInfo* pBegin,
                                                       VkSubpassContents contents) {
    begin_render_pass(commandBuffer, pBegin, "vkCmdBeginRenderPass", contents,
                      [&](const DeviceDispatch& next) {
                          next.CmdBeginRenderPass(commandBuffer, pBegin, contents);
                      });
}

VKAPI_ATTR void VKAPI_CALL hooks::vkCmdBeginRenderPass2(VkCommandBuffer commandBuffer,
                                                        const VkRenderPassBeginInfo* pBegin,
                                                        const VkSubpassBeginInfo* pSubpass) {
    begin_render_pass(commandBuffer, pBegin, "vkCmdBeginRenderPass2", pSubpass->contents,
                      [&](const DeviceDispatch& next) {
                          next.CmdBeginRenderPass2(commandBuffer, pBegin, pSubpass);
                      });
}

VKAPI_ATTR void VKAPI_CALL hooks::vkCmdBeginRenderPass2KHR(VkCommandBuffer commandBuffer,
                                                           const VkRenderPassBeginInfo* pBegin,
                                                           const VkSubpassBeginInfo* pSubpass) {
    begin_render_pass(commandBuffer, pBegin, "vkCmdBeginRenderPass2KHR", pSubpass->contents,
                      [&](const DeviceDispatch& next) {
                          next.CmdBeginRenderPass2KHR(commandBuffer, pBegin, pSubpass);
                      });
}

VKAPI_ATTR void VKAPI_CALL hooks::vkCmdEndRenderPass(VkCommandBuffer commandBuffer) {
    end_render_pass(commandBuffer,
                    [&](const DeviceDispatch& next) { next.CmdEndRenderPass(commandBuffer); });
}

VKAPI_ATTR void VKAPI_CALL hooks::vkCmdEndRenderPass2(VkCommandBuffer commandBuffer,
                                                      const VkSubpassEndInfo* pSubpassEndInfo) {
    end_render_pass(commandBuffer, [&](const DeviceDispatch& next) {
        next.CmdEndRenderPass2(commandBuffer, pSubpassEndInfo);
    });
}

VKAPI_ATTR void VKAPI_CALL hooks::vkCmdEndRenderPass2KHR(VkCommandBuffer commandBuffer,
                                                         const VkSubpassEndInfo* pSubpassEndInfo) {
    end_render_pass(commandBuffer, [&](const DeviceDispatch& next) {
        next.CmdEndRenderPass2KHR(commandBuffer, pSubpassEndInfo);
    });
}

VKAPI_ATTR void VKAPI_CALL hooks::vkCmdBeginRendering(VkCommandBuffer commandBuffer,
                                                      const VkRenderingInfo* pRenderingInfo) {
    begin_rendering<&DeviceDispatch::CmdBeginRendering>(commandBuffer, pRenderingInfo,
                                                        "vkCmdBeginRendering");
}

VKAPI_ATTR void VKAPI_CALL hooks::vkCmdBeginRenderingKHR(VkCommandBuffer commandBuffer,
                                                         const VkRenderingInfo* pRenderingInfo) {
    begin_rendering<&DeviceDispatch::CmdBeginRenderingKHR>(commandBuffer, pRenderingInfo,
                                                           "vkCmdBeginRenderingKHR");
}

VKAPI_ATTR void VKAPI_CALL hooks::vkCmdEndRendering(VkCommandBuffer commandBuffer) {
    end_render_pass(commandBuffer,
                    [&](const DeviceDispatch& next) { next.CmdEndRendering(commandBuffer); });
}

VKAPI_ATTR void VKAPI_CALL hooks::vkCmdEndRenderingKHR(VkCommandBuffer commandBuffer) {
    end_render_pass(commandBuffer,
                    [&](const DeviceDispatch& next) { next.CmdEndRenderingKHR(commandBuffer); });
}

VKAPI_ATTR void VKAPI_CALL hooks::vkCmdDraw(VkCommandBuffer commandBuffer, uint32_t vertexCount,
                                            uint32_t instanceCount, uint32_t firstVertex,
                                            uint32_t firstInstance) {
    count(commandBuffer, 1)
        .CmdDraw(commandBuffer, vertexCount, instanceCount, firstVertex, firstInstance);
}

VKAPI_ATTR void VKAPI_CALL hooks::vkCmdDrawIndexed(VkCommandBuffer commandBuffer,
                                                   uint32_t indexCount, uint32_t instanceCount,
                                                   uint32_t firstIndex, int32_t vertexOffset,
                                                   uint32_t firstInstance) {
    count(commandBuffer, 1)
        .CmdDrawIndexed(commandBuffer, indexCount, instanceCount, firstIndex, vertexOffset,
                        firstInstance);
}

VKAPI_ATTR void VKAPI_CALL hooks::vkCmdDrawIndirect(VkCommandBuffer commandBuffer, VkBuffer buffer,
                                                    VkDeviceSize offset, uint32_t drawCount,
                                                    uint32_t stride) {
    count(commandBuffer, drawCount)
        .CmdDrawIndirect(commandBuffer, buffer, offset, drawCount, stride);
}

VKAPI_ATTR void VKAPI_CALL hooks::vkCmdDrawIndexedIndirect(VkCommandBuffer commandBuffer,
                                                           VkBuffer buffer, VkDeviceSize offset,
                                                           uint32_t drawCount, uint32_t stride) {
    count(commandBuffer, drawCount)
        .CmdDrawIndexedIndirect(commandBuffer, buffer, offset, drawCount, stride);
}

#define VKSCOPE_DRAW_COUNT(name)                                                                   \
    VKAPI_ATTR void VKAPI_CALL hooks::vk##name(                                                    \
        VkCommandBuffer commandBuffer, VkBuffer buffer, VkDeviceSize offset, VkBuffer countBuffer, \
        VkDeviceSize countBufferOffset, uint32_t maxDrawCount, uint32_t stride) {                  \
        count_indirect(commandBuffer, countBuffer, countBufferOffset, maxDrawCount)                \
            .name(commandBuffer, buffer, offset, countBuffer, countBufferOffset, maxDrawCount,     \
                  stride);                                                                         \
    }

VKSCOPE_DRAW_COUNT(CmdDrawIndirectCount)
VKSCOPE_DRAW_COUNT(CmdDrawIndirectCountKHR)
VKSCOPE_DRAW_COUNT(CmdDrawIndirectCountAMD)
VKSCOPE_DRAW_COUNT(CmdDrawIndexedIndirectCount)
VKSCOPE_DRAW_COUNT(CmdDrawIndexedIndirectCountKHR)
VKSCOPE_DRAW_COUNT(CmdDrawIndexedIndirectCountAMD)
VKSCOPE_DRAW_COUNT(CmdDrawMeshTasksIndirectCountEXT)
VKSCOPE_DRAW_COUNT(CmdDrawMeshTasksIndirectCountNV)
#undef VKSCOPE_DRAW_COUNT

VKAPI_ATTR void VKAPI_CALL hooks::vkCmdDrawIndirectByteCountEXT(
    VkCommandBuffer commandBuffer, uint32_t instanceCount, uint32_t firstInstance,
    VkBuffer counterBuffer, VkDeviceSize counterBufferOffset, uint32_t counterOffset,
    uint32_t vertexStride) {
    count(commandBuffer, 1)
        .CmdDrawIndirectByteCountEXT(commandBuffer, instanceCount, firstInstance, counterBuffer,
                                     counterBufferOffset, counterOffset, vertexStride);
}

VKAPI_ATTR void VKAPI_CALL hooks::vkCmdDrawMultiEXT(VkCommandBuffer commandBuffer,
                                                    uint32_t drawCount,
                                                    const VkMultiDrawInfoEXT* pVertexInfo,
                                                    uint32_t instanceCount, uint32_t firstInstance,
                                                    uint32_t stride) {
    count(commandBuffer, drawCount)
        .CmdDrawMultiEXT(commandBuffer, drawCount, pVertexInfo, instanceCount, firstInstance,
                         stride);
}

VKAPI_ATTR void VKAPI_CALL hooks::vkCmdDrawMultiIndexedEXT(
    VkCommandBuffer commandBuffer, uint32_t drawCount, const VkMultiDrawIndexedInfoEXT* pIndexInfo,
    uint32_t instanceCount, uint32_t firstInstance, uint32_t stride, const int32_t* pVertexOffset) {
    count(commandBuffer, drawCount)
        .CmdDrawMultiIndexedEXT(commandBuffer, drawCount, pIndexInfo, instanceCount, firstInstance,
                                stride, pVertexOffset);
}

VKAPI_ATTR void VKAPI_CALL hooks::vkCmdDrawMeshTasksEXT(VkCommandBuffer commandBuffer,
                                                        uint32_t groupCountX, uint32_t groupCountY,
                                                        uint32_t groupCountZ) {
    count(commandBuffer, 1)
        .CmdDrawMeshTasksEXT(commandBuffer, groupCountX, groupCountY, groupCountZ);
}

VKAPI_ATTR void VKAPI_CALL hooks::vkCmdDrawMeshTasksIndirectEXT(VkCommandBuffer commandBuffer,
                                                                VkBuffer buffer,
                                                                VkDeviceSize offset,
                                                                uint32_t drawCount,
                                                                uint32_t stride) {
    count(commandBuffer, drawCount)
        .CmdDrawMeshTasksIndirectEXT(commandBuffer, buffer, offset, drawCount, stride);
}

VKAPI_ATTR void VKAPI_CALL hooks::vkCmdDrawMeshTasksNV(VkCommandBuffer commandBuffer,
                                                       uint32_t taskCount, uint32_t firstTask) {
    count(commandBuffer, 1).CmdDrawMeshTasksNV(commandBuffer, taskCount, firstTask);
}

VKAPI_ATTR void VKAPI_CALL hooks::vkCmdDrawMeshTasksIndirectNV(VkCommandBuffer commandBuffer,
                                                               VkBuffer buffer, VkDeviceSize offset,
                                                               uint32_t drawCount,
                                                               uint32_t stride) {
    count(commandBuffer, drawCount)
        .CmdDrawMeshTasksIndirectNV(commandBuffer, buffer, offset, drawCount, stride);
}

} // namespace vkscope
