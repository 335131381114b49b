// threads: N threads record command buffers (each from its own command pool) at the same
// time, released together by a latch; the main thread then submits them all at once. Each
// thread draws into its own image and dispatches into its own slice of a shared buffer.

#include "errors.h"
#include "kernels.h"
#include "pipelines.h"
#include "raster.h"
#include "scenario.h"

#include <exception>
#include <latch>
#include <thread>
#include <vector>

namespace wl {

namespace {

constexpr Rgba kClear = {5, 10, 15, 20};
constexpr uint32_t kSaltBase = 10;
constexpr uint32_t kGroupsPerThread = 4;
constexpr uint32_t kWordsPerThread = kGroupsPerThread * 64;
constexpr uint32_t kIterations = 32;

class ThreadsScenario final : public Scenario {
public:
    void setup(Context& ctx) override {
        janitor_.attach(ctx.device);
        if (!ctx.hasGraphics()) {
            throw SkipScenario("needs a graphics queue");
        }
        threads_ = ctx.options.threads.value_or(2);
        draws_ = ctx.options.draws;
        layout_ = createRectLayout(ctx, janitor_);
        indices_ = createQuadIndices(ctx, janitor_);
        pass_ = createColorPass(ctx, janitor_);
        pipeline_ = createGraphicsPipeline(ctx, janitor_,
                                           {.vertex = spirv::rectVert(),
                                            .fragment = spirv::colorFrag(),
                                            .layout = layout_,
                                            .renderPass = pass_});
        program_ = createComputeProgram(ctx, janitor_, spirv::lcgFixedComp(), 1, sizeof(LcgPush));
        output_ = createBuffer(
            ctx, janitor_, threads_ * kWordsPerThread * 4,
            VK_BUFFER_USAGE_STORAGE_BUFFER_BIT | VK_BUFFER_USAGE_TRANSFER_SRC_BIT, Memory::Device);
        readback_ = createBuffer(ctx, janitor_, output_.size, VK_BUFFER_USAGE_TRANSFER_DST_BIT,
                                 Memory::Host);
        set_ = createStorageSet(ctx, janitor_, program_.setLayout, {output_.handle});
        fence_ = createFence(ctx, janitor_);

        const LcgModel model(kIterations);
        workers_.resize(threads_);
        for (uint32_t t = 0; t < threads_; ++t) {
            Worker& w = workers_[t];
            w.pool = createCommandPool(ctx, janitor_, ctx.main.family);
            w.cmd = allocateCommandBuffers(ctx, w.pool, 1)[0];
            w.target = createColorTarget(ctx, janitor_);
            w.framebuffer = createFramebuffer(ctx, janitor_, pass_, {w.target.image.view});
            w.expectedImage = solidPixels(kClear);
            drawRects(w.expectedImage, 0, draws_, kSaltBase + t, Blend::Replace);
            for (uint32_t i = 0; i < kWordsPerThread; ++i) {
                const uint32_t index = t * kWordsPerThread + i;
                w.expectedWords.push_back(model(seedOf(t), index));
            }
        }
    }

    void frame(Context& ctx, uint32_t) override {
        std::latch start(threads_);
        std::vector<std::exception_ptr> errors(threads_);
        std::vector<std::thread> pool;
        for (uint32_t t = 0; t < threads_; ++t) {
            pool.emplace_back([&, t] {
                // Every thread waits here until all exist, so the recordings overlap.
                start.arrive_and_wait();
                try {
                    record(ctx, t);
                } catch (...) {
                    errors[t] = std::current_exception();
                }
            });
        }
        for (std::thread& thread : pool) {
            thread.join();
        }
        for (const std::exception_ptr& error : errors) {
            if (error) {
                std::rethrow_exception(error);
            }
        }

        std::vector<VkCommandBuffer> cmds;
        for (const Worker& w : workers_) {
            cmds.push_back(w.cmd);
        }
        submitAndWait(ctx, ctx.main.queue, cmds, fence_);
        for (uint32_t t = 0; t < threads_; ++t) {
            const Worker& w = workers_[t];
            const std::string who = "thread " + std::to_string(t);
            expectPixels(who + " image", w.target.readback.mapped, w.expectedImage);
            expectWords(who + " dispatch", readback_.as<uint32_t>() + t * kWordsPerThread,
                        w.expectedWords.data(), kWordsPerThread);
        }
    }

private:
    struct Worker {
        VkCommandPool pool = VK_NULL_HANDLE;
        VkCommandBuffer cmd = VK_NULL_HANDLE;
        ColorTarget target;
        VkFramebuffer framebuffer = VK_NULL_HANDLE;
        Pixels expectedImage;
        std::vector<uint32_t> expectedWords;
    };

