// dynamic_rendering: vkCmdBeginRendering with all draws in one command buffer, plus one
// render pass instance split over three command buffers with SUSPENDING / RESUMING, which
// the spec requires to be in the same submission batch.

#include "errors.h"
#include "pipelines.h"
#include "raster.h"
#include "scenario.h"

#include <array>

namespace wl {

namespace {

constexpr Rgba kClearWhole = {0, 64, 128, 255};
constexpr Rgba kClearSplit = {255, 255, 255, 255};
constexpr uint32_t kSaltWhole = 3;
constexpr uint32_t kSaltSplit = 4;

class DynamicRenderingScenario final : public Scenario {
public:
    void setup(Context& ctx) override {
        janitor_.attach(ctx.device);
        if (!ctx.hasGraphics()) {
            throw SkipScenario("needs a graphics queue");
        }
        if (!ctx.features.dynamicRendering) {
            throw SkipScenario("needs the dynamicRendering feature");
        }
        draws_ = ctx.options.draws;
        layout_ = createRectLayout(ctx, janitor_);
        indices_ = createQuadIndices(ctx, janitor_);
        pipeline_ = createGraphicsPipeline(ctx, janitor_,
                                           {.vertex = spirv::rectVert(),
                                            .fragment = spirv::colorFrag(),
                                            .layout = layout_,
                                            .colorFormat = kColorFormat});
        whole_ = createColorTarget(ctx, janitor_);
        split_ = createColorTarget(ctx, janitor_);
        pool_ = createCommandPool(ctx, janitor_, ctx.main.family);
        std::vector<VkCommandBuffer> cmds = allocateCommandBuffers(ctx, pool_, 4);
        std::copy(cmds.begin(), cmds.end(), cmds_.begin());
        fence_ = createFence(ctx, janitor_);

        expectedWhole_ = solidPixels(kClearWhole);
        drawRects(expectedWhole_, 0, draws_, kSaltWhole, Blend::Replace);
        expectedSplit_ = solidPixels(kClearSplit);
        drawRects(expectedSplit_, 0, draws_, kSaltSplit, Blend::Replace);
    }

    void frame(Context& ctx, uint32_t) override {
        VK_CHECK(vkResetCommandPool(ctx.device, pool_, 0));

        VkCommandBuffer whole = cmds_[0];
        beginCommands(whole);
        toAttachment(whole, whole_.image);
        render(whole, whole_, kClearWhole, 0, 0, draws_, kSaltWhole);
        finish(whole, whole_);
        endCommands(whole);

        // The split pass: A begins and suspends, B resumes and suspends, C resumes and ends.
        const uint32_t cut1 = draws_ / 3;
        const uint32_t cut2 = 2 * draws_ / 3;
        const VkRenderingFlags flags[3] = {
            VK_RENDERING_SUSPENDING_BIT,
            VK_RENDERING_RESUMING_BIT | VK_RENDERING_SUSPENDING_BIT,
            VK_RENDERING_RESUMING_BIT,
        };
        const uint32_t ranges[4] = {0, cut1, cut2, draws_};
        for (uint32_t part = 0; part < 3; ++part) {
            VkCommandBuffer cmd = cmds_[part + 1];
            beginCommands(cmd);
            if (part == 0) {
                toAttachment(cmd, split_.image);
            }
            render(cmd, split_, kClearSplit, flags[part], ranges[part],
                   ranges[part + 1] - ranges[part], kSaltSplit);
            if (part == 2) {
                finish(cmd, split_);
            }
            endCommands(cmd);
        }

        submitAndWait(ctx, ctx.main.queue, cmds_, fence_);
        expectPixels("single command buffer", whole_.readback.mapped, expectedWhole_);
        expectPixels("render pass split over 3 command buffers", split_.readback.mapped,
                     expectedSplit_);
    }

private:
    static void toAttachment(VkCommandBuffer cmd, const Image& image) {
        // The previous frame's copy read the image; the clear must come after it.
        imageBarrier(cmd, image, VK_IMAGE_LAYOUT_UNDEFINED,
                     VK_IMAGE_LAYOUT_COLOR_ATTACHMENT_OPTIMAL, VK_PIPELINE_STAGE_TRANSFER_BIT, 0,
                     VK_PIPELINE_STAGE_COLOR_ATTACHMENT_OUTPUT_BIT,
                     VK_ACCESS_COLOR_ATTACHMENT_READ_BIT | VK_ACCESS_COLOR_ATTACHMENT_WRITE_BIT);
    }

    void render(VkCommandBuffer cmd, const ColorTarget& target, Rgba clear, VkRenderingFlags flags,
                uint32_t first, uint32_t count, uint32_t salt) {
        // Identical in every part of a split pass except for the flags; the clear only
        // happens in the part that does not resume.
        const VkRenderingAttachmentInfo color{
            .sType = VK_STRUCTURE_TYPE_RENDERING_ATTACHMENT_INFO,
            .imageView = target.image.view,
            .imageLayout = VK_IMAGE_LAYOUT_COLOR_ATTACHMENT_OPTIMAL,
            .resolveMode = VK_RESOLVE_MODE_NONE,
            .loadOp = VK_ATTACHMENT_LOAD_OP_CLEAR,
            .storeOp = VK_ATTACHMENT_STORE_OP_STORE,
            .clearValue = clearValueOf(clear),
        };
        const VkRenderingInfo info{
            .sType = VK_STRUCTURE_TYPE_RENDERING_INFO,
            .flags = flags,
            .renderArea = {{0, 0}, {kTargetSize, kTargetSize}},
            .layerCount = 1,
            .colorAttachmentCount = 1,
            .pColorAttachments = &color,
        };
        vkCmdBeginRendering(cmd, &info);
        vkCmdBindPipeline(cmd, VK_PIPELINE_BIND_POINT_GRAPHICS, pipeline_);
        setFullViewport(cmd);
        recordRects(cmd, layout_, indices_.handle, first, count, salt, Blend::Replace);
        vkCmdEndRendering(cmd);
    }

    static void finish(VkCommandBuffer cmd, const ColorTarget& target) {
        imageBarrier(cmd, target.image, VK_IMAGE_LAYOUT_COLOR_ATTACHMENT_OPTIMAL,
                     VK_IMAGE_LAYOUT_TRANSFER_SRC_OPTIMAL,
                     VK_PIPELINE_STAGE_COLOR_ATTACHMENT_OUTPUT_BIT,
                     VK_ACCESS_COLOR_ATTACHMENT_WRITE_BIT, VK_PIPELINE_STAGE_TRANSFER_BIT,
                     VK_ACCESS_TRANSFER_READ_BIT);
        copyImageToBuffer(cmd, target.image, target.readback.handle);
        transferToHostBarrier(cmd);
    }

    Janitor janitor_;
    uint32_t draws_ = 0;
    VkPipelineLayout layout_ = VK_NULL_HANDLE;
    Buffer indices_;
    VkPipeline pipeline_ = VK_NULL_HANDLE;
    ColorTarget whole_;
    ColorTarget split_;
    VkCommandPool pool_ = VK_NULL_HANDLE;
    std::array<VkCommandBuffer, 4> cmds_{};
    VkFence fence_ = VK_NULL_HANDLE;
    Pixels expectedWhole_;
    Pixels expectedSplit_;
};

} // namespace

std::unique_ptr<Scenario> makeDynamicRenderingScenario() {
    return std::make_unique<DynamicRenderingScenario>();
}

} // namespace wl
