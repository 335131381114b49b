#include "core/query_copy.hpp"

namespace vkscope {

void record_query_copy(const DeviceDispatch& next, VkCommandBuffer cb, const QueryReads& reads,
                       VkBuffer buffer, VkDeviceSize entry_bytes) {
    const VkMemoryBarrier before{VK_STRUCTURE_TYPE_MEMORY_BARRIER, nullptr,
                                 VK_ACCESS_MEMORY_WRITE_BIT, VK_ACCESS_TRANSFER_WRITE_BIT};
    next.CmdPipelineBarrier(cb, VK_PIPELINE_STAGE_ALL_COMMANDS_BIT, VK_PIPELINE_STAGE_TRANSFER_BIT,
                            0, 1, &before, 0, nullptr, 0, nullptr);
    for (const QueryReads::Block& b : reads.blocks()) {
        if (!b.counted) {
            continue;
        }
        next.CmdCopyQueryPoolResults(cb, b.block->pool, 0, b.block->used, buffer,
                                     b.base * entry_bytes, entry_bytes,
                                     VK_QUERY_RESULT_64_BIT | VK_QUERY_RESULT_WAIT_BIT |
                                         VK_QUERY_RESULT_WITH_AVAILABILITY_BIT);
    }
    const VkMemoryBarrier after{VK_STRUCTURE_TYPE_MEMORY_BARRIER, nullptr,
                                VK_ACCESS_TRANSFER_WRITE_BIT, VK_ACCESS_HOST_READ_BIT};
    next.CmdPipelineBarrier(cb, VK_PIPELINE_STAGE_TRANSFER_BIT, VK_PIPELINE_STAGE_HOST_BIT, 0, 1,
                            &after, 0, nullptr, 0, nullptr);
}

} // namespace vkscope
