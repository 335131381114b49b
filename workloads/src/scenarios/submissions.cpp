// Submission patterns.
// reusable: one command buffer recorded once (no ONE_TIME_SUBMIT) and submitted three times
//   per frame; its dispatch increments a counter, so each submission must see 1 more.
// multi_submit: three vkQueueSubmit calls (chained by a binary semaphore for the first two)
//   and one vkQueueSubmit2 per frame, each with its own small workload.

#include "errors.h"
#include "kernels.h"
#include "pipelines.h"
#include "resources.h"
#include "scenario.h"

#include <array>
#include <string>
#include <vector>

namespace wl {

namespace {

class ReusableScenario final : public Scenario {
public:
    void setup(Context& ctx) override {
        janitor_.attach(ctx.device);
        program_ = createComputeProgram(ctx, janitor_, spirv::addComp(), 1, sizeof(AddPush));
        counter_ =
            createBuffer(ctx, janitor_, 4,
                         VK_BUFFER_USAGE_STORAGE_BUFFER_BIT | VK_BUFFER_USAGE_TRANSFER_SRC_BIT |
                             VK_BUFFER_USAGE_TRANSFER_DST_BIT,
                         Memory::Device);
        readback_ = createBuffer(ctx, janitor_, 4, VK_BUFFER_USAGE_TRANSFER_DST_BIT, Memory::Host);
        set_ = createStorageSet(ctx, janitor_, program_.setLayout, {counter_.handle});
        pool_ = createCommandPool(ctx, janitor_, ctx.main.family);
        std::vector<VkCommandBuffer> cmds = allocateCommandBuffers(ctx, pool_, 2);
        fence_ = createFence(ctx, janitor_);

        VkCommandBuffer init = cmds[0];
        beginCommands(init);
        vkCmdFillBuffer(init, counter_.handle, 0, 4, 0);
        endCommands(init);
        submitAndWait(ctx, ctx.main.queue, {&init, 1}, fence_);

        cmd_ = cmds[1];
        beginCommands(cmd_, 0);
        // Covers the initial fill and the previous submission of this very command buffer.
        memoryBarrier(cmd_, VK_PIPELINE_STAGE_TRANSFER_BIT | VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT,
                      VK_ACCESS_TRANSFER_WRITE_BIT | VK_ACCESS_SHADER_WRITE_BIT,
                      VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT,
                      VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_SHADER_WRITE_BIT);
        const AddPush push{0, 1, 1};
        bindCompute(cmd_, program_, set_, &push, sizeof(push));
        vkCmdDispatch(cmd_, 1, 1, 1);
        memoryBarrier(cmd_, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, VK_ACCESS_SHADER_WRITE_BIT,
                      VK_PIPELINE_STAGE_TRANSFER_BIT, VK_ACCESS_TRANSFER_READ_BIT);
        const VkBufferCopy region{0, 0, 4};
        vkCmdCopyBuffer(cmd_, counter_.handle, readback_.handle, 1, &region);
        transferToHostBarrier(cmd_);
        endCommands(cmd_);
    }

