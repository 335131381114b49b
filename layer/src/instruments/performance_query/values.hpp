#pragma once
// Performance counter results as the host reads them: a `counters` JSON object whose values keep
// the storage type the implementation gave (an integer stays an integer).

#include "core/wire_format.hpp"
#include "instruments/performance_query/plan.hpp"

#include <cstdint>
#include <vector>
#include <vulkan/vulkan.h>

namespace vkscope::performance_query {

// One counter's value as the JSON field `name`, in its storage type.
void write_value(JsonWriter& json, const char* name, VkPerformanceCounterStorageKHR storage,
                 const VkPerformanceCounterResultKHR& r);

// The field `counters`: the counters at `positions` of `plan`, in that order, with `results`
// (one per position).
void write_counters(JsonWriter& json, const FamilyPlan& plan,
                    const std::vector<uint32_t>& positions,
                    const std::vector<VkPerformanceCounterResultKHR>& results);

} // namespace vkscope::performance_query
