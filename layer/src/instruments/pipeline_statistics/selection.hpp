#pragma once
// Which pipeline statistics a device collects: the `counters` setting's names, and what each queue
// family can count of them. A graphics query pool needs a graphics-capable command pool and queue,
// a compute statistic a compute-capable one (VUIDs 00804/00805 of vkCmdBeginQuery), so each family
// gets its own set; a family with neither counts nothing.

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>
#include <vulkan/vulkan.h>

namespace vkscope::pipeline_statistics {

// The statistics the setting names: `pipeline_statistics` for every one vkscope collects, or
// single names (`fragment_shader_invocations`, also as `pipeline_statistics.NAME`). Names it does
// not know go to `unknown` (other sources, typing errors: the host refuses those before launch).
VkQueryPipelineStatisticFlags requested(std::string_view setting,
                                        std::vector<std::string>& unknown);

// What a family with `queue_flags` counts of `wanted`; task and mesh shader invocations only on
// a device created with meshShaderQueries (`mesh_queries`).
VkQueryPipelineStatisticFlags family_statistics(VkQueueFlags queue_flags,
                                                VkQueryPipelineStatisticFlags wanted,
                                                bool mesh_queries = false);

// The statistic's counter name (one bit), or null.
const char* statistic_name(uint32_t bit);

// The values a query of a pool with `statistics` returns, in bit order (as Vulkan writes them).
uint32_t value_count(VkQueryPipelineStatisticFlags statistics);

} // namespace vkscope::pipeline_statistics
