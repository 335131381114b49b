// What the timeline follows only for its instruments (the `instruments` hooks): each command
// pool's queue family, which each recording's instruments are told (a family without timestamps
// gets no timer queries), and event waits, which can take any time between two workloads.

#include "timeline/device.hpp"

namespace vkscope {
namespace {

using timeline::timeline_of;

void interrupt(VkCommandBuffer handle) {
    if (timeline::CommandBufferState* cb = timeline::find_command_buffer(handle)) {
        for (const auto& instrument : cb->instruments) {
            instrument->interrupt(timeline::Interruption::event_wait);
        }
    }
}

} // namespace

VKAPI_ATTR VkResult VKAPI_CALL
hooks::vkCreateCommandPool(VkDevice device, const VkCommandPoolCreateInfo* pCreateInfo,
                           const VkAllocationCallbacks* pAllocator, VkCommandPool* pCommandPool) {
    const VkResult result =
        find_device(device)->next.CreateCommandPool(device, pCreateInfo, pAllocator, pCommandPool);
    if (result == VK_SUCCESS) {
        if (timeline::TimelineDevice* tl = timeline_of(device)) {
            auto pool = std::make_unique<timeline::PoolState>();
            pool->family = pCreateInfo->queueFamilyIndex;
            tl->pools.insert(key(*pCommandPool), std::move(pool));
        }
    }
    return result;
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
