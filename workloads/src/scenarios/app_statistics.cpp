// app_statistics: the application's own pipeline statistics query around a dispatch of 4 groups
// of 64 invocations, then a dispatch of 2 groups outside it. A profiler must not begin a second
// query of that type inside the application's (one may be active at a time); the application's
// count must come out exactly 256 with a profiler or without. The query pool lives for one frame
// only, so that the other scenarios run while the application has none.

#include "errors.h"
#include "kernels.h"
#include "pipelines.h"
#include "resources.h"
#include "scenario.h"

#include <string>

namespace wl {

namespace {

constexpr uint32_t kInsideGroups = 4;
constexpr uint32_t kOutsideGroups = 2;
constexpr uint32_t kElements = (kInsideGroups + kOutsideGroups) * 64;

class AppStatisticsScenario final : public Scenario {
public:
    void setup(Context& ctx) override {
        janitor_.attach(ctx.device);
        if (!ctx.features.pipelineStatisticsQuery) {
            throw SkipScenario("needs the pipelineStatisticsQuery feature");
        }
        if (!(ctx.main.flags & VK_QUEUE_COMPUTE_BIT)) {
            throw SkipScenario("needs a compute queue");
        }
        program_ = createComputeProgram(ctx, janitor_, spirv::lcgFixedComp(), 1, sizeof(LcgPush));
        output_ = createBuffer(ctx, janitor_, kElements * 4, VK_BUFFER_USAGE_STORAGE_BUFFER_BIT,
                               Memory::Device);
        set_ = createStorageSet(ctx, janitor_, program_.setLayout, {output_.handle});
        pool_ = createCommandPool(ctx, janitor_, ctx.main.family);
        cmd_ = allocateCommandBuffers(ctx, pool_, 1)[0];
        fence_ = createFence(ctx, janitor_);
    }

    void frame(Context& ctx, uint32_t) override {
        const VkQueryPoolCreateInfo info{
            .sType = VK_STRUCTURE_TYPE_QUERY_POOL_CREATE_INFO,
            .queryType = VK_QUERY_TYPE_PIPELINE_STATISTICS,
            .queryCount = 1,
            .pipelineStatistics = VK_QUERY_PIPELINE_STATISTIC_COMPUTE_SHADER_INVOCATIONS_BIT,
        };
        VK_CHECK(vkCreateQueryPool(ctx.device, &info, nullptr, &queries_));
        struct Destroy {
            VkDevice device;
            VkQueryPool& pool;
            ~Destroy() {
                vkDestroyQueryPool(device, pool, nullptr);
                pool = VK_NULL_HANDLE;
            }
        } destroy{ctx.device, queries_};
        VK_CHECK(vkResetCommandPool(ctx.device, pool_, 0));
        beginCommands(cmd_);
        vkCmdResetQueryPool(cmd_, queries_, 0, 1);
        const LcgPush inside{0, 0, 0x5747u, 10};
        bindCompute(cmd_, program_, set_, &inside, sizeof(inside));
        vkCmdBeginQuery(cmd_, queries_, 0, 0);
        vkCmdDispatch(cmd_, kInsideGroups, 1, 1);
        vkCmdEndQuery(cmd_, queries_, 0);
        const LcgPush outside{kInsideGroups * 64, 0, 0x5748u, 10};
        vkCmdPushConstants(cmd_, program_.layout, VK_SHADER_STAGE_COMPUTE_BIT, 0, sizeof(outside),
                           &outside);
        vkCmdDispatch(cmd_, kOutsideGroups, 1, 1);
        endCommands(cmd_);
        submitAndWait(ctx, ctx.main.queue, {&cmd_, 1}, fence_);

        uint64_t invocations = 0;
        VK_CHECK(vkGetQueryPoolResults(ctx.device, queries_, 0, 1, sizeof(invocations),
                                       &invocations, sizeof(invocations),
                                       VK_QUERY_RESULT_64_BIT | VK_QUERY_RESULT_WAIT_BIT));
        if (invocations != kInsideGroups * 64) {
            throw VerifyError(
                "application's pipeline statistics query: " + std::to_string(invocations) +
                " compute invocations, expected " + std::to_string(kInsideGroups * 64));
        }
    }

private:
    Janitor janitor_;
    ComputeProgram program_;
    Buffer output_;
    VkDescriptorSet set_ = VK_NULL_HANDLE;
    VkQueryPool queries_ = VK_NULL_HANDLE;
    VkCommandPool pool_ = VK_NULL_HANDLE;
    VkCommandBuffer cmd_ = VK_NULL_HANDLE;
    VkFence fence_ = VK_NULL_HANDLE;
};

} // namespace

std::unique_ptr<Scenario> makeAppStatisticsScenario() {
    return std::make_unique<AppStatisticsScenario>();
}

} // namespace wl
