#include "instruments/performance_query/plan.hpp"

#include "protocol.gen.hpp"

#include <algorithm>
#include <cctype>
#include <cstdio>

namespace vkscope::performance_query {
namespace {

std::string_view trim(std::string_view s) {
    while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) {
        s.remove_prefix(1);
    }
    while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) {
        s.remove_suffix(1);
    }
    return s;
}

std::string hex(const uint8_t (&uuid)[VK_UUID_SIZE]) {
    std::string out;
    char two[3];
    for (uint8_t b : uuid) {
        std::snprintf(two, sizeof two, "%02x", b);
        out += two;
    }
    return out;
}

uint32_t passes_of(const InstanceDispatch& in, VkPhysicalDevice physical, uint32_t family,
                   const std::vector<uint32_t>& indices) {
    VkQueryPoolPerformanceCreateInfoKHR info{};
    info.sType = VK_STRUCTURE_TYPE_QUERY_POOL_PERFORMANCE_CREATE_INFO_KHR;
    info.queueFamilyIndex = family;
    info.counterIndexCount = static_cast<uint32_t>(indices.size());
    info.pCounterIndices = indices.data();
    uint32_t passes = 0;
    in.GetPhysicalDeviceQueueFamilyPerformanceQueryPassesKHR(physical, &info, &passes);
    return passes;
}

} // namespace

std::string counter_key(std::string_view name) {
    std::string out;
    bool gap = false;
    for (char c : name) {
        if (c == ' ' || c == '-' || c == '_' || c == '\t') {
            gap = !out.empty();
            continue;
        }
        if (gap) {
            out += '_';
            gap = false;
        }
        out += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    }
    return out;
}

Wanted requested(std::string_view setting) {
    Wanted out;
    while (!setting.empty()) {
        const size_t comma = setting.find(',');
        std::string_view item = trim(setting.substr(0, comma));
        setting = comma == std::string_view::npos ? std::string_view{} : setting.substr(comma + 1);
        if (!item.starts_with("khr:")) {
            continue;
        }
        item.remove_prefix(4);
        if (item == "all") {
            out.all = true;
        } else if (!item.empty()) {
            out.keys.push_back(counter_key(item));
        }
    }
    return out;
}

