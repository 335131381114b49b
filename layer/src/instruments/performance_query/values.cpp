#include "instruments/performance_query/values.hpp"

namespace vkscope::performance_query {

void write_value(JsonWriter& json, const char* name, VkPerformanceCounterStorageKHR storage,
                 const VkPerformanceCounterResultKHR& r) {
    switch (storage) {
    case VK_PERFORMANCE_COUNTER_STORAGE_INT32_KHR:
        json.field(name, static_cast<int64_t>(r.int32));
        break;
    case VK_PERFORMANCE_COUNTER_STORAGE_INT64_KHR:
        json.field(name, static_cast<int64_t>(r.int64));
        break;
    case VK_PERFORMANCE_COUNTER_STORAGE_UINT32_KHR:
        json.field(name, static_cast<uint64_t>(r.uint32));
        break;
    case VK_PERFORMANCE_COUNTER_STORAGE_FLOAT32_KHR:
        json.field(name, static_cast<double>(r.float32));
        break;
    case VK_PERFORMANCE_COUNTER_STORAGE_FLOAT64_KHR:
        json.field(name, r.float64);
        break;
    default:
        json.field(name, static_cast<uint64_t>(r.uint64));
        break;
    }
}

void write_counters(JsonWriter& json, const FamilyPlan& plan,
                    const std::vector<uint32_t>& positions,
                    const std::vector<VkPerformanceCounterResultKHR>& results) {
    json.key("counters").begin_object();
    for (size_t i = 0; i < positions.size(); ++i) {
        const PlannedCounter& c = plan.counters[positions[i]];
        write_value(json, c.name.c_str(), c.storage, results[i]);
    }
    json.end_object();
}

} // namespace vkscope::performance_query
