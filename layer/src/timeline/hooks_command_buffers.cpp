// Command buffer lifetime: each command buffer's recorder, created with it, reset with it, and
// the secondaries inlined into the primaries that execute them.

#include "core/cycle_counter.hpp"
#include "timeline/device.hpp"

#include <algorithm>

namespace vkscope {
namespace {

using timeline::CommandBufferState;
using timeline::find_command_buffer;
using timeline::timeline_of;
using timeline::TimelineDevice;

const DeviceDispatch& next_of(const void* handle) {
    return find_device(handle)->next;
}

} // namespace

VKAPI_ATTR VkResult VKAPI_CALL
hooks::vkAllocateCommandBuffers(VkDevice device, const VkCommandBufferAllocateInfo* pAllocateInfo,
                                VkCommandBuffer* pCommandBuffers) {
    const VkResult result =
        next_of(device).AllocateCommandBuffers(device, pAllocateInfo, pCommandBuffers);
    TimelineDevice* tl = timeline_of(device);
    if (result != VK_SUCCESS || !tl) {
        return result;
    }
    timeline::PoolState* pool = tl->pools.find(key(pAllocateInfo->commandPool));
    if (!pool) {
        pool = tl->pools.insert(key(pAllocateInfo->commandPool),
                                std::make_unique<timeline::PoolState>());
    }
    for (uint32_t i = 0; i < pAllocateInfo->commandBufferCount; ++i) {
        auto cb = std::make_unique<CommandBufferState>();
        cb->device = tl;
        cb->handle = pCommandBuffers[i];
        cb->pool = pAllocateInfo->commandPool;
        cb->primary = pAllocateInfo->level == VK_COMMAND_BUFFER_LEVEL_PRIMARY;
        cb->family = pool ? pool->family : UINT32_MAX;
        for (const auto& instrument : tl->instruments) {
            cb->instruments.push_back(instrument->make_recording(*cb));
        }
        timeline::g_command_buffers.insert(key(pCommandBuffers[i]), std::move(cb));
        if (pool) {
            pool->command_buffers.push_back(pCommandBuffers[i]);
        }
    }
    return result;
}

VKAPI_ATTR void VKAPI_CALL hooks::vkFreeCommandBuffers(VkDevice device, VkCommandPool commandPool,
                                                       uint32_t commandBufferCount,
                                                       const VkCommandBuffer* pCommandBuffers) {
    if (TimelineDevice* tl = timeline_of(device)) {
        timeline::PoolState* pool = tl->pools.find(key(commandPool));
        for (uint32_t i = 0; i < commandBufferCount; ++i) {
            if (!pCommandBuffers[i]) {
                continue;
            }
            timeline::erase_command_buffer(pCommandBuffers[i]);
            if (pool) {
                std::erase(pool->command_buffers, pCommandBuffers[i]);
            }
        }
    }
    next_of(device).FreeCommandBuffers(device, commandPool, commandBufferCount, pCommandBuffers);
}

VKAPI_ATTR VkResult VKAPI_CALL hooks::vkResetCommandPool(VkDevice device, VkCommandPool commandPool,
                                                         VkCommandPoolResetFlags flags) {
    if (TimelineDevice* tl = timeline_of(device)) {
        if (timeline::PoolState* pool = tl->pools.find(key(commandPool))) {
            for (VkCommandBuffer handle : pool->command_buffers) {
                if (CommandBufferState* cb = find_command_buffer(handle)) {
                    timeline::reset_command_buffer(*cb);
                }
            }
        }
    }
    return next_of(device).ResetCommandPool(device, commandPool, flags);
}

VKAPI_ATTR void VKAPI_CALL hooks::vkDestroyCommandPool(VkDevice device, VkCommandPool commandPool,
                                                       const VkAllocationCallbacks* pAllocator) {
    if (TimelineDevice* tl = timeline_of(device); tl && commandPool) {
        if (timeline::PoolState* pool = tl->pools.find(key(commandPool))) {
            for (VkCommandBuffer handle : pool->command_buffers) {
                timeline::erase_command_buffer(handle);
            }
        }
        tl->pools.erase(key(commandPool));
    }
    next_of(device).DestroyCommandPool(device, commandPool, pAllocator);
}

VKAPI_ATTR VkResult VKAPI_CALL hooks::vkBeginCommandBuffer(
    VkCommandBuffer commandBuffer, const VkCommandBufferBeginInfo* pBeginInfo) {
    if (CommandBufferState* cb = find_command_buffer(commandBuffer)) {
        TimelineDevice& tl = *cb->device;
        timeline::reset_command_buffer(*cb);
        VkCommandBufferBeginInfo begin_info;
        VkCommandBufferInheritanceInfo inheritance;
        if (!cb->primary && pBeginInfo->pInheritanceInfo && !cb->instruments.empty()) {
            begin_info = *pBeginInfo;
            inheritance = *pBeginInfo->pInheritanceInfo;
            for (const auto& instrument : cb->instruments) {
                instrument->inherit(cb->family, inheritance);
            }
            begin_info.pInheritanceInfo = &inheritance;
            pBeginInfo = &begin_info;
        }
        const VkResult result = tl.next.BeginCommandBuffer(commandBuffer, pBeginInfo);
        // Outside captured frames nothing is written into the command buffer; the recording is
        // still followed (at the least cost: its workloads are only logged), so its workloads are
        // described if a captured frame submits it.
        cb->instrumented = tl.frame_selected.load(std::memory_order_relaxed);
        const bool one_time =
            (pBeginInfo->flags & VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT) != 0;
        timeline::RecordOptions options = tl.record_options;
        options.tags = options.tags && cb->instrumented;
        options.defer_workloads = !cb->instrumented;
        options.instruments = cb->instruments;
        cb->budget_epoch = nullptr;
        if (tl.budget && cb->instrumented) {
            options.choose = timeline::Budget::choose;
            options.choose_context = tl.budget->recording_began();
            options.time_instruments = true;
            cb->budget_epoch = options.choose_context;
        }
        const timeline::RecordingStart start{cb->family, cb->primary, one_time, cb->instrumented};
        for (const auto& instrument : cb->instruments) {
            instrument->begin(start);
        }
        cb->recorder.begin(cb->primary, one_time, options);
        if (cb->budget_epoch) {
            cb->recording_began_ns = monotonic_ns();
            cb->recording_began_cycles = cycle_count();
        }
        return result;
    }
    return next_of(commandBuffer).BeginCommandBuffer(commandBuffer, pBeginInfo);
}

VKAPI_ATTR VkResult VKAPI_CALL hooks::vkEndCommandBuffer(VkCommandBuffer commandBuffer) {
    if (CommandBufferState* cb = find_command_buffer(commandBuffer)) {
        if (cb->budget_epoch) {
            // What the application's own recording took, from its begin to its end, less the
            // instruments' calls in it.
            const uint64_t spent = monotonic_ns() - cb->recording_began_ns;
            const uint64_t theirs = cycles_as_ns(cb->recorder.instrument_cycles(),
                                                 cycle_count() - cb->recording_began_cycles, spent);
            timeline::Budget::recorded(cb->budget_epoch, spent - theirs);
            cb->budget_epoch = nullptr;
        }
        cb->recorder.end();
        for (const auto& instrument : cb->instruments) {
            instrument->end();
        }
        return cb->device->next.EndCommandBuffer(commandBuffer);
    }
    return next_of(commandBuffer).EndCommandBuffer(commandBuffer);
}

VKAPI_ATTR VkResult VKAPI_CALL hooks::vkResetCommandBuffer(VkCommandBuffer commandBuffer,
                                                           VkCommandBufferResetFlags flags) {
    if (CommandBufferState* cb = find_command_buffer(commandBuffer)) {
        timeline::reset_command_buffer(*cb);
        return cb->device->next.ResetCommandBuffer(commandBuffer, flags);
    }
    return next_of(commandBuffer).ResetCommandBuffer(commandBuffer, flags);
}

VKAPI_ATTR void VKAPI_CALL hooks::vkCmdExecuteCommands(VkCommandBuffer commandBuffer,
                                                       uint32_t commandBufferCount,
                                                       const VkCommandBuffer* pCommandBuffers) {
    CommandBufferState* cb = find_command_buffer(commandBuffer);
    if (!cb) {
        return next_of(commandBuffer)
            .CmdExecuteCommands(commandBuffer, commandBufferCount, pCommandBuffers);
    }
    const bool in_render_pass = cb->recorder.in_render_pass();
    for (uint32_t i = 0; i < commandBufferCount; ++i) {
        if (const CommandBufferState* secondary = find_command_buffer(pCommandBuffers[i])) {
            cb->recorder.execute(secondary->recorder);
        }
    }
    cb->device->next.CmdExecuteCommands(commandBuffer, commandBufferCount, pCommandBuffers);
    if (cb->instruments.empty()) {
        return;
    }
    // Each instrument sees its own recordings of the secondaries.
    std::vector<timeline::InstrumentRecording*> theirs(commandBufferCount, nullptr);
    for (size_t slot = 0; slot < cb->instruments.size(); ++slot) {
        for (uint32_t i = 0; i < commandBufferCount; ++i) {
            const CommandBufferState* secondary = find_command_buffer(pCommandBuffers[i]);
            theirs[i] = secondary && slot < secondary->instruments.size()
                            ? secondary->instruments[slot].get()
                            : nullptr;
        }
        cb->instruments[slot]->execute(theirs, in_render_pass);
    }
}

VKAPI_ATTR void VKAPI_CALL hooks::vkCmdBindPipeline(VkCommandBuffer commandBuffer,
                                                    VkPipelineBindPoint pipelineBindPoint,
                                                    VkPipeline pipeline) {
    CommandBufferState* cb = find_command_buffer(commandBuffer);
    if (!cb) {
        return next_of(commandBuffer).CmdBindPipeline(commandBuffer, pipelineBindPoint, pipeline);
    }
    if (pipelineBindPoint == VK_PIPELINE_BIND_POINT_COMPUTE) {
        const timeline::ComputeShaderInfo* info = cb->device->pipelines.find(key(pipeline));
        cb->compute_local_size = info ? info->local_size : std::nullopt;
    }
    cb->device->next.CmdBindPipeline(commandBuffer, pipelineBindPoint, pipeline);
}

#ifdef VK_EXT_shader_object
VKAPI_ATTR void VKAPI_CALL hooks::vkCmdBindShadersEXT(VkCommandBuffer commandBuffer,
                                                      uint32_t stageCount,
                                                      const VkShaderStageFlagBits* pStages,
                                                      const VkShaderEXT* pShaders) {
    CommandBufferState* cb = find_command_buffer(commandBuffer);
    if (!cb) {
        return next_of(commandBuffer)
            .CmdBindShadersEXT(commandBuffer, stageCount, pStages, pShaders);
    }
    for (uint32_t i = 0; i < stageCount; ++i) {
        if (pStages[i] == VK_SHADER_STAGE_COMPUTE_BIT) {
            const timeline::ComputeShaderInfo* info =
                pShaders ? cb->device->shaders.find(key(pShaders[i])) : nullptr;
            cb->compute_local_size = info ? info->local_size : std::nullopt;
        }
    }
    cb->device->next.CmdBindShadersEXT(commandBuffer, stageCount, pStages, pShaders);
}
#endif

} // namespace vkscope
