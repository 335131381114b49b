// game: what a frame of a game looks like to a profiler. Each frame is labelled `Frame` (a
// queue label; without its number, so that a pass is the same workload from frame to frame, as
// identities across frames need) and made of labelled passes:
//
//   Particles    two compute dispatches, on the second queue when the device has one that
//                computes (async compute), else on the main queue
//   Upload       a buffer copy from a host staging buffer and a vkCmdUpdateBuffer
//   Shadows      a render pass whose draws are recorded in a secondary command buffer
//   GBuffer      a render pass split over two command buffers (dynamic rendering suspended and
//                resumed; one render pass in one command buffer without dynamic rendering)
//   Lighting     a render pass of additive draws
//   PostProcess  two compute dispatches reading what Particles wrote
//   Readback     copies of every result to host memory, which the host checks
//
// Every frame is exactly two vkQueueSubmit calls (Particles, then the rest, which waits for it),
// so a layer that ends frames every N submissions (vkscope's `frame_submits = 2`) sees the same
// frames as the application. The last submission chains VkFrameBoundaryEXT where the device has
// it; that then is the frame's end, and Context::endFrame adds no submission of its own.
// Setup submits nothing, so frame 0 starts at the first submission.

#include "errors.h"
#include "kernels.h"
#include "pipelines.h"
#include "raster.h"
#include "scenario.h"

#include <array>
#include <string>
#include <vector>

