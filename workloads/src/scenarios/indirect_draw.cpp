// indirect_draw: draws and a dispatch whose parameters live in buffers.
//
// One render pass holds vkCmdDrawIndirect (2 draws), vkCmdDrawIndexedIndirect (1 draw) and
// vkCmdDrawIndirectCount whose count (3 of at most 8) and draw commands a compute shader wrote
// just before the pass. Each draw fills one cell of the rectangle grid of raster.h, so the image
// shows exactly which draws ran: cells 0..5 drawn, the five commands past the count not.
//
// Outside the pass, one secondary command buffer holding a vkCmdDispatchIndirect (4, 1, 1) of
// add.comp is executed twice by the primary; the read-modify-write shows both executions.

#include "errors.h"
#include "kernels.h"
#include "pipelines.h"
#include "raster.h"
#include "scenario.h"

#include <cstring>
#include <vector>

namespace wl {

namespace {

constexpr Rgba kClear = {16, 32, 48, 255};
constexpr uint32_t kSalt = 9;
// Draw numbering: 0..1 vkCmdDrawIndirect, 2 vkCmdDrawIndexedIndirect, 3.. vkCmdDrawIndirectCount.
constexpr uint32_t kPlainDraws = 2;
constexpr uint32_t kIndexedFirst = kPlainDraws;
constexpr uint32_t kCountFirst = kIndexedFirst + 1;
constexpr uint32_t kCountDraws = 3;
constexpr uint32_t kMaxCountDraws = 8;
constexpr uint32_t kDrawn = kCountFirst + kCountDraws;
// Rectangles for every command the count buffer could allow, so that a count read wrongly
// draws visible cells.
constexpr uint32_t kRects = kCountFirst + kMaxCountDraws;

constexpr VkDispatchIndirectCommand kDispatchArgs = {4, 1, 1};
constexpr uint32_t kElements = kDispatchArgs.x * 64;
constexpr AddPush kAddPush = {0, kElements, 0x1000};

// Push constants of shaders/indirect_args.comp.
struct ArgsPush {
    uint32_t first;
    uint32_t count;
    uint32_t slots;
};

// Layout of the host-written draw parameter buffer.
constexpr VkDeviceSize kIndexedOffset = kPlainDraws * sizeof(VkDrawIndirectCommand);
constexpr VkDeviceSize kDrawArgsBytes = kIndexedOffset + sizeof(VkDrawIndexedIndirectCommand);

class IndirectDrawScenario final : public Scenario {
public:
    void setup(Context& ctx) override {
        janitor_.attach(ctx.device);
        if (!ctx.hasGraphics()) {
            throw SkipScenario("needs a graphics queue");
        }
        if (!ctx.features.multiDrawIndirect) {
            throw SkipScenario("needs the multiDrawIndirect feature");
        }
        if (!ctx.features.drawIndirectCount) {
            throw SkipScenario("needs the drawIndirectCount feature (Vulkan 1.2)");
        }
        VkDevice device = ctx.device;

        // The rectangle table the vertex shader reads.
        rects_ = createBuffer(ctx, janitor_, kRects * sizeof(RectPush),
                              VK_BUFFER_USAGE_STORAGE_BUFFER_BIT, Memory::Host);
        for (uint32_t d = 0; d < kRects; ++d) {
            rects_.as<RectPush>()[d] = rectFor(d, kSalt, Blend::Replace);
        }
        const VkDescriptorSetLayoutBinding binding{
            .binding = 0,
            .descriptorType = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER,
            .descriptorCount = 1,
            .stageFlags = VK_SHADER_STAGE_VERTEX_BIT,
        };
        const VkDescriptorSetLayoutCreateInfo setInfo{
            .sType = VK_STRUCTURE_TYPE_DESCRIPTOR_SET_LAYOUT_CREATE_INFO,
            .bindingCount = 1,
            .pBindings = &binding,
        };
        VK_CHECK(vkCreateDescriptorSetLayout(device, &setInfo, nullptr, &rectSetLayout_));
        janitor_.defer(
            [device, l = rectSetLayout_] { vkDestroyDescriptorSetLayout(device, l, nullptr); });
        layout_ = createPipelineLayout(ctx, janitor_, {rectSetLayout_}, 0, 0);
        rectSet_ = createStorageSet(ctx, janitor_, rectSetLayout_, {rects_.handle});

        pass_ = createColorPass(ctx, janitor_);
        target_ = createColorTarget(ctx, janitor_);
        framebuffer_ = createFramebuffer(ctx, janitor_, pass_, {target_.image.view});
        pipeline_ = createGraphicsPipeline(ctx, janitor_,
                                           {.vertex = spirv::indirectRectVert(),
                                            .fragment = spirv::colorFrag(),
                                            .layout = layout_,
                                            .renderPass = pass_});
        indices_ = createQuadIndices(ctx, janitor_);

        // Parameters the host writes once: two plain draws, then one indexed draw.
        drawArgs_ = createBuffer(ctx, janitor_, kDrawArgsBytes, VK_BUFFER_USAGE_INDIRECT_BUFFER_BIT,
                                 Memory::Host);
        auto* plain = drawArgs_.as<VkDrawIndirectCommand>();
        for (uint32_t d = 0; d < kPlainDraws; ++d) {
            plain[d] = VkDrawIndirectCommand{6, 1, 6 * d, 0};
        }
        const VkDrawIndexedIndirectCommand indexed{6, 1, 0, int32_t(6 * kIndexedFirst), 0};
        std::memcpy(static_cast<char*>(drawArgs_.mapped) + kIndexedOffset, &indexed,
                    sizeof(indexed));

        // Parameters the GPU writes every frame: the count and the commands it selects from.
        argsProgram_ =
            createComputeProgram(ctx, janitor_, spirv::indirectArgsComp(), 2, sizeof(ArgsPush));
        countBuffer_ =
            createBuffer(ctx, janitor_, 16,
                         VK_BUFFER_USAGE_STORAGE_BUFFER_BIT | VK_BUFFER_USAGE_INDIRECT_BUFFER_BIT,
                         Memory::Device);
        countArgs_ =
            createBuffer(ctx, janitor_, kMaxCountDraws * sizeof(VkDrawIndirectCommand),
                         VK_BUFFER_USAGE_STORAGE_BUFFER_BIT | VK_BUFFER_USAGE_INDIRECT_BUFFER_BIT,
                         Memory::Device);
        argsSet_ = createStorageSet(ctx, janitor_, argsProgram_.setLayout,
                                    {countBuffer_.handle, countArgs_.handle});

        // The indirect dispatch in a secondary.
        addProgram_ = createComputeProgram(ctx, janitor_, spirv::addComp(), 1, sizeof(AddPush));
        dispatchArgs_ = createBuffer(ctx, janitor_, sizeof(kDispatchArgs),
                                     VK_BUFFER_USAGE_INDIRECT_BUFFER_BIT, Memory::Host);
        *dispatchArgs_.as<VkDispatchIndirectCommand>() = kDispatchArgs;
        output_ =
            createBuffer(ctx, janitor_, kElements * 4,
                         VK_BUFFER_USAGE_STORAGE_BUFFER_BIT | VK_BUFFER_USAGE_TRANSFER_SRC_BIT |
                             VK_BUFFER_USAGE_TRANSFER_DST_BIT,
                         Memory::Device);
        readback_ = createBuffer(ctx, janitor_, kElements * 4, VK_BUFFER_USAGE_TRANSFER_DST_BIT,
                                 Memory::Host);
        addSet_ = createStorageSet(ctx, janitor_, addProgram_.setLayout, {output_.handle});

        pool_ = createCommandPool(ctx, janitor_, ctx.main.family);
        primary_ = allocateCommandBuffers(ctx, pool_, 1)[0];
        secondary_ = allocateCommandBuffers(ctx, pool_, 1, VK_COMMAND_BUFFER_LEVEL_SECONDARY)[0];
        fence_ = createFence(ctx, janitor_);

        expectedImage_ = solidPixels(kClear);
        drawRects(expectedImage_, 0, kDrawn, kSalt, Blend::Replace);
        for (uint32_t i = 0; i < kElements; ++i) {
            expectedOutput_.push_back(2 * (kAddPush.value + i)); // two executions
        }
    }