    void frame(Context& ctx, uint32_t frameIndex) override {
        for (uint32_t submit = 1; submit <= 3; ++submit) {
            submitAndWait(ctx, ctx.main.queue, {&cmd_, 1}, fence_);
            const uint32_t expected = frameIndex * 3 + submit;
            const uint32_t counter = *readback_.as<uint32_t>();
            if (counter != expected) {
                throw VerifyError("submission " + std::to_string(submit) + " of frame " +
                                  std::to_string(frameIndex) + ": counter is " +
                                  std::to_string(counter) + ", expected " +
                                  std::to_string(expected));
            }
        }
    }

private:
    Janitor janitor_;
    ComputeProgram program_;
    Buffer counter_;
    Buffer readback_;
    VkDescriptorSet set_ = VK_NULL_HANDLE;
    VkCommandPool pool_ = VK_NULL_HANDLE;
    VkCommandBuffer cmd_ = VK_NULL_HANDLE;
    VkFence fence_ = VK_NULL_HANDLE;
};

constexpr uint32_t kRegionWords = 256;
constexpr uint32_t kRegions = 3;

class MultiSubmitScenario final : public Scenario {
public:
    void setup(Context& ctx) override {
        janitor_.attach(ctx.device);
        if (!ctx.features.synchronization2) {
            throw SkipScenario("needs the synchronization2 feature for vkQueueSubmit2");
        }
        program_ = createComputeProgram(ctx, janitor_, spirv::addComp(), 1, sizeof(AddPush));
        data_ = createBuffer(ctx, janitor_, kRegions * kRegionWords * 4,
                             VK_BUFFER_USAGE_STORAGE_BUFFER_BIT | VK_BUFFER_USAGE_TRANSFER_SRC_BIT |
                                 VK_BUFFER_USAGE_TRANSFER_DST_BIT,
                             Memory::Device);
        readback_ =
            createBuffer(ctx, janitor_, data_.size, VK_BUFFER_USAGE_TRANSFER_DST_BIT, Memory::Host);
        set_ = createStorageSet(ctx, janitor_, program_.setLayout, {data_.handle});
        pool_ = createCommandPool(ctx, janitor_, ctx.main.family);
        std::vector<VkCommandBuffer> cmds = allocateCommandBuffers(ctx, pool_, 4);
        std::copy(cmds.begin(), cmds.end(), cmds_.begin());
        chain_ = createSemaphore(ctx, janitor_);
        fence_ = createFence(ctx, janitor_);
    }