namespace wl {

namespace {

constexpr uint32_t kParticles = 8192; // 128 groups of 64
// Draws per render pass for each of --draws: enough for the passes to cost about what the
// compute passes cost on lavapipe.
constexpr uint32_t kDrawsPerOption = 4;
constexpr uint32_t kParticleIterations = 24;
constexpr uint32_t kParticleSeed = 0x9a3e0000u;
constexpr uint32_t kParticleAdd = 17;
constexpr uint32_t kPostAdd = 40;
constexpr uint32_t kUploadWords = 2048;
constexpr uint32_t kUpdateWords = 64; // vkCmdUpdateBuffer takes at most 65536 bytes
constexpr uint32_t kUploadTotal = kUploadWords + kUpdateWords;
constexpr Rgba kShadowClear = {255, 255, 255, 255};
constexpr Rgba kGBufferClear = {16, 16, 32, 255};
constexpr Rgba kLightClear = {0, 0, 0, 0};
constexpr uint32_t kShadowSalt = 21;
constexpr uint32_t kGBufferSalt = 22;
constexpr uint32_t kLightSalt = 23;
// Salts change every frame so that a stale result from the frame before cannot pass.
constexpr uint32_t kSaltStep = 8;

struct Pass {
    const char* name;
    float color[4];
};
constexpr Pass kParticlesPass = {"Particles", {0.95f, 0.60f, 0.15f, 1.0f}};
constexpr Pass kUploadPass = {"Upload", {0.55f, 0.55f, 0.60f, 1.0f}};
constexpr Pass kShadowsPass = {"Shadows", {0.30f, 0.35f, 0.80f, 1.0f}};
constexpr Pass kGBufferPass = {"GBuffer", {0.20f, 0.70f, 0.40f, 1.0f}};
constexpr Pass kLightingPass = {"Lighting", {0.95f, 0.85f, 0.25f, 1.0f}};
constexpr Pass kPostPass = {"PostProcess", {0.75f, 0.30f, 0.75f, 1.0f}};
constexpr Pass kReadbackPass = {"Readback", {0.45f, 0.45f, 0.45f, 1.0f}};

class GameScenario final : public Scenario {
public:
    void setup(Context& ctx) override {
        janitor_.attach(ctx.device);
        if (!ctx.hasGraphics()) {
            throw SkipScenario("needs a graphics queue");
        }
        draws_ = kDrawsPerOption * ctx.options.draws;
        split_ = ctx.features.dynamicRendering;
        labels_ = ctx.features.debugUtils;
        async_ = ctx.second.valid() && (ctx.second.flags & VK_QUEUE_COMPUTE_BIT) != 0 ? ctx.second
                                                                                      : ctx.main;
        const std::array<uint32_t, 2> families = {ctx.main.family, async_.family};
        const bool shared = ctx.main.family != async_.family;

        // Compute: the particle simulation and the post-processing that reads it.
        lcg_ = createComputeProgram(ctx, janitor_, spirv::lcgFixedComp(), 1, sizeof(LcgPush));
        add_ = createComputeProgram(ctx, janitor_, spirv::addComp(), 1, sizeof(AddPush));
        transform_ =
            createComputeProgram(ctx, janitor_, spirv::transformComp(), 2, sizeof(TransformPush));
        particles_ = createBuffer(
            ctx, janitor_, kParticles * 4, VK_BUFFER_USAGE_STORAGE_BUFFER_BIT, Memory::Device,
            shared ? std::span<const uint32_t>(families) : std::span<const uint32_t>());
        post_ = createBuffer(ctx, janitor_, kParticles * 4,
                             VK_BUFFER_USAGE_STORAGE_BUFFER_BIT | VK_BUFFER_USAGE_TRANSFER_SRC_BIT,
                             Memory::Device);
        postReadback_ = createBuffer(ctx, janitor_, kParticles * 4,
                                     VK_BUFFER_USAGE_TRANSFER_DST_BIT, Memory::Host);
        lcgSet_ = createStorageSet(ctx, janitor_, lcg_.setLayout, {particles_.handle});
        particlesAddSet_ = createStorageSet(ctx, janitor_, add_.setLayout, {particles_.handle});
        transformSet_ = createStorageSet(ctx, janitor_, transform_.setLayout,
                                         {particles_.handle, post_.handle});
        postAddSet_ = createStorageSet(ctx, janitor_, add_.setLayout, {post_.handle});

        // Upload: per-frame data the host writes into a staging buffer.
        staging_ = createBuffer(ctx, janitor_, kUploadWords * 4, VK_BUFFER_USAGE_TRANSFER_SRC_BIT,
                                Memory::Host);
        uploaded_ = createBuffer(
            ctx, janitor_, kUploadTotal * 4,
            VK_BUFFER_USAGE_TRANSFER_SRC_BIT | VK_BUFFER_USAGE_TRANSFER_DST_BIT, Memory::Device);
        uploadReadback_ = createBuffer(ctx, janitor_, kUploadTotal * 4,
                                       VK_BUFFER_USAGE_TRANSFER_DST_BIT, Memory::Host);

        // Rendering: one classic pass (cleared, left ready for a copy) serves Shadows and
        // Lighting, and GBuffer where there is no dynamic rendering.
        rectLayout_ = createRectLayout(ctx, janitor_);
        indices_ = createQuadIndices(ctx, janitor_);
        pass_ = createColorPass(ctx, janitor_);
        shadows_ = createColorTarget(ctx, janitor_);
        gbuffer_ = createColorTarget(ctx, janitor_);
        lighting_ = createColorTarget(ctx, janitor_);
        shadowsFb_ = createFramebuffer(ctx, janitor_, pass_, {shadows_.image.view});
        lightingFb_ = createFramebuffer(ctx, janitor_, pass_, {lighting_.image.view});
        replacePipeline_ = createGraphicsPipeline(ctx, janitor_,
                                                  {.vertex = spirv::rectVert(),
                                                   .fragment = spirv::colorFrag(),
                                                   .layout = rectLayout_,
                                                   .renderPass = pass_});
        additivePipeline_ = createGraphicsPipeline(ctx, janitor_,
                                                   {.vertex = spirv::rectVert(),
                                                    .fragment = spirv::colorFrag(),
                                                    .layout = rectLayout_,
                                                    .renderPass = pass_,
                                                    .additive = true});
        if (split_) {
            dynamicPipeline_ = createGraphicsPipeline(ctx, janitor_,
                                                      {.vertex = spirv::rectVert(),
                                                       .fragment = spirv::colorFrag(),
                                                       .layout = rectLayout_,
                                                       .colorFormat = kColorFormat});
        } else {
            gbufferFb_ = createFramebuffer(ctx, janitor_, pass_, {gbuffer_.image.view});
        }

        asyncPool_ = createCommandPool(ctx, janitor_, async_.family);
        mainPool_ = createCommandPool(ctx, janitor_, ctx.main.family);
        asyncCmd_ = allocateCommandBuffers(ctx, asyncPool_, 1)[0];
        std::vector<VkCommandBuffer> cmds = allocateCommandBuffers(ctx, mainPool_, 3);
        mainCmds_ = {cmds[0], cmds[1], cmds[2]};
        shadowsSecondary_ =
            allocateCommandBuffers(ctx, mainPool_, 1, VK_COMMAND_BUFFER_LEVEL_SECONDARY)[0];
        particlesDone_ = createSemaphore(ctx, janitor_);
        asyncFence_ = createFence(ctx, janitor_);
        mainFence_ = createFence(ctx, janitor_);
        setName(ctx, VK_OBJECT_TYPE_COMMAND_BUFFER, handleBits(asyncCmd_), "game.async");
        setName(ctx, VK_OBJECT_TYPE_COMMAND_BUFFER, handleBits(mainCmds_[0]), "game.scene");
        setName(ctx, VK_OBJECT_TYPE_COMMAND_BUFFER, handleBits(mainCmds_[1]), "game.gbuffer_end");
        setName(ctx, VK_OBJECT_TYPE_COMMAND_BUFFER, handleBits(mainCmds_[2]), "game.compose");
        setName(ctx, VK_OBJECT_TYPE_BUFFER, handleBits(particles_.handle), "game.particles");
    }

