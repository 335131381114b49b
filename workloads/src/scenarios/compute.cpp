// compute: three dispatches of the same pipeline whose work is exactly 1:4:16 (16, 64 and
// 256 groups of 64 invocations, each running the same loop, --compute-iterations long), then
// vkCmdDispatchIndirect and vkCmdDispatchBase with a second pipeline. The first pipeline takes its
// local size from a specialization constant, the second from a literal, so both SPIR-V forms are
// used. Every output element is checked; groups skipped by the dispatch base must stay untouched.
//
// When the queue supports timestamps they bracket the three ratio dispatches; with
// VKSCOPE_WORKLOAD_TIMINGS set in the environment their GPU times are printed to stderr.

#include "errors.h"
#include "kernels.h"
#include "pipelines.h"
#include "resources.h"
#include "scenario.h"

#include <cstdio>
#include <cstdlib>
#include <vector>

namespace wl {

namespace {

constexpr uint32_t kLocalSize = 64;
// The default loop length (--compute-iterations) makes the 16-group dispatch take about 1 ms on
// llvmpipe with LP_NUM_THREADS=0; lavapipe aborts loops after 65535 iterations, so there work
// scales with dispatch size. A large GPU runs all three dispatches' invocations at once, so
// their time follows the loop length instead.
constexpr uint32_t kRatioGroups[3] = {16, 64, 256};
constexpr uint32_t kRatioOffsets[3] = {0, 16 * kLocalSize, (16 + 64) * kLocalSize};
constexpr uint32_t kBaseOffset = (16 + 64 + 256) * kLocalSize;
constexpr uint32_t kBaseFirstGroup = 4; // groups 0..3 of the region stay untouched
constexpr uint32_t kBaseGroups = 12;
constexpr uint32_t kIndirectOffset = kBaseOffset + (kBaseFirstGroup + kBaseGroups) * kLocalSize;
constexpr VkDispatchIndirectCommand kIndirectArgs = {8, 2, 1};
constexpr uint32_t kIndirectRowStride = kIndirectArgs.x * kLocalSize;
constexpr uint32_t kElements = kIndirectOffset + 8 * 2 * kLocalSize;
constexpr uint32_t kSentinel = 0xdeadbeefu;
constexpr uint32_t kSeeds[5] = {0x1234567u, 0x89abcdefu, 0x0badf00du, 0xfeedfaceu, 0x600dcafeu};
constexpr uint32_t kTimestamps = 4;

class ComputeScenario final : public Scenario {
public:
    void setup(Context& ctx) override {
        janitor_.attach(ctx.device);
        const uint32_t localSize = kLocalSize;
        specProgram_ = createComputeProgram(ctx, janitor_, spirv::lcgSpecComp(), 1, sizeof(LcgPush),
                                            0, &localSize);
        fixedProgram_ = createComputeProgram(ctx, janitor_, spirv::lcgBaseComp(), 1,
                                             sizeof(LcgPush), VK_PIPELINE_CREATE_DISPATCH_BASE_BIT);
        setName(ctx, VK_OBJECT_TYPE_PIPELINE, handleBits(specProgram_.pipeline),
                "compute.lcg_spec");
        setName(ctx, VK_OBJECT_TYPE_PIPELINE, handleBits(fixedProgram_.pipeline),
                "compute.lcg_fixed");
        output_ =
            createBuffer(ctx, janitor_, kElements * 4,
                         VK_BUFFER_USAGE_STORAGE_BUFFER_BIT | VK_BUFFER_USAGE_TRANSFER_SRC_BIT |
                             VK_BUFFER_USAGE_TRANSFER_DST_BIT,
                         Memory::Device);
        readback_ = createBuffer(ctx, janitor_, kElements * 4, VK_BUFFER_USAGE_TRANSFER_DST_BIT,
                                 Memory::Host);
        indirect_ = createBuffer(ctx, janitor_, sizeof(kIndirectArgs),
                                 VK_BUFFER_USAGE_INDIRECT_BUFFER_BIT, Memory::Host);
        *indirect_.as<VkDispatchIndirectCommand>() = kIndirectArgs;
        specSet_ = createStorageSet(ctx, janitor_, specProgram_.setLayout, {output_.handle});
        fixedSet_ = createStorageSet(ctx, janitor_, fixedProgram_.setLayout, {output_.handle});

        if (ctx.main.timestampValidBits > 0) {
            const VkQueryPoolCreateInfo info{
                .sType = VK_STRUCTURE_TYPE_QUERY_POOL_CREATE_INFO,
                .queryType = VK_QUERY_TYPE_TIMESTAMP,
                .queryCount = kTimestamps,
            };
            VK_CHECK(vkCreateQueryPool(ctx.device, &info, nullptr, &queries_));
            VkDevice device = ctx.device;
            janitor_.defer([device, q = queries_] { vkDestroyQueryPool(device, q, nullptr); });
        }
        printTimings_ = std::getenv("VKSCOPE_WORKLOAD_TIMINGS") != nullptr;

        pool_ = createCommandPool(ctx, janitor_, ctx.main.family);
        cmd_ = allocateCommandBuffers(ctx, pool_, 1)[0];
        fence_ = createFence(ctx, janitor_);

        iterations_ = ctx.options.computeIterations;
        const LcgModel model(iterations_);
        expected_.assign(kElements, kSentinel);
        for (uint32_t d = 0; d < 3; ++d) {
            for (uint32_t i = 0; i < kRatioGroups[d] * kLocalSize; ++i) {
                const uint32_t index = kRatioOffsets[d] + i;
                expected_[index] = model(kSeeds[d], index);
            }
        }
        for (uint32_t i = kBaseFirstGroup * kLocalSize;
             i < (kBaseFirstGroup + kBaseGroups) * kLocalSize; ++i) {
            expected_[kBaseOffset + i] = model(kSeeds[3], kBaseOffset + i);
        }
        for (uint32_t i = 0; i < kElements - kIndirectOffset; ++i) {
            expected_[kIndirectOffset + i] = model(kSeeds[4], kIndirectOffset + i);
        }
    }

