// small_frame: short frames with several workloads each, like a tool or a VR application that
// renders little per frame, for measuring what the layer adds per frame rather than per workload
// (bench/frame_cost.py). One command buffer recorded every frame and one submission: a fill, four
// small dispatches (two groups of 64 invocations, a loop of 3/4 of --compute-iterations steps
// each) and a copy to host memory. With the defaults a frame takes about 1 ms on llvmpipe with
// LP_NUM_THREADS=0. Only the first and last element of each dispatch's region are checked, so
// the host's share of the frame stays small. Selected by name only: not part of --all.
//
// The frame ends where the application's frames end: VK_EXT_frame_boundary when the device has
// it (Context::endFrame), else the layer's `frame_submits = 1`.

#include "errors.h"
#include "kernels.h"
#include "pipelines.h"
#include "resources.h"
#include "scenario.h"

#include <algorithm>
#include <string>

namespace wl {

namespace {

constexpr uint32_t kLocalSize = 64;
constexpr uint32_t kDispatches = 4;
constexpr uint32_t kGroups = 2;
constexpr uint32_t kRegion = kGroups * kLocalSize;
constexpr uint32_t kElements = kDispatches * kRegion;
constexpr uint32_t kSentinel = 0x5a5a5a5au;

class SmallFrameScenario final : public Scenario {
public:
    void setup(Context& ctx) override {
        janitor_.attach(ctx.device);
        program_ = createComputeProgram(ctx, janitor_, spirv::lcgFixedComp(), 1, sizeof(LcgPush));
        output_ =
            createBuffer(ctx, janitor_, kElements * 4,
                         VK_BUFFER_USAGE_STORAGE_BUFFER_BIT | VK_BUFFER_USAGE_TRANSFER_SRC_BIT |
                             VK_BUFFER_USAGE_TRANSFER_DST_BIT,
                         Memory::Device);
        readback_ = createBuffer(ctx, janitor_, kElements * 4, VK_BUFFER_USAGE_TRANSFER_DST_BIT,
                                 Memory::Host);
        set_ = createStorageSet(ctx, janitor_, program_.setLayout, {output_.handle});
        pool_ = createCommandPool(ctx, janitor_, ctx.main.family);
        cmd_ = allocateCommandBuffers(ctx, pool_, 1)[0];
        fence_ = createFence(ctx, janitor_);
        iterations_ = std::max(1u, ctx.options.computeIterations / 4 * 3);
    }

    void frame(Context& ctx, uint32_t frameIndex) override {
        VK_CHECK(vkResetCommandPool(ctx.device, pool_, 0));
        beginCommands(cmd_);
        // The previous frame's copy read the buffer before this fill writes it.
        memoryBarrier(cmd_, VK_PIPELINE_STAGE_TRANSFER_BIT, 0, VK_PIPELINE_STAGE_TRANSFER_BIT,
                      VK_ACCESS_TRANSFER_WRITE_BIT);
        vkCmdFillBuffer(cmd_, output_.handle, 0, VK_WHOLE_SIZE, kSentinel);
        memoryBarrier(cmd_, VK_PIPELINE_STAGE_TRANSFER_BIT, VK_ACCESS_TRANSFER_WRITE_BIT,
                      VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, VK_ACCESS_SHADER_WRITE_BIT);
        vkCmdBindPipeline(cmd_, VK_PIPELINE_BIND_POINT_COMPUTE, program_.pipeline);
        vkCmdBindDescriptorSets(cmd_, VK_PIPELINE_BIND_POINT_COMPUTE, program_.layout, 0, 1, &set_,
                                0, nullptr);
        for (uint32_t d = 0; d < kDispatches; ++d) {
            // Each dispatch writes its own region: no barrier between them.
            const LcgPush push{d * kRegion, 0, seed(frameIndex, d), iterations_};
            vkCmdPushConstants(cmd_, program_.layout, VK_SHADER_STAGE_COMPUTE_BIT, 0, sizeof(push),
                               &push);
            vkCmdDispatch(cmd_, kGroups, 1, 1);
        }
        memoryBarrier(cmd_, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, VK_ACCESS_SHADER_WRITE_BIT,
                      VK_PIPELINE_STAGE_TRANSFER_BIT, VK_ACCESS_TRANSFER_READ_BIT);
        const VkBufferCopy region{0, 0, output_.size};
        vkCmdCopyBuffer(cmd_, output_.handle, readback_.handle, 1, &region);
        transferToHostBarrier(cmd_);
        endCommands(cmd_);
        submitAndWait(ctx, ctx.main.queue, {&cmd_, 1}, fence_);

        const LcgModel model(iterations_);
        const uint32_t* words = readback_.as<uint32_t>();
        for (uint32_t d = 0; d < kDispatches; ++d) {
            for (uint32_t index : {d * kRegion, (d + 1) * kRegion - 1}) {
                const uint32_t expected = model(seed(frameIndex, d), index);
                if (words[index] != expected) {
                    throw VerifyError("frame " + std::to_string(frameIndex) + ", dispatch " +
                                      std::to_string(d) + ": element " + std::to_string(index) +
                                      " is " + std::to_string(words[index]) + ", expected " +
                                      std::to_string(expected));
                }
            }
        }
    }

private:
    // A seed per frame and dispatch, so that a stale result cannot pass for this frame's.
    static uint32_t seed(uint32_t frameIndex, uint32_t dispatch) {
        return 0x2545f491u * (frameIndex + 1) + 0x9e3779b9u * dispatch;
    }

    Janitor janitor_;
    ComputeProgram program_;
    Buffer output_;
    Buffer readback_;
    VkDescriptorSet set_ = VK_NULL_HANDLE;
    VkCommandPool pool_ = VK_NULL_HANDLE;
    VkCommandBuffer cmd_ = VK_NULL_HANDLE;
    VkFence fence_ = VK_NULL_HANDLE;
    uint32_t iterations_ = 0;
};

} // namespace

std::unique_ptr<Scenario> makeSmallFrameScenario() {
    return std::make_unique<SmallFrameScenario>();
}

} // namespace wl
