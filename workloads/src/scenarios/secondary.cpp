// secondary: secondary command buffers. A secondary full of additive draws is executed twice
// inside one render pass (so a dropped execution halves the result), and a secondary with a
// compute dispatch is executed outside any render pass.

#include "errors.h"
#include "kernels.h"
#include "pipelines.h"
#include "raster.h"
#include "scenario.h"

#include <vector>

namespace wl {

namespace {

constexpr Rgba kClear = {0, 0, 0, 0};
constexpr uint32_t kSalt = 5;
constexpr uint32_t kComputeGroups = 4;
constexpr uint32_t kComputeElements = kComputeGroups * 64;
constexpr LcgPush kComputePush = {0, 0, 0x5ec0da77u, 100};

class SecondaryScenario final : public Scenario {
public:
    void setup(Context& ctx) override {
        janitor_.attach(ctx.device);
        if (!ctx.hasGraphics()) {
            throw SkipScenario("needs a graphics queue");
        }
        draws_ = ctx.options.draws;
        layout_ = createRectLayout(ctx, janitor_);
        indices_ = createQuadIndices(ctx, janitor_);
        pass_ = createColorPass(ctx, janitor_);
        target_ = createColorTarget(ctx, janitor_);
        framebuffer_ = createFramebuffer(ctx, janitor_, pass_, {target_.image.view});
        pipeline_ = createGraphicsPipeline(ctx, janitor_,
                                           {.vertex = spirv::rectVert(),
                                            .fragment = spirv::colorFrag(),
                                            .layout = layout_,
                                            .renderPass = pass_,
                                            .additive = true});

        program_ = createComputeProgram(ctx, janitor_, spirv::lcgFixedComp(), 1, sizeof(LcgPush));
        output_ = createBuffer(
            ctx, janitor_, kComputeElements * 4,
            VK_BUFFER_USAGE_STORAGE_BUFFER_BIT | VK_BUFFER_USAGE_TRANSFER_SRC_BIT, Memory::Device);
        readback_ = createBuffer(ctx, janitor_, kComputeElements * 4,
                                 VK_BUFFER_USAGE_TRANSFER_DST_BIT, Memory::Host);
        set_ = createStorageSet(ctx, janitor_, program_.setLayout, {output_.handle});

        pool_ = createCommandPool(ctx, janitor_, ctx.main.family);
        primary_ = allocateCommandBuffers(ctx, pool_, 1)[0];
        std::vector<VkCommandBuffer> secondaries =
            allocateCommandBuffers(ctx, pool_, 2, VK_COMMAND_BUFFER_LEVEL_SECONDARY);
        drawSecondary_ = secondaries[0];
        computeSecondary_ = secondaries[1];
        fence_ = createFence(ctx, janitor_);

        expectedImage_ = solidPixels(kClear);
        drawRects(expectedImage_, 0, draws_, kSalt, Blend::Add);
        drawRects(expectedImage_, 0, draws_, kSalt, Blend::Add);
        const LcgModel model(kComputePush.iterations);
        for (uint32_t i = 0; i < kComputeElements; ++i) {
            expectedCompute_.push_back(model(kComputePush.seed, i));
        }
    }

    void frame(Context& ctx, uint32_t) override {
        VK_CHECK(vkResetCommandPool(ctx.device, pool_, 0));

        const VkCommandBufferInheritanceInfo drawInheritance{
            .sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_INHERITANCE_INFO,
            .renderPass = pass_,
            .subpass = 0,
            .framebuffer = framebuffer_,
        };
        // SIMULTANEOUS_USE because the same secondary is executed twice in one primary.
        beginCommands(drawSecondary_,
                      VK_COMMAND_BUFFER_USAGE_RENDER_PASS_CONTINUE_BIT |
                          VK_COMMAND_BUFFER_USAGE_SIMULTANEOUS_USE_BIT,
                      &drawInheritance);
        vkCmdBindPipeline(drawSecondary_, VK_PIPELINE_BIND_POINT_GRAPHICS, pipeline_);
        setFullViewport(drawSecondary_);
        recordRects(drawSecondary_, layout_, indices_.handle, 0, draws_, kSalt, Blend::Add);
        endCommands(drawSecondary_);

        const VkCommandBufferInheritanceInfo computeInheritance{
            .sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_INHERITANCE_INFO,
        };
        beginCommands(computeSecondary_, VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT,
                      &computeInheritance);
        bindCompute(computeSecondary_, program_, set_, &kComputePush, sizeof(kComputePush));
        vkCmdDispatch(computeSecondary_, kComputeGroups, 1, 1);
        endCommands(computeSecondary_);

        beginCommands(primary_);
        beginColorPass(primary_, pass_, framebuffer_, kClear,
                       VK_SUBPASS_CONTENTS_SECONDARY_COMMAND_BUFFERS);
        vkCmdExecuteCommands(primary_, 1, &drawSecondary_);
        vkCmdExecuteCommands(primary_, 1, &drawSecondary_);
        vkCmdEndRenderPass(primary_);
        copyImageToBuffer(primary_, target_.image, target_.readback.handle);

        // The previous frame's copy out of the buffer precedes this frame's shader writes.
        memoryBarrier(primary_, VK_PIPELINE_STAGE_TRANSFER_BIT, 0,
                      VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, VK_ACCESS_SHADER_WRITE_BIT);
        vkCmdExecuteCommands(primary_, 1, &computeSecondary_);
        memoryBarrier(primary_, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, VK_ACCESS_SHADER_WRITE_BIT,
                      VK_PIPELINE_STAGE_TRANSFER_BIT, VK_ACCESS_TRANSFER_READ_BIT);
        const VkBufferCopy region{0, 0, output_.size};
        vkCmdCopyBuffer(primary_, output_.handle, readback_.handle, 1, &region);
        transferToHostBarrier(primary_);
        endCommands(primary_);

        submitAndWait(ctx, ctx.main.queue, {&primary_, 1}, fence_);
        expectPixels("secondary executed twice in a render pass", target_.readback.mapped,
                     expectedImage_);
        expectWords("compute dispatch from a secondary", readback_.as<uint32_t>(),
                    expectedCompute_.data(), kComputeElements);
    }

private:
    Janitor janitor_;
    uint32_t draws_ = 0;
    VkPipelineLayout layout_ = VK_NULL_HANDLE;
    Buffer indices_;
    VkRenderPass pass_ = VK_NULL_HANDLE;
    ColorTarget target_;
    VkFramebuffer framebuffer_ = VK_NULL_HANDLE;
    VkPipeline pipeline_ = VK_NULL_HANDLE;
    ComputeProgram program_;
    Buffer output_;
    Buffer readback_;
    VkDescriptorSet set_ = VK_NULL_HANDLE;
    VkCommandPool pool_ = VK_NULL_HANDLE;
    VkCommandBuffer primary_ = VK_NULL_HANDLE;
    VkCommandBuffer drawSecondary_ = VK_NULL_HANDLE;
    VkCommandBuffer computeSecondary_ = VK_NULL_HANDLE;
    VkFence fence_ = VK_NULL_HANDLE;
    Pixels expectedImage_;
    std::vector<uint32_t> expectedCompute_;
};

} // namespace

std::unique_ptr<Scenario> makeSecondaryScenario() {
    return std::make_unique<SecondaryScenario>();
}

} // namespace wl