    static uint32_t seedOf(uint32_t thread) { return 0x7417ead0u + thread; }

    void record(Context& ctx, uint32_t t) {
        Worker& w = workers_[t];
        VK_CHECK(vkResetCommandPool(ctx.device, w.pool, 0));
        beginCommands(w.cmd);
        const VkClearValue clear = clearValueOf(kClear);
        const VkRenderPassBeginInfo begin{
            .sType = VK_STRUCTURE_TYPE_RENDER_PASS_BEGIN_INFO,
            .renderPass = pass_,
            .framebuffer = w.framebuffer,
            .renderArea = {{0, 0}, {kTargetSize, kTargetSize}},
            .clearValueCount = 1,
            .pClearValues = &clear,
        };
        vkCmdBeginRenderPass(w.cmd, &begin, VK_SUBPASS_CONTENTS_INLINE);
        vkCmdBindPipeline(w.cmd, VK_PIPELINE_BIND_POINT_GRAPHICS, pipeline_);
        setFullViewport(w.cmd);
        recordRects(w.cmd, layout_, indices_.handle, 0, draws_, kSaltBase + t, Blend::Replace);
        vkCmdEndRenderPass(w.cmd);
        copyImageToBuffer(w.cmd, w.target.image, w.target.readback.handle);

        // The previous frame's download of this slice precedes the new shader writes.
        memoryBarrier(w.cmd, VK_PIPELINE_STAGE_TRANSFER_BIT, 0,
                      VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, VK_ACCESS_SHADER_WRITE_BIT);
        const LcgPush push{t * kWordsPerThread, 0, seedOf(t), kIterations};
        bindCompute(w.cmd, program_, set_, &push, sizeof(push));
        vkCmdDispatch(w.cmd, kGroupsPerThread, 1, 1);
        memoryBarrier(w.cmd, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, VK_ACCESS_SHADER_WRITE_BIT,
                      VK_PIPELINE_STAGE_TRANSFER_BIT, VK_ACCESS_TRANSFER_READ_BIT);
        const VkDeviceSize offset = t * kWordsPerThread * 4;
        const VkBufferCopy region{offset, offset, kWordsPerThread * 4};
        vkCmdCopyBuffer(w.cmd, output_.handle, readback_.handle, 1, &region);
        transferToHostBarrier(w.cmd);
        endCommands(w.cmd);
    }

    Janitor janitor_;
    uint32_t threads_ = 0;
    uint32_t draws_ = 0;
    VkPipelineLayout layout_ = VK_NULL_HANDLE;
    Buffer indices_;
    VkRenderPass pass_ = VK_NULL_HANDLE;
    VkPipeline pipeline_ = VK_NULL_HANDLE;
    ComputeProgram program_;
    Buffer output_;
    Buffer readback_;
    VkDescriptorSet set_ = VK_NULL_HANDLE;
    VkFence fence_ = VK_NULL_HANDLE;
    std::vector<Worker> workers_;
};

} // namespace

std::unique_ptr<Scenario> makeThreadsScenario() {
    return std::make_unique<ThreadsScenario>();
}

} // namespace wl
