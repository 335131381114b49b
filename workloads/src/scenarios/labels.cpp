// labels: debug-utils labels nested three deep around transfers and dispatches, a label begun
// in one command buffer and ended in the next one of the same submission, queue labels around
// the submission, and VK_EXT_debug_marker regions when the device has that extension.

#include "errors.h"
#include "kernels.h"
#include "pipelines.h"
#include "resources.h"
#include "scenario.h"

#include <array>
#include <vector>

namespace wl {

namespace {

constexpr uint32_t kAddWords = 1024;
constexpr uint32_t kUpdateWords = 64;
constexpr uint32_t kWords = kAddWords + kUpdateWords;
constexpr uint32_t kFillValue = 7;
constexpr uint32_t kLabelAdd = 5;
constexpr uint32_t kMarkerAdd = 100;

class LabelsScenario final : public Scenario {
public:
    void setup(Context& ctx) override {
        janitor_.attach(ctx.device);
        if (!ctx.features.debugUtils) {
            throw SkipScenario("needs VK_EXT_debug_utils");
        }
        program_ = createComputeProgram(ctx, janitor_, spirv::addComp(), 1, sizeof(AddPush));
        data_ = createBuffer(ctx, janitor_, kWords * 4,
                             VK_BUFFER_USAGE_STORAGE_BUFFER_BIT | VK_BUFFER_USAGE_TRANSFER_SRC_BIT |
                                 VK_BUFFER_USAGE_TRANSFER_DST_BIT,
                             Memory::Device);
        readback_ =
            createBuffer(ctx, janitor_, kWords * 4, VK_BUFFER_USAGE_TRANSFER_DST_BIT, Memory::Host);
        set_ = createStorageSet(ctx, janitor_, program_.setLayout, {data_.handle});
        pool_ = createCommandPool(ctx, janitor_, ctx.main.family);
        std::vector<VkCommandBuffer> cmds = allocateCommandBuffers(ctx, pool_, 2);
        cmds_ = {cmds[0], cmds[1]};
        fence_ = createFence(ctx, janitor_);
        setName(ctx, VK_OBJECT_TYPE_BUFFER, handleBits(data_.handle), "labels.data");
        setName(ctx, VK_OBJECT_TYPE_COMMAND_BUFFER, handleBits(cmds_[0]), "labels.first");
        setName(ctx, VK_OBJECT_TYPE_COMMAND_BUFFER, handleBits(cmds_[1]), "labels.second");

        for (uint32_t i = 0; i < kUpdateWords; ++i) {
            update_.push_back(0x4c414200u + i); // "LAB" + index
        }
        const bool markers = ctx.features.debugMarker;
        for (uint32_t i = 0; i < kAddWords; ++i) {
            uint32_t value = kFillValue + kLabelAdd + i;
            if (markers) {
                value += kMarkerAdd + i;
            }
            expected_.push_back(value);
        }
        expected_.insert(expected_.end(), update_.begin(), update_.end());
    }

