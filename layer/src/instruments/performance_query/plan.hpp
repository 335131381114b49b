#pragma once
// Which VK_KHR_performance_query counters a device collects, and in how many passes. The
// `counters` setting names them as `khr:NAME` (the counter's name in snake case, or its UUID in
// hex) or `khr:all`. A selection is split into groups that need one pass each, as the
// implementation says (vkGetPhysicalDeviceQueueFamilyPerformanceQueryPassesKHR): each captured
// frame collects one group, so a selection of N groups takes N consecutive frames, and every
// query is complete after one submission (reading a query before every pass of its pool was
// submitted is invalid usage). Command buffers submitted again use one pool of the whole
// selection instead, its passes run by consecutive submissions. Counters of COMMAND_BUFFER scope
// are grouped apart from the others, since a frame that collects them queries whole command
// buffers and no workload; the whole-selection pool leaves them out.

#include "dispatch_tables.gen.hpp"

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>
#include <vulkan/vulkan.h>

namespace vkscope::performance_query {

struct Wanted {
    bool all = false;
    std::vector<std::string> keys; // counter names (snake case) or UUIDs (32 hex digits)
    bool any() const { return all || !keys.empty(); }
};

// The `khr:` items of the setting.
Wanted requested(std::string_view setting);

// A counter's name as the setting and the host write it: lower case, spaces and dashes as `_`.
std::string counter_key(std::string_view name);

struct PlannedCounter {
    uint32_t index = 0; // in the family's enumeration
    std::string name;
    std::string uuid;
    std::string description;
    VkPerformanceCounterUnitKHR unit = VK_PERFORMANCE_COUNTER_UNIT_GENERIC_KHR;
    VkPerformanceCounterScopeKHR scope = VK_PERFORMANCE_COUNTER_SCOPE_COMMAND_KHR;
    VkPerformanceCounterStorageKHR storage = VK_PERFORMANCE_COUNTER_STORAGE_UINT64_KHR;
    bool concurrently_impacted = false;
    uint32_t pass = 0;
};

struct FamilyPlan {
    std::vector<PlannedCounter> counters;
    // Per pass, the positions in `counters` it collects (a pool's counter order).
    std::vector<std::vector<uint32_t>> passes;
    // The pool of the whole selection, for command buffers recorded once and submitted again:
    // the positions it collects (its counter order) and the passes the implementation needs for
    // it, one per submission (0 when there is no such pool: a selection of one pass).
    std::vector<uint32_t> whole;
    uint32_t whole_passes = 0;
    const char* reason = nullptr; // why the family collects none

    // Whether pass `pass` collects COMMAND_BUFFER-scope counters: those have passes of their
    // own, after the others, and are queried over whole command buffers
    // (command_buffer_query.hpp), not around workloads.
    bool command_buffer_scope(uint32_t pass) const {
        return pass < passes.size() && !passes[pass].empty() &&
               counters[passes[pass].front()].scope ==
                   VK_PERFORMANCE_COUNTER_SCOPE_COMMAND_BUFFER_KHR;
    }
};

FamilyPlan plan_family(const InstanceDispatch& in, VkPhysicalDevice physical, uint32_t family,
                       const Wanted& wanted, uint32_t max_passes);

const char* unit_name(VkPerformanceCounterUnitKHR unit);
const char* storage_name(VkPerformanceCounterStorageKHR storage);
const char* scope_name(VkPerformanceCounterScopeKHR scope);

} // namespace vkscope::performance_query