    void frame(Context& ctx, uint32_t frameIndex) override {
        VK_CHECK(vkResetCommandPool(ctx.device, asyncPool_, 0));
        VK_CHECK(vkResetCommandPool(ctx.device, mainPool_, 0));
        const uint32_t step = frameIndex * kSaltStep;
        uint32_t* staging = staging_.as<uint32_t>();
        for (uint32_t i = 0; i < kUploadWords; ++i) {
            staging[i] = (frameIndex << 16) ^ (i * 2654435761u);
        }
        std::array<uint32_t, kUpdateWords> update{};
        for (uint32_t i = 0; i < kUpdateWords; ++i) {
            update[i] = 0x55504400u + i + frameIndex; // "UPD" + index
        }
        const LcgPush lcgPush{0, 0, kParticleSeed + frameIndex, kParticleIterations};

        recordParticles(ctx, lcgPush);
        recordScene(ctx, update, step);
        recordGBufferEnd(ctx, step);
        recordCompose(ctx, step);
        submit(ctx, frameIndex);

        verify(lcgPush, update, step);
    }

private:
    void beginPass(Context& ctx, VkCommandBuffer cmd, const Pass& pass) const {
        if (!labels_) {
            return;
        }
        const VkDebugUtilsLabelEXT label{
            .sType = VK_STRUCTURE_TYPE_DEBUG_UTILS_LABEL_EXT,
            .pLabelName = pass.name,
            .color = {pass.color[0], pass.color[1], pass.color[2], pass.color[3]},
        };
        ctx.cmdBeginLabel(cmd, &label);
    }

    void endPass(Context& ctx, VkCommandBuffer cmd) const {
        if (labels_) {
            ctx.cmdEndLabel(cmd);
        }
    }

    // Particles, on the async queue: simulate, then integrate in place.
    void recordParticles(Context& ctx, const LcgPush& lcgPush) {
        VkCommandBuffer cmd = asyncCmd_;
        beginCommands(cmd);
        beginPass(ctx, cmd, kParticlesPass);
        bindCompute(cmd, lcg_, lcgSet_, &lcgPush, sizeof(lcgPush));
        vkCmdDispatch(cmd, kParticles / 64, 1, 1);
        memoryBarrier(cmd, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, VK_ACCESS_SHADER_WRITE_BIT,
                      VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT,
                      VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_SHADER_WRITE_BIT);
        const AddPush addPush{0, kParticles, kParticleAdd};
        bindCompute(cmd, add_, particlesAddSet_, &addPush, sizeof(addPush));
        vkCmdDispatch(cmd, kParticles / 64, 1, 1);
        endPass(ctx, cmd);
        endCommands(cmd);
    }