    void frame(Context& ctx, uint32_t frameIndex) override {
        VK_CHECK(vkResetCommandPool(ctx.device, pool_, 0));
        const uint32_t fillValue = 0x1000u + frameIndex;
        const uint32_t addValue = 10 * frameIndex + 1;
        std::vector<uint32_t> update(kRegionWords);
        for (uint32_t i = 0; i < kRegionWords; ++i) {
            update[i] = i * 3 + frameIndex;
        }

        // The previous frame's download read the buffer before these writes.
        beginCommands(cmds_[0]);
        memoryBarrier(cmds_[0], VK_PIPELINE_STAGE_TRANSFER_BIT, 0, VK_PIPELINE_STAGE_TRANSFER_BIT,
                      VK_ACCESS_TRANSFER_WRITE_BIT);
        vkCmdFillBuffer(cmds_[0], data_.handle, 0, kRegionWords * 4, fillValue);
        endCommands(cmds_[0]);

        beginCommands(cmds_[1]);
        vkCmdFillBuffer(cmds_[1], data_.handle, kRegionWords * 4, kRegionWords * 4, 0);
        memoryBarrier(cmds_[1], VK_PIPELINE_STAGE_TRANSFER_BIT, VK_ACCESS_TRANSFER_WRITE_BIT,
                      VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT,
                      VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_SHADER_WRITE_BIT);
        const AddPush push{kRegionWords, kRegionWords, addValue};
        bindCompute(cmds_[1], program_, set_, &push, sizeof(push));
        vkCmdDispatch(cmds_[1], kRegionWords / 64, 1, 1);
        endCommands(cmds_[1]);

        beginCommands(cmds_[2]);
        vkCmdUpdateBuffer(cmds_[2], data_.handle, 2 * kRegionWords * 4, kRegionWords * 4,
                          update.data());
        endCommands(cmds_[2]);

        // A barrier's first scope covers all earlier submissions to the queue.
        beginCommands(cmds_[3]);
        const VkMemoryBarrier2 toCopy{
            .sType = VK_STRUCTURE_TYPE_MEMORY_BARRIER_2,
            .srcStageMask =
                VK_PIPELINE_STAGE_2_ALL_TRANSFER_BIT | VK_PIPELINE_STAGE_2_COMPUTE_SHADER_BIT,
            .srcAccessMask = VK_ACCESS_2_TRANSFER_WRITE_BIT | VK_ACCESS_2_SHADER_STORAGE_WRITE_BIT,
            .dstStageMask = VK_PIPELINE_STAGE_2_COPY_BIT,
            .dstAccessMask = VK_ACCESS_2_TRANSFER_READ_BIT,
        };
        const VkDependencyInfo toCopyDependency{
            .sType = VK_STRUCTURE_TYPE_DEPENDENCY_INFO,
            .memoryBarrierCount = 1,
            .pMemoryBarriers = &toCopy,
        };
        vkCmdPipelineBarrier2(cmds_[3], &toCopyDependency);
        const VkBufferCopy region{0, 0, data_.size};
        vkCmdCopyBuffer(cmds_[3], data_.handle, readback_.handle, 1, &region);
        const VkMemoryBarrier2 toHost{
            .sType = VK_STRUCTURE_TYPE_MEMORY_BARRIER_2,
            .srcStageMask = VK_PIPELINE_STAGE_2_COPY_BIT,
            .srcAccessMask = VK_ACCESS_2_TRANSFER_WRITE_BIT,
            .dstStageMask = VK_PIPELINE_STAGE_2_HOST_BIT,
            .dstAccessMask = VK_ACCESS_2_HOST_READ_BIT,
        };
        const VkDependencyInfo toHostDependency{
            .sType = VK_STRUCTURE_TYPE_DEPENDENCY_INFO,
            .memoryBarrierCount = 1,
            .pMemoryBarriers = &toHost,
        };
        vkCmdPipelineBarrier2(cmds_[3], &toHostDependency);
        endCommands(cmds_[3]);

        const VkSubmitInfo first{
            .sType = VK_STRUCTURE_TYPE_SUBMIT_INFO,
            .commandBufferCount = 1,
            .pCommandBuffers = &cmds_[0],
            .signalSemaphoreCount = 1,
            .pSignalSemaphores = &chain_,
        };
        VK_CHECK(vkQueueSubmit(ctx.main.queue, 1, &first, VK_NULL_HANDLE));
        const VkPipelineStageFlags waitStage =
            VK_PIPELINE_STAGE_TRANSFER_BIT | VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT;
        const VkSubmitInfo second{
            .sType = VK_STRUCTURE_TYPE_SUBMIT_INFO,
            .waitSemaphoreCount = 1,
            .pWaitSemaphores = &chain_,
            .pWaitDstStageMask = &waitStage,
            .commandBufferCount = 1,
            .pCommandBuffers = &cmds_[1],
        };
        VK_CHECK(vkQueueSubmit(ctx.main.queue, 1, &second, VK_NULL_HANDLE));
        const VkSubmitInfo third{
            .sType = VK_STRUCTURE_TYPE_SUBMIT_INFO,
            .commandBufferCount = 1,
            .pCommandBuffers = &cmds_[2],
        };
        VK_CHECK(vkQueueSubmit(ctx.main.queue, 1, &third, VK_NULL_HANDLE));
        const VkCommandBufferSubmitInfo lastCmd{
            .sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_SUBMIT_INFO,
            .commandBuffer = cmds_[3],
        };
        const VkSubmitInfo2 last{
            .sType = VK_STRUCTURE_TYPE_SUBMIT_INFO_2,
            .commandBufferInfoCount = 1,
            .pCommandBufferInfos = &lastCmd,
        };
        VK_CHECK(vkQueueSubmit2(ctx.main.queue, 1, &last, fence_));
        waitFence(ctx, fence_);

        std::vector<uint32_t> expected;
        for (uint32_t i = 0; i < kRegionWords; ++i) {
            expected.push_back(fillValue);
        }
        for (uint32_t i = 0; i < kRegionWords; ++i) {
            expected.push_back(addValue + i);
        }
        expected.insert(expected.end(), update.begin(), update.end());
        expectWords("results of 4 submissions", readback_.as<uint32_t>(), expected.data(),
                    expected.size());
    }

private:
    Janitor janitor_;
    ComputeProgram program_;
    Buffer data_;
    Buffer readback_;
    VkDescriptorSet set_ = VK_NULL_HANDLE;
    VkCommandPool pool_ = VK_NULL_HANDLE;
    std::array<VkCommandBuffer, 4> cmds_{};
    VkSemaphore chain_ = VK_NULL_HANDLE;
    VkFence fence_ = VK_NULL_HANDLE;
};

} // namespace

std::unique_ptr<Scenario> makeReusableScenario() {
    return std::make_unique<ReusableScenario>();
}

std::unique_ptr<Scenario> makeMultiSubmitScenario() {
    return std::make_unique<MultiSubmitScenario>();
}

} // namespace wl