FamilyPlan plan_family(const InstanceDispatch& in, VkPhysicalDevice physical, uint32_t family,
                       const Wanted& wanted, uint32_t max_passes) {
    FamilyPlan plan;
    auto enumerate = in.EnumeratePhysicalDeviceQueueFamilyPerformanceQueryCountersKHR;
    uint32_t count = 0;
    if (!enumerate || !in.GetPhysicalDeviceQueueFamilyPerformanceQueryPassesKHR ||
        enumerate(physical, family, &count, nullptr, nullptr) != VK_SUCCESS) {
        plan.reason = protocol::name(protocol::CountersReason::counter_not_offered);
        return plan;
    }
    std::vector<VkPerformanceCounterKHR> counters(count);
    std::vector<VkPerformanceCounterDescriptionKHR> descriptions(count);
    for (uint32_t i = 0; i < count; ++i) {
        counters[i].sType = VK_STRUCTURE_TYPE_PERFORMANCE_COUNTER_KHR;
        descriptions[i].sType = VK_STRUCTURE_TYPE_PERFORMANCE_COUNTER_DESCRIPTION_KHR;
    }
    if (count > 0 &&
        enumerate(physical, family, &count, counters.data(), descriptions.data()) < 0) {
        count = 0;
    }
    for (uint32_t i = 0; i < count; ++i) {
        PlannedCounter c;
        c.index = i;
        c.name = counter_key(descriptions[i].name);
        c.uuid = hex(counters[i].uuid);
        c.description = descriptions[i].description;
        c.unit = counters[i].unit;
        c.scope = counters[i].scope;
        c.storage = counters[i].storage;
        c.concurrently_impacted = descriptions[i].flags &
                                  VK_PERFORMANCE_COUNTER_DESCRIPTION_CONCURRENTLY_IMPACTED_BIT_KHR;
        const bool per_command_buffer = c.scope == VK_PERFORMANCE_COUNTER_SCOPE_COMMAND_BUFFER_KHR;
        // `all`: the counters of workloads. Queried around workloads: COMMAND scope, and
        // RENDER_PASS scope, whose queries must not begin inside a render pass instance
        // (vkCmdBeginQuery 03225), which vkscope's never do (a render pass is counted from before
        // its begin to after its end); the host keeps those values for render pass workloads
        // only. COMMAND_BUFFER scope is collected when named, over whole command buffers.
        const bool chosen = (wanted.all && !per_command_buffer) ||
                            std::any_of(wanted.keys.begin(), wanted.keys.end(),
                                        [&](const auto& k) { return k == c.name || k == c.uuid; });
        if (chosen) {
            plan.counters.push_back(std::move(c));
        }
    }
    if (plan.counters.empty()) {
        plan.reason = protocol::name(protocol::CountersReason::counter_not_offered);
        return plan;
    }
    // The workloads' counters first, then those of whole command buffers, in passes of their own.
    std::stable_partition(plan.counters.begin(), plan.counters.end(), [](const PlannedCounter& c) {
        return c.scope != VK_PERFORMANCE_COUNTER_SCOPE_COMMAND_BUFFER_KHR;
    });
    // Greedy: a counter joins the current pass while the pass still needs one submission.
    std::vector<uint32_t> indices;
    for (uint32_t pos = 0; pos < plan.counters.size(); ++pos) {
        indices.push_back(plan.counters[pos].index);
        const bool other_scope =
            !plan.passes.empty() &&
            plan.command_buffer_scope(static_cast<uint32_t>(plan.passes.size() - 1)) !=
                (plan.counters[pos].scope == VK_PERFORMANCE_COUNTER_SCOPE_COMMAND_BUFFER_KHR);
        if (plan.passes.empty() || other_scope || passes_of(in, physical, family, indices) > 1) {
            plan.passes.push_back({});
            indices = {plan.counters[pos].index};
        }
        plan.passes.back().push_back(pos);
        plan.counters[pos].pass = static_cast<uint32_t>(plan.passes.size() - 1);
    }
    if (plan.passes.size() > max_passes) {
        plan.reason = protocol::name(protocol::CountersReason::too_many_passes);
        return plan;
    }
    if (plan.passes.size() > 1) {
        std::vector<uint32_t> all;
        for (uint32_t pos = 0; pos < plan.counters.size(); ++pos) {
            if (plan.counters[pos].scope != VK_PERFORMANCE_COUNTER_SCOPE_COMMAND_BUFFER_KHR) {
                plan.whole.push_back(pos);
                all.push_back(plan.counters[pos].index);
            }
        }
        plan.whole_passes = passes_of(in, physical, family, all);
        // A recording tracks the passes it ran in a 32-bit mask.
        if (plan.whole_passes < 2 || plan.whole_passes > 32) {
            plan.whole.clear();
            plan.whole_passes = 0;
        }
    }
    return plan;
}

const char* unit_name(VkPerformanceCounterUnitKHR unit) {
    static constexpr const char* kNames[] = {
        "generic", "percentage", "nanoseconds", "bytes", "bytes_per_second", "kelvin", "watts",
        "volts",   "amps",       "hertz",       "cycles"};
    const auto i = static_cast<size_t>(unit);
    return i < std::size(kNames) ? kNames[i] : "generic";
}

const char* storage_name(VkPerformanceCounterStorageKHR storage) {
    static constexpr const char* kNames[] = {"int32",  "int64",   "uint32",
                                             "uint64", "float32", "float64"};
    const auto i = static_cast<size_t>(storage);
    return i < std::size(kNames) ? kNames[i] : "uint64";
}

const char* scope_name(VkPerformanceCounterScopeKHR scope) {
    static constexpr const char* kNames[] = {"command_buffer", "render_pass", "command"};
    const auto i = static_cast<size_t>(scope);
    return i < std::size(kNames) ? kNames[i] : "command";
}

} // namespace vkscope::performance_query
