// renderpass: classic render passes. One single-subpass pass begun with vkCmdBeginRenderPass,
// and a two-subpass pass begun with vkCmdBeginRenderPass2 whose second subpass reads the
// first one's colour output as an input attachment, with a cleared, discarded depth buffer.

#include "errors.h"
#include "pipelines.h"
#include "raster.h"
#include "scenario.h"

namespace wl {

namespace {

constexpr Rgba kClearSingle = {10, 20, 30, 255};
constexpr Rgba kClearMulti = {200, 100, 50, 0};
constexpr uint32_t kSaltSingle = 1;
constexpr uint32_t kSaltMulti = 2;

class RenderPassScenario final : public Scenario {
public:
    void setup(Context& ctx) override {
        janitor_.attach(ctx.device);
        if (!ctx.hasGraphics()) {
            throw SkipScenario("needs a graphics queue");
        }
        if (!ctx.features.renderPass2) {
            throw SkipScenario("needs Vulkan 1.2 for vkCmdBeginRenderPass2");
        }
        draws_ = ctx.options.draws;
        layout_ = createRectLayout(ctx, janitor_);
        indices_ = createQuadIndices(ctx, janitor_);

        singlePass_ = createColorPass(ctx, janitor_);
        single_ = createColorTarget(ctx, janitor_);
        singleFramebuffer_ = createFramebuffer(ctx, janitor_, singlePass_, {single_.image.view});
        singlePipeline_ = createGraphicsPipeline(ctx, janitor_,
                                                 {.vertex = spirv::rectVert(),
                                                  .fragment = spirv::colorFrag(),
                                                  .layout = layout_,
                                                  .renderPass = singlePass_});

        const VkFormat depthFormat =
            pickDepthFormat(ctx, VK_FORMAT_FEATURE_DEPTH_STENCIL_ATTACHMENT_BIT);
        createMultiPass(ctx, depthFormat);
        first_ = createColorTarget(ctx, janitor_);
        second_ = createColorTarget(ctx, janitor_);
        depth_ = createImage(ctx, janitor_,
                             ImageDesc{.format = depthFormat,
                                       .usage = VK_IMAGE_USAGE_DEPTH_STENCIL_ATTACHMENT_BIT,
                                       .aspect = VK_IMAGE_ASPECT_DEPTH_BIT});
        multiFramebuffer_ = createFramebuffer(ctx, janitor_, multiPass_,
                                              {first_.image.view, second_.image.view, depth_.view});
        createInputSet(ctx);
        firstPipeline_ = createGraphicsPipeline(ctx, janitor_,
                                                {.vertex = spirv::rectVert(),
                                                 .fragment = spirv::colorFrag(),
                                                 .layout = layout_,
                                                 .renderPass = multiPass_,
                                                 .subpass = 0,
                                                 .depthTest = true});
        invertPipeline_ = createGraphicsPipeline(ctx, janitor_,
                                                 {.vertex = spirv::fullscreenVert(),
                                                  .fragment = spirv::invertFrag(),
                                                  .layout = invertLayout_,
                                                  .renderPass = multiPass_,
                                                  .subpass = 1});

        pool_ = createCommandPool(ctx, janitor_, ctx.main.family);
        cmd_ = allocateCommandBuffers(ctx, pool_, 1)[0];
        fence_ = createFence(ctx, janitor_);

        expectedSingle_ = solidPixels(kClearSingle);
        drawRects(expectedSingle_, 0, draws_, kSaltSingle, Blend::Replace);
        expectedFirst_ = solidPixels(kClearMulti);
        drawRects(expectedFirst_, 0, draws_, kSaltMulti, Blend::Replace);
        expectedSecond_ = expectedFirst_;
        for (uint8_t& channel : expectedSecond_) {
            channel = static_cast<uint8_t>(255 - channel);
        }
    }

