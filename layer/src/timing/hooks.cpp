// What timing follows besides the timeline's hooks: command pool families (a family without
// timestamps gets none), the application's semaphores (for `full` serialization) and event waits.

#include "timeline/device.hpp"

namespace vkscope {
namespace {

using timeline::timeline_of;
using timeline::TimelineDevice;

// The cross-queue chain, when this device serializes across queues.
timing::SubmissionChain* chain_of(VkDevice device) {
    TimelineDevice* tl = timeline_of(device);
    return tl && tl->timing && tl->timing->chain_semaphore ? &tl->timing->chain : nullptr;
}

template <auto Next> VkResult signal(VkDevice device, const VkSemaphoreSignalInfo* info) {
    const VkResult result = (find_device(device)->next.*Next)(device, info);
    if (result == VK_SUCCESS) {
        if (timing::SubmissionChain* chain = chain_of(device)) {
            chain->host_signalled(key(info->semaphore), info->value);
        }
    }
    return result;
}

void interrupt(VkCommandBuffer handle) {
    if (timeline::CommandBufferState* cb = timeline::find_command_buffer(handle)) {
        cb->timing.interrupt();
    }
}

} // namespace

VKAPI_ATTR VkResult VKAPI_CALL
hooks::vkCreateCommandPool(VkDevice device, const VkCommandPoolCreateInfo* pCreateInfo,
                           const VkAllocationCallbacks* pAllocator, VkCommandPool* pCommandPool) {
    const VkResult result =
        find_device(device)->next.CreateCommandPool(device, pCreateInfo, pAllocator, pCommandPool);
    if (result == VK_SUCCESS) {
        if (TimelineDevice* tl = timeline_of(device)) {
            auto pool = std::make_unique<timeline::PoolState>();
            pool->family = pCreateInfo->queueFamilyIndex;
            tl->pools.insert(key(*pCommandPool), std::move(pool));
        }
    }
    return result;
}

VKAPI_ATTR VkResult VKAPI_CALL hooks::vkCreateSemaphore(VkDevice device,
                                                        const VkSemaphoreCreateInfo* pCreateInfo,
                                                        const VkAllocationCallbacks* pAllocator,
                                                        VkSemaphore* pSemaphore) {
    const VkResult result =
        find_device(device)->next.CreateSemaphore(device, pCreateInfo, pAllocator, pSemaphore);
    if (result != VK_SUCCESS) {
        return result;
    }
    if (timing::SubmissionChain* chain = chain_of(device)) {
        timing::SemaphoreKind kind = timing::SemaphoreKind::binary;
        uint64_t initial = 0;
        for (auto* s = static_cast<const VkBaseInStructure*>(pCreateInfo->pNext); s; s = s->pNext) {
            if (s->sType == VK_STRUCTURE_TYPE_SEMAPHORE_TYPE_CREATE_INFO) {
                const auto* type = reinterpret_cast<const VkSemaphoreTypeCreateInfo*>(s);
                if (type->semaphoreType == VK_SEMAPHORE_TYPE_TIMELINE) {
                    kind = timing::SemaphoreKind::timeline;
                    initial = type->initialValue;
                }
            }
        }
        chain->created(key(*pSemaphore), kind, initial);
    }
    return result;
}

VKAPI_ATTR void VKAPI_CALL hooks::vkDestroySemaphore(VkDevice device, VkSemaphore semaphore,
                                                     const VkAllocationCallbacks* pAllocator) {
    if (timing::SubmissionChain* chain = chain_of(device); chain && semaphore) {
        chain->destroyed(key(semaphore));
    }
    find_device(device)->next.DestroySemaphore(device, semaphore, pAllocator);
}

VKAPI_ATTR VkResult VKAPI_CALL hooks::vkSignalSemaphore(VkDevice device,
                                                        const VkSemaphoreSignalInfo* pSignalInfo) {
    return signal<&DeviceDispatch::SignalSemaphore>(device, pSignalInfo);
}

VKAPI_ATTR VkResult VKAPI_CALL
hooks::vkSignalSemaphoreKHR(VkDevice device, const VkSemaphoreSignalInfo* pSignalInfo) {
    return signal<&DeviceDispatch::SignalSemaphoreKHR>(device, pSignalInfo);
}

VKAPI_ATTR void VKAPI_CALL hooks::vkCmdWaitEvents(
    VkCommandBuffer commandBuffer, uint32_t eventCount, const VkEvent* pEvents,
    VkPipelineStageFlags srcStageMask, VkPipelineStageFlags dstStageMask,
    uint32_t memoryBarrierCount, const VkMemoryBarrier* pMemoryBarriers,
    uint32_t bufferMemoryBarrierCount, const VkBufferMemoryBarrier* pBufferMemoryBarriers,
    uint32_t imageMemoryBarrierCount, const VkImageMemoryBarrier* pImageMemoryBarriers) {
    // An event wait can take any time: it must not count in the next workload.
    interrupt(commandBuffer);
    find_device(commandBuffer)
        ->next.CmdWaitEvents(commandBuffer, eventCount, pEvents, srcStageMask, dstStageMask,
                             memoryBarrierCount, pMemoryBarriers, bufferMemoryBarrierCount,
                             pBufferMemoryBarriers, imageMemoryBarrierCount, pImageMemoryBarriers);
}

VKAPI_ATTR void VKAPI_CALL hooks::vkCmdWaitEvents2(VkCommandBuffer commandBuffer,
                                                   uint32_t eventCount, const VkEvent* pEvents,
                                                   const VkDependencyInfo* pDependencyInfos) {
    interrupt(commandBuffer);
    find_device(commandBuffer)
        ->next.CmdWaitEvents2(commandBuffer, eventCount, pEvents, pDependencyInfos);
}

VKAPI_ATTR void VKAPI_CALL hooks::vkCmdWaitEvents2KHR(VkCommandBuffer commandBuffer,
                                                      uint32_t eventCount, const VkEvent* pEvents,
                                                      const VkDependencyInfo* pDependencyInfos) {
    interrupt(commandBuffer);
    find_device(commandBuffer)
        ->next.CmdWaitEvents2KHR(commandBuffer, eventCount, pEvents, pDependencyInfos);
}

} // namespace vkscope