    void frame(Context& ctx, uint32_t) override {
        VK_CHECK(vkResetCommandPool(ctx.device, pool_, 0));
        VkCommandBuffer first = cmds_[0];
        VkCommandBuffer second = cmds_[1];

        beginCommands(first);
        beginLabel(ctx, first, "labels.frame", 0.9f);
        beginLabel(ctx, first, "labels.transfers", 0.5f);
        // The previous frame's download read the buffer before these writes.
        memoryBarrier(first, VK_PIPELINE_STAGE_TRANSFER_BIT, 0, VK_PIPELINE_STAGE_TRANSFER_BIT,
                      VK_ACCESS_TRANSFER_WRITE_BIT);
        vkCmdFillBuffer(first, data_.handle, 0, kAddWords * 4, kFillValue);
        vkCmdUpdateBuffer(first, data_.handle, kAddWords * 4, kUpdateWords * 4, update_.data());
        const VkDebugUtilsLabelEXT done{
            .sType = VK_STRUCTURE_TYPE_DEBUG_UTILS_LABEL_EXT,
            .pLabelName = "labels.transfers.done",
        };
        ctx.cmdInsertLabel(first, &done);
        ctx.cmdEndLabel(first);

        memoryBarrier(first, VK_PIPELINE_STAGE_TRANSFER_BIT, VK_ACCESS_TRANSFER_WRITE_BIT,
                      VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT,
                      VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_SHADER_WRITE_BIT);
        beginLabel(ctx, first, "labels.compute", 0.3f);
        beginLabel(ctx, first, "labels.compute.dispatch", 0.1f);
        const AddPush labelPush{0, kAddWords, kLabelAdd};
        bindCompute(first, program_, set_, &labelPush, sizeof(labelPush));
        vkCmdDispatch(first, kAddWords / 64, 1, 1);
        ctx.cmdEndLabel(first);
        ctx.cmdEndLabel(first);

        if (ctx.features.debugMarker) {
            memoryBarrier(first, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, VK_ACCESS_SHADER_WRITE_BIT,
                          VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT,
                          VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_SHADER_WRITE_BIT);
            beginMarker(ctx, first, "marker.outer");
            beginMarker(ctx, first, "marker.inner");
            const VkDebugMarkerMarkerInfoEXT point{
                .sType = VK_STRUCTURE_TYPE_DEBUG_MARKER_MARKER_INFO_EXT,
                .pMarkerName = "marker.point",
            };
            ctx.cmdMarkerInsert(first, &point);
            const AddPush markerPush{0, kAddWords, kMarkerAdd};
            vkCmdPushConstants(first, program_.layout, VK_SHADER_STAGE_COMPUTE_BIT, 0,
                               sizeof(markerPush), &markerPush);
            vkCmdDispatch(first, kAddWords / 64, 1, 1);
            ctx.cmdMarkerEnd(first);
            ctx.cmdMarkerEnd(first);
        }
        // Left open here and closed by the next command buffer of the same submission.
        beginLabel(ctx, first, "labels.cross", 0.7f);
        endCommands(first);

        beginCommands(second);
        memoryBarrier(second, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, VK_ACCESS_SHADER_WRITE_BIT,
                      VK_PIPELINE_STAGE_TRANSFER_BIT, VK_ACCESS_TRANSFER_READ_BIT);
        const VkBufferCopy region{0, 0, kWords * 4};
        vkCmdCopyBuffer(second, data_.handle, readback_.handle, 1, &region);
        transferToHostBarrier(second);
        ctx.cmdEndLabel(second); // labels.cross
        ctx.cmdEndLabel(second); // labels.frame
        endCommands(second);

        const VkDebugUtilsLabelEXT queueLabel{
            .sType = VK_STRUCTURE_TYPE_DEBUG_UTILS_LABEL_EXT,
            .pLabelName = "labels.queue",
        };
        const VkDebugUtilsLabelEXT submitLabel{
            .sType = VK_STRUCTURE_TYPE_DEBUG_UTILS_LABEL_EXT,
            .pLabelName = "labels.submit",
        };
        ctx.queueBeginLabel(ctx.main.queue, &queueLabel);
        ctx.queueInsertLabel(ctx.main.queue, &submitLabel);
        const VkSubmitInfo submit{
            .sType = VK_STRUCTURE_TYPE_SUBMIT_INFO,
            .commandBufferCount = 2,
            .pCommandBuffers = cmds_.data(),
        };
        const VkResult result = vkQueueSubmit(ctx.main.queue, 1, &submit, fence_);
        ctx.queueEndLabel(ctx.main.queue);
        VK_CHECK(result);
        waitFence(ctx, fence_);

        expectWords("work inside labels", readback_.as<uint32_t>(), expected_.data(), kWords);
    }

private:
    static void beginLabel(Context& ctx, VkCommandBuffer cmd, const char* name, float shade) {
        const VkDebugUtilsLabelEXT label{
            .sType = VK_STRUCTURE_TYPE_DEBUG_UTILS_LABEL_EXT,
            .pLabelName = name,
            .color = {shade, 1.0f - shade, 0.5f, 1.0f},
        };
        ctx.cmdBeginLabel(cmd, &label);
    }

    static void beginMarker(Context& ctx, VkCommandBuffer cmd, const char* name) {
        const VkDebugMarkerMarkerInfoEXT marker{
            .sType = VK_STRUCTURE_TYPE_DEBUG_MARKER_MARKER_INFO_EXT,
            .pMarkerName = name,
        };
        ctx.cmdMarkerBegin(cmd, &marker);
    }

    Janitor janitor_;
    ComputeProgram program_;
    Buffer data_;
    Buffer readback_;
    VkDescriptorSet set_ = VK_NULL_HANDLE;
    VkCommandPool pool_ = VK_NULL_HANDLE;
    std::array<VkCommandBuffer, 2> cmds_{};
    VkFence fence_ = VK_NULL_HANDLE;
    std::vector<uint32_t> update_;
    std::vector<uint32_t> expected_;
};

} // namespace

std::unique_ptr<Scenario> makeLabelsScenario() {
    return std::make_unique<LabelsScenario>();
}

} // namespace wl