    void frame(Context& ctx, uint32_t) override {
        VK_CHECK(vkResetCommandPool(ctx.device, pool_, 0));
        beginCommands(cmd_);
        const VkRect2D area{{0, 0}, {kTargetSize, kTargetSize}};

        const VkClearValue singleClear = clearValueOf(kClearSingle);
        const VkRenderPassBeginInfo singleBegin{
            .sType = VK_STRUCTURE_TYPE_RENDER_PASS_BEGIN_INFO,
            .renderPass = singlePass_,
            .framebuffer = singleFramebuffer_,
            .renderArea = area,
            .clearValueCount = 1,
            .pClearValues = &singleClear,
        };
        vkCmdBeginRenderPass(cmd_, &singleBegin, VK_SUBPASS_CONTENTS_INLINE);
        vkCmdBindPipeline(cmd_, VK_PIPELINE_BIND_POINT_GRAPHICS, singlePipeline_);
        setFullViewport(cmd_);
        recordRects(cmd_, layout_, indices_.handle, 0, draws_, kSaltSingle, Blend::Replace);
        vkCmdEndRenderPass(cmd_);
        copyImageToBuffer(cmd_, single_.image, single_.readback.handle);

        VkClearValue multiClear[3] = {clearValueOf(kClearMulti), {}, {}};
        multiClear[2].depthStencil = {1.0f, 0};
        const VkRenderPassBeginInfo multiBegin{
            .sType = VK_STRUCTURE_TYPE_RENDER_PASS_BEGIN_INFO,
            .renderPass = multiPass_,
            .framebuffer = multiFramebuffer_,
            .renderArea = area,
            .clearValueCount = 3,
            .pClearValues = multiClear,
        };
        const VkSubpassBeginInfo subpassBegin{
            .sType = VK_STRUCTURE_TYPE_SUBPASS_BEGIN_INFO,
            .contents = VK_SUBPASS_CONTENTS_INLINE,
        };
        const VkSubpassEndInfo subpassEnd{.sType = VK_STRUCTURE_TYPE_SUBPASS_END_INFO};
        vkCmdBeginRenderPass2(cmd_, &multiBegin, &subpassBegin);
        vkCmdBindPipeline(cmd_, VK_PIPELINE_BIND_POINT_GRAPHICS, firstPipeline_);
        setFullViewport(cmd_);
        recordRects(cmd_, layout_, indices_.handle, 0, draws_, kSaltMulti, Blend::Replace);
        vkCmdNextSubpass2(cmd_, &subpassBegin, &subpassEnd);
        vkCmdBindPipeline(cmd_, VK_PIPELINE_BIND_POINT_GRAPHICS, invertPipeline_);
        vkCmdBindDescriptorSets(cmd_, VK_PIPELINE_BIND_POINT_GRAPHICS, invertLayout_, 0, 1,
                                &inputSet_, 0, nullptr);
        vkCmdDraw(cmd_, 3, 1, 0, 0);
        vkCmdEndRenderPass2(cmd_, &subpassEnd);
        copyImageToBuffer(cmd_, first_.image, first_.readback.handle);
        copyImageToBuffer(cmd_, second_.image, second_.readback.handle);

        transferToHostBarrier(cmd_);
        endCommands(cmd_);
        submitAndWait(ctx, ctx.main.queue, {&cmd_, 1}, fence_);

        expectPixels("vkCmdBeginRenderPass target", single_.readback.mapped, expectedSingle_);
        expectPixels("vkCmdBeginRenderPass2 subpass 0", first_.readback.mapped, expectedFirst_);
        expectPixels("vkCmdBeginRenderPass2 subpass 1 (input attachment)", second_.readback.mapped,
                     expectedSecond_);
    }

private:
    void createMultiPass(Context& ctx, VkFormat depthFormat) {
        auto color = [](VkAttachmentLoadOp load) {
            return VkAttachmentDescription2{
                .sType = VK_STRUCTURE_TYPE_ATTACHMENT_DESCRIPTION_2,
                .format = kColorFormat,
                .samples = VK_SAMPLE_COUNT_1_BIT,
                .loadOp = load,
                .storeOp = VK_ATTACHMENT_STORE_OP_STORE,
                .stencilLoadOp = VK_ATTACHMENT_LOAD_OP_DONT_CARE,
                .stencilStoreOp = VK_ATTACHMENT_STORE_OP_DONT_CARE,
                .initialLayout = VK_IMAGE_LAYOUT_UNDEFINED,
                .finalLayout = VK_IMAGE_LAYOUT_TRANSFER_SRC_OPTIMAL,
            };
        };
        const VkAttachmentDescription2 attachments[3] = {
            color(VK_ATTACHMENT_LOAD_OP_CLEAR),
            // Fully overwritten by the full-screen pass of subpass 1.
            color(VK_ATTACHMENT_LOAD_OP_DONT_CARE),
            {
                .sType = VK_STRUCTURE_TYPE_ATTACHMENT_DESCRIPTION_2,
                .format = depthFormat,
                .samples = VK_SAMPLE_COUNT_1_BIT,
                .loadOp = VK_ATTACHMENT_LOAD_OP_CLEAR,
                .storeOp = VK_ATTACHMENT_STORE_OP_DONT_CARE,
                .stencilLoadOp = VK_ATTACHMENT_LOAD_OP_DONT_CARE,
                .stencilStoreOp = VK_ATTACHMENT_STORE_OP_DONT_CARE,
                .initialLayout = VK_IMAGE_LAYOUT_UNDEFINED,
                .finalLayout = VK_IMAGE_LAYOUT_DEPTH_STENCIL_ATTACHMENT_OPTIMAL,
            },
        };
        auto ref = [](uint32_t attachment, VkImageLayout layout, VkImageAspectFlags aspect) {
            return VkAttachmentReference2{
                .sType = VK_STRUCTURE_TYPE_ATTACHMENT_REFERENCE_2,
                .attachment = attachment,
                .layout = layout,
                .aspectMask = aspect,
            };
        };
        const VkAttachmentReference2 firstColor =
            ref(0, VK_IMAGE_LAYOUT_COLOR_ATTACHMENT_OPTIMAL, VK_IMAGE_ASPECT_COLOR_BIT);
        const VkAttachmentReference2 depth =
            ref(2, VK_IMAGE_LAYOUT_DEPTH_STENCIL_ATTACHMENT_OPTIMAL, VK_IMAGE_ASPECT_DEPTH_BIT);
        const VkAttachmentReference2 input =
            ref(0, VK_IMAGE_LAYOUT_SHADER_READ_ONLY_OPTIMAL, VK_IMAGE_ASPECT_COLOR_BIT);
        const VkAttachmentReference2 secondColor =
            ref(1, VK_IMAGE_LAYOUT_COLOR_ATTACHMENT_OPTIMAL, VK_IMAGE_ASPECT_COLOR_BIT);
        const VkSubpassDescription2 subpasses[2] = {
            {
                .sType = VK_STRUCTURE_TYPE_SUBPASS_DESCRIPTION_2,
                .pipelineBindPoint = VK_PIPELINE_BIND_POINT_GRAPHICS,
                .colorAttachmentCount = 1,
                .pColorAttachments = &firstColor,
                .pDepthStencilAttachment = &depth,
            },
            {
                .sType = VK_STRUCTURE_TYPE_SUBPASS_DESCRIPTION_2,
                .pipelineBindPoint = VK_PIPELINE_BIND_POINT_GRAPHICS,
                .inputAttachmentCount = 1,
                .pInputAttachments = &input,
                .colorAttachmentCount = 1,
                .pColorAttachments = &secondColor,
            },
        };
        constexpr VkPipelineStageFlags kFragmentTests =
            VK_PIPELINE_STAGE_EARLY_FRAGMENT_TESTS_BIT | VK_PIPELINE_STAGE_LATE_FRAGMENT_TESTS_BIT;
        const VkSubpassDependency2 dependencies[4] = {
            // Previous frame's copies and depth writes before this frame's clears.
            {
                .sType = VK_STRUCTURE_TYPE_SUBPASS_DEPENDENCY_2,
                .srcSubpass = VK_SUBPASS_EXTERNAL,
                .dstSubpass = 0,
                .srcStageMask = VK_PIPELINE_STAGE_TRANSFER_BIT | kFragmentTests,
                .dstStageMask = VK_PIPELINE_STAGE_COLOR_ATTACHMENT_OUTPUT_BIT | kFragmentTests,
                .srcAccessMask = VK_ACCESS_DEPTH_STENCIL_ATTACHMENT_WRITE_BIT,
                .dstAccessMask = VK_ACCESS_COLOR_ATTACHMENT_WRITE_BIT |
                                 VK_ACCESS_DEPTH_STENCIL_ATTACHMENT_READ_BIT |
                                 VK_ACCESS_DEPTH_STENCIL_ATTACHMENT_WRITE_BIT,
            },
            {
                .sType = VK_STRUCTURE_TYPE_SUBPASS_DEPENDENCY_2,
                .srcSubpass = 0,
                .dstSubpass = 1,
                .srcStageMask = VK_PIPELINE_STAGE_COLOR_ATTACHMENT_OUTPUT_BIT,
                .dstStageMask = VK_PIPELINE_STAGE_FRAGMENT_SHADER_BIT,
                .srcAccessMask = VK_ACCESS_COLOR_ATTACHMENT_WRITE_BIT,
                .dstAccessMask = VK_ACCESS_INPUT_ATTACHMENT_READ_BIT,
                .dependencyFlags = VK_DEPENDENCY_BY_REGION_BIT,
            },
            {
                .sType = VK_STRUCTURE_TYPE_SUBPASS_DEPENDENCY_2,
                .srcSubpass = 0,
                .dstSubpass = VK_SUBPASS_EXTERNAL,
                .srcStageMask = VK_PIPELINE_STAGE_COLOR_ATTACHMENT_OUTPUT_BIT,
                .dstStageMask = VK_PIPELINE_STAGE_TRANSFER_BIT,
                .srcAccessMask = VK_ACCESS_COLOR_ATTACHMENT_WRITE_BIT,
                .dstAccessMask = VK_ACCESS_TRANSFER_READ_BIT,
            },
            // Includes the fragment shader so the input attachment reads finish before
            // attachment 0 moves to TRANSFER_SRC_OPTIMAL.
            {
                .sType = VK_STRUCTURE_TYPE_SUBPASS_DEPENDENCY_2,
                .srcSubpass = 1,
                .dstSubpass = VK_SUBPASS_EXTERNAL,
                .srcStageMask = VK_PIPELINE_STAGE_COLOR_ATTACHMENT_OUTPUT_BIT |
                                VK_PIPELINE_STAGE_FRAGMENT_SHADER_BIT,
                .dstStageMask = VK_PIPELINE_STAGE_TRANSFER_BIT,
                .srcAccessMask = VK_ACCESS_COLOR_ATTACHMENT_WRITE_BIT,
                .dstAccessMask = VK_ACCESS_TRANSFER_READ_BIT,
            },
        };
        const VkRenderPassCreateInfo2 info{
            .sType = VK_STRUCTURE_TYPE_RENDER_PASS_CREATE_INFO_2,
            .attachmentCount = 3,
            .pAttachments = attachments,
            .subpassCount = 2,
            .pSubpasses = subpasses,
            .dependencyCount = 4,
            .pDependencies = dependencies,
        };
        VK_CHECK(vkCreateRenderPass2(ctx.device, &info, nullptr, &multiPass_));
        VkDevice device = ctx.device;
        janitor_.defer([device, pass = multiPass_] { vkDestroyRenderPass(device, pass, nullptr); });
    }