    void frame(Context& ctx, uint32_t) override {
        VK_CHECK(vkResetCommandPool(ctx.device, pool_, 0));
        recordSecondary();

        VkCommandBuffer cmd = primary_;
        beginCommands(cmd);
        // The previous frame's indirect reads (and whatever else read the parameters) precede
        // this frame's shader writes to them.
        memoryBarrier(cmd, VK_PIPELINE_STAGE_DRAW_INDIRECT_BIT | VK_PIPELINE_STAGE_TRANSFER_BIT, 0,
                      VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, VK_ACCESS_SHADER_WRITE_BIT);
        const ArgsPush argsPush{kCountFirst, kCountDraws, kMaxCountDraws};
        bindCompute(cmd, argsProgram_, argsSet_, &argsPush, sizeof(argsPush));
        vkCmdDispatch(cmd, 1, 1, 1);
        memoryBarrier(cmd, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, VK_ACCESS_SHADER_WRITE_BIT,
                      VK_PIPELINE_STAGE_DRAW_INDIRECT_BIT, VK_ACCESS_INDIRECT_COMMAND_READ_BIT);

        beginColorPass(cmd, pass_, framebuffer_, kClear);
        vkCmdBindPipeline(cmd, VK_PIPELINE_BIND_POINT_GRAPHICS, pipeline_);
        vkCmdBindDescriptorSets(cmd, VK_PIPELINE_BIND_POINT_GRAPHICS, layout_, 0, 1, &rectSet_, 0,
                                nullptr);
        setFullViewport(cmd);
        vkCmdBindIndexBuffer(cmd, indices_.handle, 0, VK_INDEX_TYPE_UINT16);
        vkCmdDrawIndirect(cmd, drawArgs_.handle, 0, kPlainDraws, sizeof(VkDrawIndirectCommand));
        vkCmdDrawIndexedIndirect(cmd, drawArgs_.handle, kIndexedOffset, 1,
                                 sizeof(VkDrawIndexedIndirectCommand));
        vkCmdDrawIndirectCount(cmd, countArgs_.handle, 0, countBuffer_.handle, 0, kMaxCountDraws,
                               sizeof(VkDrawIndirectCommand));
        vkCmdEndRenderPass(cmd);
        copyImageToBuffer(cmd, target_.image, target_.readback.handle);

        // The previous frame's copy out of the buffer precedes this frame's fill.
        memoryBarrier(cmd, VK_PIPELINE_STAGE_TRANSFER_BIT, 0, VK_PIPELINE_STAGE_TRANSFER_BIT,
                      VK_ACCESS_TRANSFER_WRITE_BIT);
        vkCmdFillBuffer(cmd, output_.handle, 0, VK_WHOLE_SIZE, 0);
        memoryBarrier(cmd, VK_PIPELINE_STAGE_TRANSFER_BIT, VK_ACCESS_TRANSFER_WRITE_BIT,
                      VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT,
                      VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_SHADER_WRITE_BIT);
        vkCmdExecuteCommands(cmd, 1, &secondary_);
        memoryBarrier(cmd, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, VK_ACCESS_SHADER_WRITE_BIT,
                      VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT,
                      VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_SHADER_WRITE_BIT);
        vkCmdExecuteCommands(cmd, 1, &secondary_);
        memoryBarrier(cmd, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, VK_ACCESS_SHADER_WRITE_BIT,
                      VK_PIPELINE_STAGE_TRANSFER_BIT, VK_ACCESS_TRANSFER_READ_BIT);
        const VkBufferCopy region{0, 0, output_.size};
        vkCmdCopyBuffer(cmd, output_.handle, readback_.handle, 1, &region);
        transferToHostBarrier(cmd);
        endCommands(cmd);

        submitAndWait(ctx, ctx.main.queue, {&primary_, 1}, fence_);
        expectPixels("indirect, indexed indirect and indirect count draws", target_.readback.mapped,
                     expectedImage_);
        expectWords("indirect dispatch of a secondary executed twice", readback_.as<uint32_t>(),
                    expectedOutput_.data(), kElements);
    }

private:
    void recordSecondary() {
        const VkCommandBufferInheritanceInfo inheritance{
            .sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_INHERITANCE_INFO,
        };
        // SIMULTANEOUS_USE because the primary executes it twice.
        beginCommands(secondary_, VK_COMMAND_BUFFER_USAGE_SIMULTANEOUS_USE_BIT, &inheritance);
        bindCompute(secondary_, addProgram_, addSet_, &kAddPush, sizeof(kAddPush));
        vkCmdDispatchIndirect(secondary_, dispatchArgs_.handle, 0);
        endCommands(secondary_);
    }