    void frame(Context& ctx, uint32_t) override {
        VK_CHECK(vkResetCommandPool(ctx.device, pool_, 0));
        if (queries_ && ctx.features.hostQueryReset) {
            vkResetQueryPool(ctx.device, queries_, 0, kTimestamps);
        }
        beginCommands(cmd_);
        if (queries_ && !ctx.features.hostQueryReset) {
            vkCmdResetQueryPool(cmd_, queries_, 0, kTimestamps);
        }
        vkCmdFillBuffer(cmd_, output_.handle, 0, VK_WHOLE_SIZE, kSentinel);
        memoryBarrier(cmd_, VK_PIPELINE_STAGE_TRANSFER_BIT, VK_ACCESS_TRANSFER_WRITE_BIT,
                      VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT,
                      VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_SHADER_WRITE_BIT);
        if (queries_) {
            vkCmdWriteTimestamp(cmd_, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, queries_, 0);
        }
        for (uint32_t d = 0; d < 3; ++d) {
            const LcgPush push{kRatioOffsets[d], 0, kSeeds[d], iterations_};
            bindCompute(cmd_, specProgram_, specSet_, &push, sizeof(push));
            vkCmdDispatch(cmd_, kRatioGroups[d], 1, 1);
            if (queries_) {
                vkCmdWriteTimestamp(cmd_, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, queries_, d + 1);
            }
            computeBarrier();
        }

        // The indirect dispatch goes first: Mesa 22.3 lavapipe wrongly keeps the base group
        // of a preceding vkCmdDispatchBase for vkCmdDispatchIndirect.
        const LcgPush indirectPush{kIndirectOffset, kIndirectRowStride, kSeeds[4], iterations_};
        bindCompute(cmd_, fixedProgram_, fixedSet_, &indirectPush, sizeof(indirectPush));
        vkCmdDispatchIndirect(cmd_, indirect_.handle, 0);
        computeBarrier();
        const LcgPush basePush{kBaseOffset, 0, kSeeds[3], iterations_};
        vkCmdPushConstants(cmd_, fixedProgram_.layout, VK_SHADER_STAGE_COMPUTE_BIT, 0,
                           sizeof(basePush), &basePush);
        vkCmdDispatchBase(cmd_, kBaseFirstGroup, 0, 0, kBaseGroups, 1, 1);

        memoryBarrier(cmd_, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, VK_ACCESS_SHADER_WRITE_BIT,
                      VK_PIPELINE_STAGE_TRANSFER_BIT, VK_ACCESS_TRANSFER_READ_BIT);
        const VkBufferCopy region{0, 0, output_.size};
        vkCmdCopyBuffer(cmd_, output_.handle, readback_.handle, 1, &region);
        transferToHostBarrier(cmd_);
        endCommands(cmd_);

        submitAndWait(ctx, ctx.main.queue, {&cmd_, 1}, fence_);
        expectWords("compute output", readback_.as<uint32_t>(), expected_.data(), kElements);
        if (queries_ && printTimings_) {
            printTimings(ctx);
        }
    }

private:
    void computeBarrier() {
        memoryBarrier(cmd_, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, VK_ACCESS_SHADER_WRITE_BIT,
                      VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT,
                      VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_SHADER_WRITE_BIT);
    }

    void printTimings(Context& ctx) {
        uint64_t ticks[kTimestamps] = {};
        VK_CHECK(vkGetQueryPoolResults(ctx.device, queries_, 0, kTimestamps, sizeof(ticks), ticks,
                                       sizeof(uint64_t),
                                       VK_QUERY_RESULT_64_BIT | VK_QUERY_RESULT_WAIT_BIT));
        const double msPerTick = ctx.properties.limits.timestampPeriod / 1e6;
        std::fprintf(stderr, "compute timings:");
        for (uint32_t d = 0; d < 3; ++d) {
            std::fprintf(stderr, " %u groups %.6f ms%s", kRatioGroups[d],
                         double(ticks[d + 1] - ticks[d]) * msPerTick, d < 2 ? "," : "\n");
        }
    }

    Janitor janitor_;
    ComputeProgram specProgram_;
    ComputeProgram fixedProgram_;
    Buffer output_;
    Buffer readback_;
    Buffer indirect_;
    VkDescriptorSet specSet_ = VK_NULL_HANDLE;
    VkDescriptorSet fixedSet_ = VK_NULL_HANDLE;
    VkQueryPool queries_ = VK_NULL_HANDLE;
    bool printTimings_ = false;
    uint32_t iterations_ = 0;
    VkCommandPool pool_ = VK_NULL_HANDLE;
    VkCommandBuffer cmd_ = VK_NULL_HANDLE;
    VkFence fence_ = VK_NULL_HANDLE;
    std::vector<uint32_t> expected_;
};

} // namespace

std::unique_ptr<Scenario> makeComputeScenario() {
    return std::make_unique<ComputeScenario>();
}

} // namespace wl
