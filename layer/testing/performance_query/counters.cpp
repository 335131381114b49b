#include "fixture.hpp"

#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace pqfixture {

VkPerformanceCounterStorageKHR storage() {
    const char* v = std::getenv("VKSCOPE_TEST_PERFORMANCE_QUERY_STORAGE");
    if (!v) {
        return VK_PERFORMANCE_COUNTER_STORAGE_UINT64_KHR;
    }
    static constexpr const char* kNames[] = {"int32",  "int64",   "uint32",
                                             "uint64", "float32", "float64"};
    for (uint32_t i = 0; i < std::size(kNames); ++i) {
        if (std::strcmp(v, kNames[i]) == 0) {
            return static_cast<VkPerformanceCounterStorageKHR>(i);
        }
    }
    return VK_PERFORMANCE_COUNTER_STORAGE_UINT64_KHR;
}

std::vector<uint32_t> family_counters(const VkQueueFamilyProperties& family) {
    std::vector<uint32_t> out;
    for (uint32_t i = 0; i < kCounters.size(); ++i) {
        const CounterInfo& c = kCounters[i];
        if ((family.queueFlags & c.needs) == 0) {
            continue;
        }
        if (c.backing == Backing::elapsed && family.timestampValidBits == 0) {
            continue;
        }
        out.push_back(i);
    }
    return out;
}

void describe(const CounterInfo& info, VkPerformanceCounterKHR* counter,
              VkPerformanceCounterDescriptionKHR* description) {
    if (counter) {
        counter->unit = info.unit;
        counter->scope = info.scope;
        counter->storage = storage();
        // Stable across runs and processes: FNV-1a of the name, spread over the 16 bytes.
        uint64_t h = 1469598103934665603ull;
        for (const char* p = info.name; *p; ++p) {
            h = (h ^ static_cast<unsigned char>(*p)) * 1099511628211ull;
        }
        for (uint32_t i = 0; i < VK_UUID_SIZE; ++i) {
            counter->uuid[i] = static_cast<uint8_t>(h >> ((i % 8) * 8)) ^ static_cast<uint8_t>(i);
        }
    }
    if (description) {
        description->flags = info.flags;
        std::snprintf(description->name, sizeof(description->name), "%s", info.name);
        std::snprintf(description->category, sizeof(description->category), "%s",
                      info.backing == Backing::elapsed ? "time" : "pipeline");
        std::snprintf(description->description, sizeof(description->description), "%s",
                      info.description);
    }
}

} // namespace pqfixture