    Janitor janitor_;
    Buffer rects_;
    VkDescriptorSetLayout rectSetLayout_ = VK_NULL_HANDLE;
    VkPipelineLayout layout_ = VK_NULL_HANDLE;
    VkDescriptorSet rectSet_ = VK_NULL_HANDLE;
    VkRenderPass pass_ = VK_NULL_HANDLE;
    ColorTarget target_;
    VkFramebuffer framebuffer_ = VK_NULL_HANDLE;
    VkPipeline pipeline_ = VK_NULL_HANDLE;
    Buffer indices_;
    Buffer drawArgs_;
    ComputeProgram argsProgram_;
    Buffer countBuffer_;
    Buffer countArgs_;
    VkDescriptorSet argsSet_ = VK_NULL_HANDLE;
    ComputeProgram addProgram_;
    Buffer dispatchArgs_;
    Buffer output_;
    Buffer readback_;
    VkDescriptorSet addSet_ = VK_NULL_HANDLE;
    VkCommandPool pool_ = VK_NULL_HANDLE;
    VkCommandBuffer primary_ = VK_NULL_HANDLE;
    VkCommandBuffer secondary_ = VK_NULL_HANDLE;
    VkFence fence_ = VK_NULL_HANDLE;
    Pixels expectedImage_;
    std::vector<uint32_t> expectedOutput_;
};

} // namespace

std::unique_ptr<Scenario> makeIndirectDrawScenario() {
    return std::make_unique<IndirectDrawScenario>();
}

} // namespace wl