    void createInputSet(Context& ctx) {
        VkDevice device = ctx.device;
        const VkDescriptorSetLayoutBinding binding{
            .binding = 0,
            .descriptorType = VK_DESCRIPTOR_TYPE_INPUT_ATTACHMENT,
            .descriptorCount = 1,
            .stageFlags = VK_SHADER_STAGE_FRAGMENT_BIT,
        };
        const VkDescriptorSetLayoutCreateInfo layoutInfo{
            .sType = VK_STRUCTURE_TYPE_DESCRIPTOR_SET_LAYOUT_CREATE_INFO,
            .bindingCount = 1,
            .pBindings = &binding,
        };
        VK_CHECK(vkCreateDescriptorSetLayout(device, &layoutInfo, nullptr, &inputSetLayout_));
        janitor_.defer(
            [device, l = inputSetLayout_] { vkDestroyDescriptorSetLayout(device, l, nullptr); });
        invertLayout_ = createPipelineLayout(ctx, janitor_, {inputSetLayout_}, 0, 0);

        const VkDescriptorPoolSize size{VK_DESCRIPTOR_TYPE_INPUT_ATTACHMENT, 1};
        const VkDescriptorPoolCreateInfo poolInfo{
            .sType = VK_STRUCTURE_TYPE_DESCRIPTOR_POOL_CREATE_INFO,
            .maxSets = 1,
            .poolSizeCount = 1,
            .pPoolSizes = &size,
        };
        VkDescriptorPool descriptorPool = VK_NULL_HANDLE;
        VK_CHECK(vkCreateDescriptorPool(device, &poolInfo, nullptr, &descriptorPool));
        janitor_.defer(
            [device, descriptorPool] { vkDestroyDescriptorPool(device, descriptorPool, nullptr); });
        const VkDescriptorSetAllocateInfo allocInfo{
            .sType = VK_STRUCTURE_TYPE_DESCRIPTOR_SET_ALLOCATE_INFO,
            .descriptorPool = descriptorPool,
            .descriptorSetCount = 1,
            .pSetLayouts = &inputSetLayout_,
        };
        VK_CHECK(vkAllocateDescriptorSets(device, &allocInfo, &inputSet_));
        const VkDescriptorImageInfo image{
            .imageView = first_.image.view,
            .imageLayout = VK_IMAGE_LAYOUT_SHADER_READ_ONLY_OPTIMAL,
        };
        const VkWriteDescriptorSet write{
            .sType = VK_STRUCTURE_TYPE_WRITE_DESCRIPTOR_SET,
            .dstSet = inputSet_,
            .dstBinding = 0,
            .descriptorCount = 1,
            .descriptorType = VK_DESCRIPTOR_TYPE_INPUT_ATTACHMENT,
            .pImageInfo = &image,
        };
        vkUpdateDescriptorSets(device, 1, &write, 0, nullptr);
    }

