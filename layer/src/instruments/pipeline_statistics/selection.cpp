#include "instruments/pipeline_statistics/selection.hpp"

#include "protocol.gen.hpp"

#include <bit>

namespace vkscope::pipeline_statistics {
namespace {

constexpr std::string_view kSource = "pipeline_statistics";

constexpr VkQueryPipelineStatisticFlags kMesh =
    VK_QUERY_PIPELINE_STATISTIC_TASK_SHADER_INVOCATIONS_BIT_EXT |
    VK_QUERY_PIPELINE_STATISTIC_MESH_SHADER_INVOCATIONS_BIT_EXT;
constexpr VkQueryPipelineStatisticFlags kCollected =
    ((VK_QUERY_PIPELINE_STATISTIC_COMPUTE_SHADER_INVOCATIONS_BIT << 1) - 1) | kMesh;
constexpr VkQueryPipelineStatisticFlags kCompute =
    VK_QUERY_PIPELINE_STATISTIC_COMPUTE_SHADER_INVOCATIONS_BIT;

std::string_view trim(std::string_view s) {
    while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) {
        s.remove_prefix(1);
    }
    while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) {
        s.remove_suffix(1);
    }
    return s;
}

uint32_t bit_of(std::string_view name) {
    for (const protocol::FlagName& f : protocol::kPipelineStatisticNames) {
        if (name == f.name) {
            return f.bit;
        }
    }
    return 0;
}

} // namespace

VkQueryPipelineStatisticFlags requested(std::string_view setting,
                                        std::vector<std::string>& unknown) {
    VkQueryPipelineStatisticFlags out = 0;
    while (!setting.empty()) {
        const size_t comma = setting.find(',');
        std::string_view item = trim(setting.substr(0, comma));
        setting = comma == std::string_view::npos ? std::string_view{} : setting.substr(comma + 1);
        // Empty, or another source's (khr: performance query counters, sampler: samplers).
        if (item.empty() || item.starts_with("khr:") || item.starts_with("sampler:")) {
            continue;
        }
        if (item == kSource) {
            out |= kCollected;
            continue;
        }
        std::string_view name = item;
        if (name.starts_with(kSource) && name.size() > kSource.size() &&
            name[kSource.size()] == '.') {
            name.remove_prefix(kSource.size() + 1);
        }
        const uint32_t bit = bit_of(name);
        if (bit & kCollected) {
            out |= bit;
        } else {
            unknown.emplace_back(item);
        }
    }
    return out;
}

VkQueryPipelineStatisticFlags family_statistics(VkQueueFlags queue_flags,
                                                VkQueryPipelineStatisticFlags wanted,
                                                bool mesh_queries) {
    VkQueryPipelineStatisticFlags out = 0;
    if (queue_flags & VK_QUEUE_GRAPHICS_BIT) {
        out |= wanted & kCollected & ~kCompute & (mesh_queries ? kCollected : ~kMesh);
    }
    if (queue_flags & VK_QUEUE_COMPUTE_BIT) {
        out |= wanted & kCompute;
    }
    return out;
}

const char* statistic_name(uint32_t bit) {
    for (const protocol::FlagName& f : protocol::kPipelineStatisticNames) {
        if (f.bit == bit) {
            return f.name;
        }
    }
    return nullptr;
}

uint32_t value_count(VkQueryPipelineStatisticFlags statistics) {
    return static_cast<uint32_t>(std::popcount(statistics));
}

} // namespace vkscope::pipeline_statistics
