// multi_queue: a producer on the main queue and a consumer on a second queue, linked by a
// timeline semaphore. The consumer's wait is submitted BEFORE the producer's signal
// (wait-before-signal), so the device has to hold the consumer back until the producer ran.

#include "errors.h"
#include "kernels.h"
#include "pipelines.h"
#include "resources.h"
#include "scenario.h"

#include <array>
#include <vector>

namespace wl {

namespace {

constexpr uint32_t kGroups = 64;
constexpr uint32_t kElements = kGroups * 64;
constexpr uint32_t kIterations = 64;

class MultiQueueScenario final : public Scenario {
public:
    void setup(Context& ctx) override {
        janitor_.attach(ctx.device);
        if (!ctx.second.valid()) {
            throw SkipScenario("needs a second queue");
        }
        if (!ctx.features.timelineSemaphore) {
            throw SkipScenario("needs the timelineSemaphore feature");
        }
        consumerComputes_ = (ctx.second.flags & VK_QUEUE_COMPUTE_BIT) != 0;
        const std::array<uint32_t, 2> families = {ctx.main.family, ctx.second.family};
        const bool shared = ctx.main.family != ctx.second.family;

        producer_ = createComputeProgram(ctx, janitor_, spirv::lcgFixedComp(), 1, sizeof(LcgPush));
        produced_ = createBuffer(
            ctx, janitor_, kElements * 4,
            VK_BUFFER_USAGE_STORAGE_BUFFER_BIT | VK_BUFFER_USAGE_TRANSFER_SRC_BIT, Memory::Device,
            shared ? std::span<const uint32_t>(families) : std::span<const uint32_t>());
        producerSet_ = createStorageSet(ctx, janitor_, producer_.setLayout, {produced_.handle});
        readback_ = createBuffer(ctx, janitor_, kElements * 4, VK_BUFFER_USAGE_TRANSFER_DST_BIT,
                                 Memory::Host);
        if (consumerComputes_) {
            consumer_ = createComputeProgram(ctx, janitor_, spirv::transformComp(), 2,
                                             sizeof(TransformPush));
            consumed_ =
                createBuffer(ctx, janitor_, kElements * 4,
                             VK_BUFFER_USAGE_STORAGE_BUFFER_BIT | VK_BUFFER_USAGE_TRANSFER_SRC_BIT,
                             Memory::Device);
            consumerSet_ = createStorageSet(ctx, janitor_, consumer_.setLayout,
                                            {produced_.handle, consumed_.handle});
        }

        producerPool_ = createCommandPool(ctx, janitor_, ctx.main.family);
        consumerPool_ = createCommandPool(ctx, janitor_, ctx.second.family);
        producerCmd_ = allocateCommandBuffers(ctx, producerPool_, 1)[0];
        consumerCmd_ = allocateCommandBuffers(ctx, consumerPool_, 1)[0];
        timeline_ = createSemaphore(ctx, janitor_, true);
        producerFence_ = createFence(ctx, janitor_);
        consumerFence_ = createFence(ctx, janitor_);
    }

