// What pipeline statistics follow besides the timeline's hooks: the application's own pipeline
// statistics queries. Only one query of a type may be active in a command buffer, so a workload
// inside one of the application's gets no query of the layer's and says why.

#include "instruments/pipeline_statistics/instrument.hpp"
#include "instruments/pipeline_statistics/recording.hpp"
#include "timeline/device.hpp"

namespace vkscope {
namespace {

// The layer's recording of a command buffer when `pool` is an application pipeline statistics pool.
pipeline_statistics::StatisticsRecording* watched(VkCommandBuffer commandBuffer, VkQueryPool pool) {
    pipeline_statistics::StatisticsInstrument* instrument =
        pipeline_statistics::statistics_of(commandBuffer);
    if (!instrument || !instrument->device.is_application_pool(pool)) {
        return nullptr;
    }
    timeline::CommandBufferState* cb = timeline::find_command_buffer(commandBuffer);
    if (!cb || instrument->slot >= cb->instruments.size()) {
        return nullptr;
    }
    return static_cast<pipeline_statistics::StatisticsRecording*>(
        cb->instruments[instrument->slot].get());
}

} // namespace

VKAPI_ATTR VkResult VKAPI_CALL hooks::vkCreateQueryPool(VkDevice device,
                                                        const VkQueryPoolCreateInfo* pCreateInfo,
                                                        const VkAllocationCallbacks* pAllocator,
                                                        VkQueryPool* pQueryPool) {
    const VkResult result =
        find_device(device)->next.CreateQueryPool(device, pCreateInfo, pAllocator, pQueryPool);
    if (result == VK_SUCCESS && pCreateInfo->queryType == VK_QUERY_TYPE_PIPELINE_STATISTICS) {
        if (auto* instrument = pipeline_statistics::statistics_of(device)) {
            instrument->device.application_pool(*pQueryPool, true);
        }
    }
    return result;
}

VKAPI_ATTR void VKAPI_CALL hooks::vkDestroyQueryPool(VkDevice device, VkQueryPool queryPool,
                                                     const VkAllocationCallbacks* pAllocator) {
    if (auto* instrument = pipeline_statistics::statistics_of(device); instrument && queryPool) {
        instrument->device.application_pool(queryPool, false);
    }
    find_device(device)->next.DestroyQueryPool(device, queryPool, pAllocator);
}

VKAPI_ATTR void VKAPI_CALL hooks::vkCmdBeginQuery(VkCommandBuffer commandBuffer,
                                                  VkQueryPool queryPool, uint32_t query,
                                                  VkQueryControlFlags flags) {
    if (auto* recording = watched(commandBuffer, queryPool)) {
        recording->application_query(true);
    }
    find_device(commandBuffer)->next.CmdBeginQuery(commandBuffer, queryPool, query, flags);
}

VKAPI_ATTR void VKAPI_CALL hooks::vkCmdEndQuery(VkCommandBuffer commandBuffer,
                                                VkQueryPool queryPool, uint32_t query) {
    find_device(commandBuffer)->next.CmdEndQuery(commandBuffer, queryPool, query);
    if (auto* recording = watched(commandBuffer, queryPool)) {
        recording->application_query(false);
    }
}

} // namespace vkscope
