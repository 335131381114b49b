// multiview: one render pass with viewMask 0b11 rendering into both layers of a 2-layer
// image; the vertex shader uses gl_ViewIndex so each layer gets different colours.

#include "errors.h"
#include "pipelines.h"
#include "raster.h"
#include "scenario.h"

namespace wl {

namespace {

constexpr Rgba kClear = {16, 32, 48, 64};
constexpr uint32_t kSalt = 6;
constexpr uint32_t kViews = 2;

class MultiviewScenario final : public Scenario {
public:
    void setup(Context& ctx) override {
        janitor_.attach(ctx.device);
        if (!ctx.hasGraphics()) {
            throw SkipScenario("needs a graphics queue");
        }
        if (!ctx.features.multiview) {
            throw SkipScenario("needs the multiview feature");
        }
        draws_ = ctx.options.draws;
        layout_ = createRectLayout(ctx, janitor_);
        indices_ = createQuadIndices(ctx, janitor_);
        pass_ = createColorPass(ctx, janitor_, (1u << kViews) - 1);
        target_ = createColorTarget(ctx, janitor_, kViews);
        framebuffer_ = createFramebuffer(ctx, janitor_, pass_, {target_.image.view});
        pipeline_ = createGraphicsPipeline(ctx, janitor_,
                                           {.vertex = spirv::rectMultiviewVert(),
                                            .fragment = spirv::colorFrag(),
                                            .layout = layout_,
                                            .renderPass = pass_});
        pool_ = createCommandPool(ctx, janitor_, ctx.main.family);
        cmd_ = allocateCommandBuffers(ctx, pool_, 1)[0];
        fence_ = createFence(ctx, janitor_);

        expected_ = solidPixels(kClear, kViews);
        for (uint32_t view = 0; view < kViews; ++view) {
            drawRects(expected_, 0, draws_, kSalt, Blend::Replace, view);
        }
    }

    void frame(Context& ctx, uint32_t) override {
        VK_CHECK(vkResetCommandPool(ctx.device, pool_, 0));
        beginCommands(cmd_);
        beginColorPass(cmd_, pass_, framebuffer_, kClear);
        vkCmdBindPipeline(cmd_, VK_PIPELINE_BIND_POINT_GRAPHICS, pipeline_);
        setFullViewport(cmd_);
        recordRects(cmd_, layout_, indices_.handle, 0, draws_, kSalt, Blend::Replace);
        vkCmdEndRenderPass(cmd_);
        copyImageToBuffer(cmd_, target_.image, target_.readback.handle);
        transferToHostBarrier(cmd_);
        endCommands(cmd_);

        submitAndWait(ctx, ctx.main.queue, {&cmd_, 1}, fence_);
        expectPixels("multiview layers", target_.readback.mapped, expected_);
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
    VkCommandPool pool_ = VK_NULL_HANDLE;
    VkCommandBuffer cmd_ = VK_NULL_HANDLE;
    VkFence fence_ = VK_NULL_HANDLE;
    Pixels expected_;
};

} // namespace

std::unique_ptr<Scenario> makeMultiviewScenario() {
    return std::make_unique<MultiviewScenario>();
}

} // namespace wl