    void frame(Context& ctx, uint32_t frameIndex) override {
        VK_CHECK(vkResetCommandPool(ctx.device, producerPool_, 0));
        VK_CHECK(vkResetCommandPool(ctx.device, consumerPool_, 0));
        const LcgPush push{0, 0, 0xa5a50000u + frameIndex, kIterations};

        beginCommands(producerCmd_);
        bindCompute(producerCmd_, producer_, producerSet_, &push, sizeof(push));
        vkCmdDispatch(producerCmd_, kGroups, 1, 1);
        endCommands(producerCmd_);

        // The semaphore wait orders the consumer after the producer; the barriers below only
        // order work within the consumer's command buffer.
        beginCommands(consumerCmd_);
        VkBuffer result = produced_.handle;
        if (consumerComputes_) {
            const TransformPush transform{kElements};
            bindCompute(consumerCmd_, consumer_, consumerSet_, &transform, sizeof(transform));
            vkCmdDispatch(consumerCmd_, kGroups, 1, 1);
            memoryBarrier(consumerCmd_, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT,
                          VK_ACCESS_SHADER_WRITE_BIT, VK_PIPELINE_STAGE_TRANSFER_BIT,
                          VK_ACCESS_TRANSFER_READ_BIT);
            result = consumed_.handle;
        }
        const VkBufferCopy region{0, 0, kElements * 4};
        vkCmdCopyBuffer(consumerCmd_, result, readback_.handle, 1, &region);
        transferToHostBarrier(consumerCmd_);
        endCommands(consumerCmd_);

        const uint64_t value = frameIndex + 1;
        const VkTimelineSemaphoreSubmitInfo waitValue{
            .sType = VK_STRUCTURE_TYPE_TIMELINE_SEMAPHORE_SUBMIT_INFO,
            .waitSemaphoreValueCount = 1,
            .pWaitSemaphoreValues = &value,
        };
        const VkPipelineStageFlags waitStage = consumerComputes_
                                                   ? VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT
                                                   : VK_PIPELINE_STAGE_TRANSFER_BIT;
        const VkSubmitInfo consume{
            .sType = VK_STRUCTURE_TYPE_SUBMIT_INFO,
            .pNext = &waitValue,
            .waitSemaphoreCount = 1,
            .pWaitSemaphores = &timeline_,
            .pWaitDstStageMask = &waitStage,
            .commandBufferCount = 1,
            .pCommandBuffers = &consumerCmd_,
        };
        VK_CHECK(vkQueueSubmit(ctx.second.queue, 1, &consume, consumerFence_));

        const VkTimelineSemaphoreSubmitInfo signalValue{
            .sType = VK_STRUCTURE_TYPE_TIMELINE_SEMAPHORE_SUBMIT_INFO,
            .signalSemaphoreValueCount = 1,
            .pSignalSemaphoreValues = &value,
        };
        const VkSubmitInfo produce{
            .sType = VK_STRUCTURE_TYPE_SUBMIT_INFO,
            .pNext = &signalValue,
            .commandBufferCount = 1,
            .pCommandBuffers = &producerCmd_,
            .signalSemaphoreCount = 1,
            .pSignalSemaphores = &timeline_,
        };
        VK_CHECK(vkQueueSubmit(ctx.main.queue, 1, &produce, producerFence_));
        waitFence(ctx, consumerFence_);
        waitFence(ctx, producerFence_);

        const LcgModel model(kIterations);
        std::vector<uint32_t> expected(kElements);
        for (uint32_t i = 0; i < kElements; ++i) {
            expected[i] = model(push.seed, i);
            if (consumerComputes_) {
                expected[i] = expected[i] * 3 + 7;
            }
        }
        expectWords(consumerComputes_ ? "second queue's transform of the first queue's output"
                                      : "second queue's copy of the first queue's output",
                    readback_.as<uint32_t>(), expected.data(), kElements);
    }

private:
    Janitor janitor_;
    bool consumerComputes_ = false;
    ComputeProgram producer_;
    ComputeProgram consumer_;
    Buffer produced_;
    Buffer consumed_;
    Buffer readback_;
    VkDescriptorSet producerSet_ = VK_NULL_HANDLE;
    VkDescriptorSet consumerSet_ = VK_NULL_HANDLE;
    VkCommandPool producerPool_ = VK_NULL_HANDLE;
    VkCommandPool consumerPool_ = VK_NULL_HANDLE;
    VkCommandBuffer producerCmd_ = VK_NULL_HANDLE;
    VkCommandBuffer consumerCmd_ = VK_NULL_HANDLE;
    VkSemaphore timeline_ = VK_NULL_HANDLE;
    VkFence producerFence_ = VK_NULL_HANDLE;
    VkFence consumerFence_ = VK_NULL_HANDLE;
};

} // namespace

std::unique_ptr<Scenario> makeMultiQueueScenario() {
    return std::make_unique<MultiQueueScenario>();
}

} // namespace wl