    // Upload, Shadows and the first half of GBuffer (with dynamic rendering).
    void recordScene(Context& ctx, const std::array<uint32_t, kUpdateWords>& update,
                     uint32_t step) {
        const VkCommandBufferInheritanceInfo inheritance{
            .sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_INHERITANCE_INFO,
            .renderPass = pass_,
            .subpass = 0,
            .framebuffer = shadowsFb_,
        };
        beginCommands(shadowsSecondary_,
                      VK_COMMAND_BUFFER_USAGE_RENDER_PASS_CONTINUE_BIT |
                          VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT,
                      &inheritance);
        vkCmdBindPipeline(shadowsSecondary_, VK_PIPELINE_BIND_POINT_GRAPHICS, replacePipeline_);
        setFullViewport(shadowsSecondary_);
        recordRects(shadowsSecondary_, rectLayout_, indices_.handle, 0, draws_, kShadowSalt + step,
                    Blend::Replace);
        endCommands(shadowsSecondary_);

        VkCommandBuffer cmd = mainCmds_[0];
        beginCommands(cmd);
        beginPass(ctx, cmd, kUploadPass);
        // The previous frame's readback of `uploaded_` came before these writes.
        memoryBarrier(cmd, VK_PIPELINE_STAGE_TRANSFER_BIT, 0, VK_PIPELINE_STAGE_TRANSFER_BIT,
                      VK_ACCESS_TRANSFER_WRITE_BIT);
        const VkBufferCopy upload{0, 0, kUploadWords * 4};
        vkCmdCopyBuffer(cmd, staging_.handle, uploaded_.handle, 1, &upload);
        vkCmdUpdateBuffer(cmd, uploaded_.handle, kUploadWords * 4, kUpdateWords * 4, update.data());
        endPass(ctx, cmd);

        beginPass(ctx, cmd, kShadowsPass);
        const VkClearValue shadowClear = clearValueOf(kShadowClear);
        const VkRenderPassBeginInfo shadows{
            .sType = VK_STRUCTURE_TYPE_RENDER_PASS_BEGIN_INFO,
            .renderPass = pass_,
            .framebuffer = shadowsFb_,
            .renderArea = {{0, 0}, {kTargetSize, kTargetSize}},
            .clearValueCount = 1,
            .pClearValues = &shadowClear,
        };
        vkCmdBeginRenderPass(cmd, &shadows, VK_SUBPASS_CONTENTS_SECONDARY_COMMAND_BUFFERS);
        vkCmdExecuteCommands(cmd, 1, &shadowsSecondary_);
        vkCmdEndRenderPass(cmd);
        endPass(ctx, cmd);

        if (split_) {
            // GBuffer's label stays open into the next command buffer, like its render pass.
            beginPass(ctx, cmd, kGBufferPass);
            // The previous frame's copy read the image; the clear must come after it.
            imageBarrier(cmd, gbuffer_.image, VK_IMAGE_LAYOUT_UNDEFINED,
                         VK_IMAGE_LAYOUT_COLOR_ATTACHMENT_OPTIMAL, VK_PIPELINE_STAGE_TRANSFER_BIT,
                         0, VK_PIPELINE_STAGE_COLOR_ATTACHMENT_OUTPUT_BIT,
                         VK_ACCESS_COLOR_ATTACHMENT_READ_BIT |
                             VK_ACCESS_COLOR_ATTACHMENT_WRITE_BIT);
            renderGBuffer(cmd, VK_RENDERING_SUSPENDING_BIT, 0, draws_ / 2, step);
        }
        endCommands(cmd);
    }

