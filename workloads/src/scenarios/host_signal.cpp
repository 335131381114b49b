// host_signal: a submission that waits on a timeline semaphore value the host signals only after
// the submission call has returned (vkSignalSemaphore), as an application does when its CPU work
// feeds the GPU late. A layer that held the call until the GPU reached some point inside it would
// never return: the test for profilers that sample between workloads. One command buffer per
// frame: a fill, a copy to host memory; the copied words are checked. Selected by name only.

#include "errors.h"
#include "resources.h"
#include "scenario.h"

#include <string>

namespace wl {

namespace {

constexpr uint32_t kWords = 1024;

class HostSignalScenario final : public Scenario {
public:
    void setup(Context& ctx) override {
        janitor_.attach(ctx.device);
        if (!ctx.features.timelineSemaphore) {
            throw SkipScenario("needs the timelineSemaphore feature");
        }
        source_ = createBuffer(ctx, janitor_, kWords * 4,
                               VK_BUFFER_USAGE_TRANSFER_SRC_BIT | VK_BUFFER_USAGE_TRANSFER_DST_BIT,
                               Memory::Device);
        readback_ =
            createBuffer(ctx, janitor_, kWords * 4, VK_BUFFER_USAGE_TRANSFER_DST_BIT, Memory::Host);
        pool_ = createCommandPool(ctx, janitor_, ctx.main.family);
        cmd_ = allocateCommandBuffers(ctx, pool_, 1)[0];
        fence_ = createFence(ctx, janitor_);
        semaphore_ = createSemaphore(ctx, janitor_, true);
    }

    void frame(Context& ctx, uint32_t frameIndex) override {
        const uint32_t word = 0x51600000u + frameIndex;
        VK_CHECK(vkResetCommandPool(ctx.device, pool_, 0));
        beginCommands(cmd_);
        memoryBarrier(cmd_, VK_PIPELINE_STAGE_TRANSFER_BIT, VK_ACCESS_TRANSFER_READ_BIT,
                      VK_PIPELINE_STAGE_TRANSFER_BIT, VK_ACCESS_TRANSFER_WRITE_BIT);
        vkCmdFillBuffer(cmd_, source_.handle, 0, VK_WHOLE_SIZE, word);
        memoryBarrier(cmd_, VK_PIPELINE_STAGE_TRANSFER_BIT, VK_ACCESS_TRANSFER_WRITE_BIT,
                      VK_PIPELINE_STAGE_TRANSFER_BIT, VK_ACCESS_TRANSFER_READ_BIT);
        const VkBufferCopy region{0, 0, kWords * 4};
        vkCmdCopyBuffer(cmd_, source_.handle, readback_.handle, 1, &region);
        transferToHostBarrier(cmd_);
        endCommands(cmd_);

        const uint64_t value = frameIndex + 1;
        const VkTimelineSemaphoreSubmitInfo values{
            .sType = VK_STRUCTURE_TYPE_TIMELINE_SEMAPHORE_SUBMIT_INFO,
            .waitSemaphoreValueCount = 1,
            .pWaitSemaphoreValues = &value,
        };
        const VkPipelineStageFlags stage = VK_PIPELINE_STAGE_TRANSFER_BIT;
        const VkSubmitInfo submit{
            .sType = VK_STRUCTURE_TYPE_SUBMIT_INFO,
            .pNext = &values,
            .waitSemaphoreCount = 1,
            .pWaitSemaphores = &semaphore_,
            .pWaitDstStageMask = &stage,
            .commandBufferCount = 1,
            .pCommandBuffers = &cmd_,
        };
        VK_CHECK(vkQueueSubmit(ctx.main.queue, 1, &submit, fence_));
        const VkSemaphoreSignalInfo signal{
            .sType = VK_STRUCTURE_TYPE_SEMAPHORE_SIGNAL_INFO,
            .semaphore = semaphore_,
            .value = value,
        };
        VK_CHECK(vkSignalSemaphore(ctx.device, &signal));
        waitFence(ctx, fence_);

        const uint32_t* words = readback_.as<uint32_t>();
        for (uint32_t i : {0u, kWords - 1}) {
            if (words[i] != word) {
                throw VerifyError("frame " + std::to_string(frameIndex) + ": word " +
                                  std::to_string(i) + " is " + std::to_string(words[i]) +
                                  ", expected " + std::to_string(word));
            }
        }
    }

private:
    Janitor janitor_;
    Buffer source_;
    Buffer readback_;
    VkCommandPool pool_ = VK_NULL_HANDLE;
    VkCommandBuffer cmd_ = VK_NULL_HANDLE;
    VkFence fence_ = VK_NULL_HANDLE;
    VkSemaphore semaphore_ = VK_NULL_HANDLE;
};

} // namespace

std::unique_ptr<Scenario> makeHostSignalScenario() {
    return std::make_unique<HostSignalScenario>();
}

} // namespace wl
