#pragma once
// The copy of an instrument's query results into its host-visible ring, recorded in a layer
// command buffer after the application's: both instruments read their results this way, so the
// barriers that make the copy safe are written once.

#include "core/query_reads.hpp"
#include "dispatch_tables.gen.hpp"

#include <cstdint>
#include <vulkan/vulkan.h>

namespace vkscope {

// Records into `cb`: a barrier after the queries (and any earlier copy into the same part of the
// ring), one vkCmdCopyQueryPoolResults per block of `reads` to its entry of `buffer` (its base,
// laid out from the ring region's first entry), and a barrier that makes the copy visible to the
// host. Results are 64-bit with availability, waited for on the GPU (never on the host).
void record_query_copy(const DeviceDispatch& next, VkCommandBuffer cb, const QueryReads& reads,
                       VkBuffer buffer, VkDeviceSize entry_bytes);

} // namespace vkscope