    // The rest of GBuffer (all of it without dynamic rendering), alone in its command buffer:
    // Mesa before 23.1 crashes at a label begun in a command buffer after a label ended there
    // that began in another, so nothing is labelled after GBuffer's end here.
    void recordGBufferEnd(Context& ctx, uint32_t step) {
        VkCommandBuffer cmd = mainCmds_[1];
        beginCommands(cmd);
        if (split_) {
            renderGBuffer(cmd, VK_RENDERING_RESUMING_BIT, draws_ / 2, draws_ - draws_ / 2, step);
            imageBarrier(cmd, gbuffer_.image, VK_IMAGE_LAYOUT_COLOR_ATTACHMENT_OPTIMAL,
                         VK_IMAGE_LAYOUT_TRANSFER_SRC_OPTIMAL,
                         VK_PIPELINE_STAGE_COLOR_ATTACHMENT_OUTPUT_BIT,
                         VK_ACCESS_COLOR_ATTACHMENT_WRITE_BIT, VK_PIPELINE_STAGE_TRANSFER_BIT,
                         VK_ACCESS_TRANSFER_READ_BIT);
        } else {
            beginPass(ctx, cmd, kGBufferPass);
            const VkClearValue clear = clearValueOf(kGBufferClear);
            const VkRenderPassBeginInfo gbuffer{
                .sType = VK_STRUCTURE_TYPE_RENDER_PASS_BEGIN_INFO,
                .renderPass = pass_,
                .framebuffer = gbufferFb_,
                .renderArea = {{0, 0}, {kTargetSize, kTargetSize}},
                .clearValueCount = 1,
                .pClearValues = &clear,
            };
            vkCmdBeginRenderPass(cmd, &gbuffer, VK_SUBPASS_CONTENTS_INLINE);
            vkCmdBindPipeline(cmd, VK_PIPELINE_BIND_POINT_GRAPHICS, replacePipeline_);
            setFullViewport(cmd);
            recordRects(cmd, rectLayout_, indices_.handle, 0, draws_, kGBufferSalt + step,
                        Blend::Replace);
            vkCmdEndRenderPass(cmd);
        }
        endPass(ctx, cmd); // GBuffer
        endCommands(cmd);
    }

    // Lighting, PostProcess and Readback.
    void recordCompose(Context& ctx, uint32_t step) {
        VkCommandBuffer cmd = mainCmds_[2];
        beginCommands(cmd);
        beginPass(ctx, cmd, kLightingPass);
        const VkClearValue lightClear = clearValueOf(kLightClear);
        const VkRenderPassBeginInfo lighting{
            .sType = VK_STRUCTURE_TYPE_RENDER_PASS_BEGIN_INFO,
            .renderPass = pass_,
            .framebuffer = lightingFb_,
            .renderArea = {{0, 0}, {kTargetSize, kTargetSize}},
            .clearValueCount = 1,
            .pClearValues = &lightClear,
        };
        vkCmdBeginRenderPass(cmd, &lighting, VK_SUBPASS_CONTENTS_INLINE);
        vkCmdBindPipeline(cmd, VK_PIPELINE_BIND_POINT_GRAPHICS, additivePipeline_);
        setFullViewport(cmd);
        recordRects(cmd, rectLayout_, indices_.handle, 0, draws_, kLightSalt + step, Blend::Add);
        vkCmdEndRenderPass(cmd);
        endPass(ctx, cmd);

        beginPass(ctx, cmd, kPostPass);
        // Particles' writes arrive through the semaphore; `post_` was last read by the previous
        // frame's readback.
        memoryBarrier(cmd, VK_PIPELINE_STAGE_TRANSFER_BIT, 0, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT,
                      VK_ACCESS_SHADER_WRITE_BIT);
        const TransformPush transformPush{kParticles};
        bindCompute(cmd, transform_, transformSet_, &transformPush, sizeof(transformPush));
        vkCmdDispatch(cmd, kParticles / 64, 1, 1);
        memoryBarrier(cmd, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, VK_ACCESS_SHADER_WRITE_BIT,
                      VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT,
                      VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_SHADER_WRITE_BIT);
        const AddPush addPush{0, kParticles, kPostAdd};
        bindCompute(cmd, add_, postAddSet_, &addPush, sizeof(addPush));
        vkCmdDispatch(cmd, kParticles / 64, 1, 1);
        endPass(ctx, cmd);

        beginPass(ctx, cmd, kReadbackPass);
        memoryBarrier(cmd, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT | VK_PIPELINE_STAGE_TRANSFER_BIT,
                      VK_ACCESS_SHADER_WRITE_BIT | VK_ACCESS_TRANSFER_WRITE_BIT,
                      VK_PIPELINE_STAGE_TRANSFER_BIT, VK_ACCESS_TRANSFER_READ_BIT);
        copyImageToBuffer(cmd, shadows_.image, shadows_.readback.handle);
        copyImageToBuffer(cmd, gbuffer_.image, gbuffer_.readback.handle);
        copyImageToBuffer(cmd, lighting_.image, lighting_.readback.handle);
        const VkBufferCopy post{0, 0, kParticles * 4};
        vkCmdCopyBuffer(cmd, post_.handle, postReadback_.handle, 1, &post);
        const VkBufferCopy uploaded{0, 0, kUploadTotal * 4};
        vkCmdCopyBuffer(cmd, uploaded_.handle, uploadReadback_.handle, 1, &uploaded);
        transferToHostBarrier(cmd);
        endPass(ctx, cmd);
        endCommands(cmd);
    }

