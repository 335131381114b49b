#pragma once
// VK_LAYER_VKSCOPE_test_performance_query: a test fixture, not a profiler. It gives a driver
// without VK_KHR_performance_query (lavapipe) the extension as an application sees it, so that
// vkscope's performance-query path can run against real values: every counter is backed by a
// query of the driver below (pipeline statistics, or two timestamps for elapsed time), and each
// counter takes a pass of its own, so a selection of k counters needs k passes.
//
// What an application can observe follows the extension: the extension and its features are
// enumerated, counters per queue family with their units and scopes, the passes a selection
// needs, the profiling lock, performance query pools, results as VkPerformanceCounterResultKHR
// that become available once every pass has been submitted since the last reset, and the pass
// index of each submission. One simplification: a counter's value is that of the last
// submitted execution of the query, whichever pass it was, which for the same commands is the same
// number.
//
// A performance query begun while the application's own pipeline statistics query is active puts
// a second pipeline statistics query inside it on the driver below, which Vulkan does not allow
// (lavapipe counts both).
//
// The driver's queries behind a performance query are reset where the application resets it, so
// a query run once per pass reuses them without a reset: lavapipe restarts them, a validation
// layer placed below the fixture reports it.
//
// VKSCOPE_TEST_PERFORMANCE_QUERY_LOCK=busy makes every vkAcquireProfilingLockKHR time out, as
// when another process holds the lock. VKSCOPE_TEST_PERFORMANCE_QUERY_STORAGE=int32, int64,
// uint32, float32 or float64 stores every counter that way instead of as uint64.

#include <array>
#include <cstdint>
#include <span>
#include <string_view>
#include <vector>
#include <vulkan/vulkan.h>

namespace pqfixture {

enum class Backing : uint8_t { statistic, elapsed };

struct CounterInfo {
    const char* name;
    const char* description;
    VkPerformanceCounterUnitKHR unit;
    Backing backing;
    VkQueryPipelineStatisticFlagBits statistic; // for Backing::statistic
    VkQueueFlags needs;                         // a family with one of these counts it
    VkPerformanceCounterDescriptionFlagsKHR flags;
    VkPerformanceCounterScopeKHR scope = VK_PERFORMANCE_COUNTER_SCOPE_COMMAND_KHR;
};

// The last two stand for counters an implementation can count only around whole render pass
// instances, and only over whole command buffers: the fixture counts them as any other, the
// scope is what it reports (a validation layer above it checks where their queries are).
inline constexpr std::array<CounterInfo, 7> kCounters{{
    {"ia_vertices", "Vertices the input assembler read", VK_PERFORMANCE_COUNTER_UNIT_GENERIC_KHR,
     Backing::statistic, VK_QUERY_PIPELINE_STATISTIC_INPUT_ASSEMBLY_VERTICES_BIT,
     VK_QUEUE_GRAPHICS_BIT, 0},
    {"ia_primitives", "Primitives the input assembler made",
     VK_PERFORMANCE_COUNTER_UNIT_GENERIC_KHR, Backing::statistic,
     VK_QUERY_PIPELINE_STATISTIC_INPUT_ASSEMBLY_PRIMITIVES_BIT, VK_QUEUE_GRAPHICS_BIT, 0},
    {"fragment_invocations", "Fragment shader invocations", VK_PERFORMANCE_COUNTER_UNIT_GENERIC_KHR,
     Backing::statistic, VK_QUERY_PIPELINE_STATISTIC_FRAGMENT_SHADER_INVOCATIONS_BIT,
     VK_QUEUE_GRAPHICS_BIT, 0},
    {"compute_invocations", "Compute shader invocations", VK_PERFORMANCE_COUNTER_UNIT_GENERIC_KHR,
     Backing::statistic, VK_QUERY_PIPELINE_STATISTIC_COMPUTE_SHADER_INVOCATIONS_BIT,
     VK_QUEUE_COMPUTE_BIT, 0},
    {"elapsed_ns", "Time between the query's begin and end, from two timestamps",
     VK_PERFORMANCE_COUNTER_UNIT_NANOSECONDS_KHR, Backing::elapsed,
     VkQueryPipelineStatisticFlagBits(0), VK_QUEUE_GRAPHICS_BIT | VK_QUEUE_COMPUTE_BIT,
     VK_PERFORMANCE_COUNTER_DESCRIPTION_CONCURRENTLY_IMPACTED_BIT_KHR},
    {"render_pass_fragments", "Fragment shader invocations of a render pass instance",
     VK_PERFORMANCE_COUNTER_UNIT_GENERIC_KHR, Backing::statistic,
     VK_QUERY_PIPELINE_STATISTIC_FRAGMENT_SHADER_INVOCATIONS_BIT, VK_QUEUE_GRAPHICS_BIT, 0,
     VK_PERFORMANCE_COUNTER_SCOPE_RENDER_PASS_KHR},
    {"command_buffer_invocations", "Compute shader invocations of a whole command buffer",
     VK_PERFORMANCE_COUNTER_UNIT_GENERIC_KHR, Backing::statistic,
     VK_QUERY_PIPELINE_STATISTIC_COMPUTE_SHADER_INVOCATIONS_BIT, VK_QUEUE_COMPUTE_BIT, 0,
     VK_PERFORMANCE_COUNTER_SCOPE_COMMAND_BUFFER_KHR},
}};

// The storage every counter reports (VKSCOPE_TEST_PERFORMANCE_QUERY_STORAGE; uint64 by default).
VkPerformanceCounterStorageKHR storage();

// The counters a family offers, as indices into kCounters, in the order they are enumerated.
std::vector<uint32_t> family_counters(const VkQueueFamilyProperties& family);

// Fills the application's structures for counter `info` (a stable UUID from its name).
void describe(const CounterInfo& info, VkPerformanceCounterKHR* counter,
              VkPerformanceCounterDescriptionKHR* description);

} // namespace pqfixture
