// mesh_shader (named only): one render pass drawing with task and mesh shaders
// (VK_EXT_mesh_shader) and no vertex stage. kTaskGroups task workgroups of 32 invocations each
// launch two mesh workgroups of 32 invocations, each of which emits one triangle covering the
// target; the pass's pipeline statistics then have task and mesh shader invocations to count.

#include "errors.h"
#include "pipelines.h"
#include "raster.h"
#include "scenario.h"

namespace wl {

namespace {

constexpr Rgba kClear = {10, 20, 30, 40};
constexpr Rgba kDrawn = {200, 100, 50, 255}; // mesh_triangle.mesh's colour
constexpr uint32_t kTaskGroups = 4;

class MeshShaderScenario final : public Scenario {
public:
    void setup(Context& ctx) override {
        janitor_.attach(ctx.device);
        if (!ctx.hasGraphics()) {
            throw SkipScenario("needs a graphics queue");
        }
        if (!ctx.features.meshShader) {
            throw SkipScenario(ctx.features.meshShaderMissing);
        }
        layout_ = createPipelineLayout(ctx, janitor_, {}, 0, 0);
        pass_ = createColorPass(ctx, janitor_);
        target_ = createColorTarget(ctx, janitor_);
        framebuffer_ = createFramebuffer(ctx, janitor_, pass_, {target_.image.view});
        pipeline_ = createGraphicsPipeline(ctx, janitor_,
                                           {.fragment = spirv::colorFrag(),
                                            .task = spirv::meshGroupsTask(),
                                            .mesh = spirv::meshTriangleMesh(),
                                            .layout = layout_,
                                            .renderPass = pass_});
        pool_ = createCommandPool(ctx, janitor_, ctx.main.family);
        cmd_ = allocateCommandBuffers(ctx, pool_, 1)[0];
        fence_ = createFence(ctx, janitor_);
        expected_ = solidPixels(kDrawn);
    }

    void frame(Context& ctx, uint32_t) override {
        VK_CHECK(vkResetCommandPool(ctx.device, pool_, 0));
        beginCommands(cmd_);
        beginColorPass(cmd_, pass_, framebuffer_, kClear);
        vkCmdBindPipeline(cmd_, VK_PIPELINE_BIND_POINT_GRAPHICS, pipeline_);
        setFullViewport(cmd_);
        ctx.cmdDrawMeshTasks(cmd_, kTaskGroups, 1, 1);
        vkCmdEndRenderPass(cmd_);
        copyImageToBuffer(cmd_, target_.image, target_.readback.handle);
        transferToHostBarrier(cmd_);
        endCommands(cmd_);

        submitAndWait(ctx, ctx.main.queue, {&cmd_, 1}, fence_);
        expectPixels("mesh shader triangles", target_.readback.mapped, expected_);
    }

private:
    Janitor janitor_;
    VkPipelineLayout layout_ = VK_NULL_HANDLE;
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

std::unique_ptr<Scenario> makeMeshShaderScenario() {
    return std::make_unique<MeshShaderScenario>();
}

} // namespace wl