    void renderGBuffer(VkCommandBuffer cmd, VkRenderingFlags flags, uint32_t first, uint32_t count,
                       uint32_t step) {
        // Identical in both parts except for the flags; only the part that does not resume
        // clears.
        const VkRenderingAttachmentInfo color{
            .sType = VK_STRUCTURE_TYPE_RENDERING_ATTACHMENT_INFO,
            .imageView = gbuffer_.image.view,
            .imageLayout = VK_IMAGE_LAYOUT_COLOR_ATTACHMENT_OPTIMAL,
            .resolveMode = VK_RESOLVE_MODE_NONE,
            .loadOp = VK_ATTACHMENT_LOAD_OP_CLEAR,
            .storeOp = VK_ATTACHMENT_STORE_OP_STORE,
            .clearValue = clearValueOf(kGBufferClear),
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
        vkCmdBindPipeline(cmd, VK_PIPELINE_BIND_POINT_GRAPHICS, dynamicPipeline_);
        setFullViewport(cmd);
        recordRects(cmd, rectLayout_, indices_.handle, first, count, kGBufferSalt + step,
                    Blend::Replace);
        vkCmdEndRendering(cmd);
    }

    // Two vkQueueSubmit calls inside the queue label `Frame` (one per queue in use); `Frame N`
    // with --numbered-frames, every workload then a new one each frame.
    void submit(Context& ctx, uint32_t frameIndex) {
        const std::string frameName =
            ctx.options.numberedFrames ? "Frame " + std::to_string(frameIndex) : "Frame";
        const VkDebugUtilsLabelEXT frameLabel{
            .sType = VK_STRUCTURE_TYPE_DEBUG_UTILS_LABEL_EXT,
            .pLabelName = frameName.c_str(),
        };
        const bool twoQueues = async_.queue != ctx.main.queue;
        if (labels_) {
            ctx.queueBeginLabel(async_.queue, &frameLabel);
        }
        const VkSubmitInfo particles{
            .sType = VK_STRUCTURE_TYPE_SUBMIT_INFO,
            .commandBufferCount = 1,
            .pCommandBuffers = &asyncCmd_,
            .signalSemaphoreCount = 1,
            .pSignalSemaphores = &particlesDone_,
        };
        VK_CHECK(vkQueueSubmit(async_.queue, 1, &particles, asyncFence_));
        if (labels_ && twoQueues) {
            ctx.queueEndLabel(async_.queue);
            ctx.queueBeginLabel(ctx.main.queue, &frameLabel);
        }

        const VkFrameBoundaryEXT boundary{
            .sType = VK_STRUCTURE_TYPE_FRAME_BOUNDARY_EXT,
            .flags = VK_FRAME_BOUNDARY_FRAME_END_BIT_EXT,
            .frameID = frameIndex,
        };
        const VkPipelineStageFlags waitStage = VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT;
        const VkSubmitInfo rest{
            .sType = VK_STRUCTURE_TYPE_SUBMIT_INFO,
            .pNext = ctx.features.frameBoundary ? &boundary : nullptr,
            .waitSemaphoreCount = 1,
            .pWaitSemaphores = &particlesDone_,
            .pWaitDstStageMask = &waitStage,
            .commandBufferCount = static_cast<uint32_t>(mainCmds_.size()),
            .pCommandBuffers = mainCmds_.data(),
        };
        const VkResult result = vkQueueSubmit(ctx.main.queue, 1, &rest, mainFence_);
        if (labels_) {
            ctx.queueEndLabel(ctx.main.queue);
        }
        VK_CHECK(result);
        ctx.frameEnded = ctx.features.frameBoundary;
        waitFence(ctx, asyncFence_);
        waitFence(ctx, mainFence_);
    }

    void verify(const LcgPush& lcgPush, const std::array<uint32_t, kUpdateWords>& update,
                uint32_t step) const {
        const LcgModel model(lcgPush.iterations);
        std::vector<uint32_t> post(kParticles);
        for (uint32_t i = 0; i < kParticles; ++i) {
            const uint32_t particle = model(lcgPush.seed, i) + kParticleAdd + i;
            post[i] = particle * 3 + 7 + kPostAdd + i;
        }
        expectWords("Particles then PostProcess", postReadback_.as<uint32_t>(), post.data(),
                    kParticles);

        std::vector<uint32_t> uploaded(staging_.as<uint32_t>(),
                                       staging_.as<uint32_t>() + kUploadWords);
        uploaded.insert(uploaded.end(), update.begin(), update.end());
        expectWords("Upload", uploadReadback_.as<uint32_t>(), uploaded.data(), kUploadTotal);

        Pixels shadows = solidPixels(kShadowClear);
        drawRects(shadows, 0, draws_, kShadowSalt + step, Blend::Replace);
        expectPixels("Shadows (drawn by a secondary)", shadows_.readback.mapped, shadows);
        Pixels gbuffer = solidPixels(kGBufferClear);
        drawRects(gbuffer, 0, draws_, kGBufferSalt + step, Blend::Replace);
        expectPixels(split_ ? "GBuffer (split over two command buffers)" : "GBuffer",
                     gbuffer_.readback.mapped, gbuffer);
        Pixels lighting = solidPixels(kLightClear);
        drawRects(lighting, 0, draws_, kLightSalt + step, Blend::Add);
        expectPixels("Lighting", lighting_.readback.mapped, lighting);
    }

    Janitor janitor_;
    uint32_t draws_ = 0;
    bool split_ = false;
    bool labels_ = false;
    QueueInfo async_;
    ComputeProgram lcg_;
    ComputeProgram add_;
    ComputeProgram transform_;
    Buffer particles_;
    Buffer post_;
    Buffer postReadback_;
    VkDescriptorSet lcgSet_ = VK_NULL_HANDLE;
    VkDescriptorSet particlesAddSet_ = VK_NULL_HANDLE;
    VkDescriptorSet transformSet_ = VK_NULL_HANDLE;
    VkDescriptorSet postAddSet_ = VK_NULL_HANDLE;
    Buffer staging_;
    Buffer uploaded_;
    Buffer uploadReadback_;
    VkPipelineLayout rectLayout_ = VK_NULL_HANDLE;
    Buffer indices_;
    VkRenderPass pass_ = VK_NULL_HANDLE;
    ColorTarget shadows_;
    ColorTarget gbuffer_;
    ColorTarget lighting_;
    VkFramebuffer shadowsFb_ = VK_NULL_HANDLE;
    VkFramebuffer gbufferFb_ = VK_NULL_HANDLE;
    VkFramebuffer lightingFb_ = VK_NULL_HANDLE;
    VkPipeline replacePipeline_ = VK_NULL_HANDLE;
    VkPipeline additivePipeline_ = VK_NULL_HANDLE;
    VkPipeline dynamicPipeline_ = VK_NULL_HANDLE;
    VkCommandPool asyncPool_ = VK_NULL_HANDLE;
    VkCommandPool mainPool_ = VK_NULL_HANDLE;
    VkCommandBuffer asyncCmd_ = VK_NULL_HANDLE;
    std::array<VkCommandBuffer, 3> mainCmds_{};
    VkCommandBuffer shadowsSecondary_ = VK_NULL_HANDLE;
    VkSemaphore particlesDone_ = VK_NULL_HANDLE;
    VkFence asyncFence_ = VK_NULL_HANDLE;
    VkFence mainFence_ = VK_NULL_HANDLE;
};

} // namespace

std::unique_ptr<Scenario> makeGameScenario() {
    return std::make_unique<GameScenario>();
}

} // namespace wl
