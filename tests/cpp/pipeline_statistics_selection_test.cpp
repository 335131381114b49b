// Which pipeline statistics the `counters` setting selects, and what each kind of queue family
// can count of them (a graphics statistic needs graphics, compute invocations need compute).

#include "instruments/pipeline_statistics/selection.hpp"

#include <gtest/gtest.h>

namespace vkscope::pipeline_statistics {
namespace {

constexpr VkQueryPipelineStatisticFlags kCompute =
    VK_QUERY_PIPELINE_STATISTIC_COMPUTE_SHADER_INVOCATIONS_BIT;
constexpr VkQueryPipelineStatisticFlags kFragment =
    VK_QUERY_PIPELINE_STATISTIC_FRAGMENT_SHADER_INVOCATIONS_BIT;
// The eleven core statistics, and VK_EXT_mesh_shader's two.
constexpr VkQueryPipelineStatisticFlags kEleven = 0x7ff;
constexpr VkQueryPipelineStatisticFlags kMesh =
    VK_QUERY_PIPELINE_STATISTIC_TASK_SHADER_INVOCATIONS_BIT_EXT |
    VK_QUERY_PIPELINE_STATISTIC_MESH_SHADER_INVOCATIONS_BIT_EXT;

TEST(PipelineStatisticsSelection, TheSourceSelectsEveryCollectedStatistic) {
    std::vector<std::string> unknown;
    EXPECT_EQ(requested("pipeline_statistics", unknown), kEleven | kMesh);
    EXPECT_TRUE(unknown.empty());
    EXPECT_EQ(value_count(kEleven), 11u);
    EXPECT_EQ(value_count(kEleven | kMesh), 13u);
}

TEST(PipelineStatisticsSelection, NamesAloneOrWithTheirSource) {
    std::vector<std::string> unknown;
    const auto chosen = requested(
        " fragment_shader_invocations, pipeline_statistics.compute_shader_invocations,,", unknown);
    EXPECT_EQ(chosen, kFragment | kCompute);
    EXPECT_TRUE(unknown.empty());
}

TEST(PipelineStatisticsSelection, UnknownAndUncollectedNamesAreReported) {
    std::vector<std::string> unknown;
    const auto chosen = requested("frobs,mesh_shader_invocations,pipeline_statistics.x,"
                                  "performance_query.cycles",
                                  unknown);
    EXPECT_EQ(chosen, VK_QUERY_PIPELINE_STATISTIC_MESH_SHADER_INVOCATIONS_BIT_EXT);
    EXPECT_EQ(unknown, (std::vector<std::string>{"frobs", "pipeline_statistics.x",
                                                 "performance_query.cycles"}));
}

TEST(PipelineStatisticsSelection, EachFamilyCountsWhatItsQueuesCan) {
    constexpr VkQueueFlags kAll = VK_QUEUE_GRAPHICS_BIT | VK_QUEUE_COMPUTE_BIT;
    EXPECT_EQ(family_statistics(kAll | VK_QUEUE_TRANSFER_BIT, kEleven), kEleven);
    // Compute-only: compute invocations alone, even when graphics ones are asked for.
    EXPECT_EQ(family_statistics(VK_QUEUE_COMPUTE_BIT | VK_QUEUE_TRANSFER_BIT, kEleven), kCompute);
    EXPECT_EQ(family_statistics(VK_QUEUE_COMPUTE_BIT, kFragment), 0u);
    // Graphics without compute: no compute invocations.
    EXPECT_EQ(family_statistics(VK_QUEUE_GRAPHICS_BIT, kEleven), kEleven & ~kCompute);
    // Task and mesh shader invocations: graphics families of a device with meshShaderQueries.
    EXPECT_EQ(family_statistics(kAll, kEleven | kMesh), kEleven);
    EXPECT_EQ(family_statistics(kAll, kEleven | kMesh, true), kEleven | kMesh);
    EXPECT_EQ(family_statistics(VK_QUEUE_COMPUTE_BIT, kEleven | kMesh, true), kCompute);
    // Transfer-only, video: nothing.
    EXPECT_EQ(family_statistics(VK_QUEUE_TRANSFER_BIT, kEleven), 0u);
    EXPECT_EQ(family_statistics(VK_QUEUE_VIDEO_DECODE_BIT_KHR, kEleven), 0u);
}

TEST(PipelineStatisticsSelection, NamesAreTheProtocols) {
    EXPECT_STREQ(statistic_name(kCompute), "compute_shader_invocations");
    EXPECT_STREQ(statistic_name(VK_QUERY_PIPELINE_STATISTIC_INPUT_ASSEMBLY_VERTICES_BIT),
                 "input_assembly_vertices");
    EXPECT_EQ(statistic_name(0x80000000u), nullptr);
}

} // namespace
} // namespace vkscope::pipeline_statistics