    Janitor janitor_;
    uint32_t draws_ = 0;
    VkPipelineLayout layout_ = VK_NULL_HANDLE;
    Buffer indices_;
    VkRenderPass singlePass_ = VK_NULL_HANDLE;
    ColorTarget single_;
    VkFramebuffer singleFramebuffer_ = VK_NULL_HANDLE;
    VkPipeline singlePipeline_ = VK_NULL_HANDLE;
    VkRenderPass multiPass_ = VK_NULL_HANDLE;
    ColorTarget first_;
    ColorTarget second_;
    Image depth_;
    VkFramebuffer multiFramebuffer_ = VK_NULL_HANDLE;
    VkDescriptorSetLayout inputSetLayout_ = VK_NULL_HANDLE;
    VkPipelineLayout invertLayout_ = VK_NULL_HANDLE;
    VkDescriptorSet inputSet_ = VK_NULL_HANDLE;
    VkPipeline firstPipeline_ = VK_NULL_HANDLE;
    VkPipeline invertPipeline_ = VK_NULL_HANDLE;
    VkCommandPool pool_ = VK_NULL_HANDLE;
    VkCommandBuffer cmd_ = VK_NULL_HANDLE;
    VkFence fence_ = VK_NULL_HANDLE;
    Pixels expectedSingle_;
    Pixels expectedFirst_;
    Pixels expectedSecond_;
};

} // namespace

std::unique_ptr<Scenario> makeRenderPassScenario() {
    return std::make_unique<RenderPassScenario>();
}

} // namespace wl
