#pragma once
// The copy of an instrument's query results into its host-visible ring, recorded in a layer
// command buffer after the application's: both instruments read their results this way, so the
// barriers that make the copy safe are written once.

#include "core/query_pool.hpp"
#include "dispatch_tables.gen.hpp"

#include <cstdint>
#include <map>
#include <vulkan/vulkan.h>

namespace vkscope {

// Records into `cb`: a barrier after the queries (and any earlier copy into the same part of the
// ring), one vkCmdCopyQueryPoolResults per block to entry `first + base[block]` of `buffer`, and
// a barrier that makes the copy visible to the host. Results are 64-bit with availability,
// waited for on the GPU (never on the host). `base` gets each block's absolute ring entry.
void record_query_copy(const DeviceDispatch& next, VkCommandBuffer cb,
                       std::map<QueryBlock*, uint32_t>& base, uint32_t first, VkBuffer buffer,
                       VkDeviceSize entry_bytes);

} // namespace vkscope
