// buffer_transfer: vkCmdFillBuffer, vkCmdUpdateBuffer and multi-region vkCmdCopyBuffer with
// fixed sizes, checked byte for byte against the same operations replayed on the host.

#include "errors.h"
#include "resources.h"
#include "scenario.h"

#include <cstring>
#include <vector>

namespace wl {

namespace {

constexpr VkDeviceSize kSize = 64 * 1024;
constexpr VkDeviceSize kUpdateOffset = 256;
constexpr VkDeviceSize kUpdateBytes = 1024;
constexpr VkDeviceSize kSmallUpdateOffset = 40000;
constexpr uint32_t kSmallUpdate = 0xa1b2c3d4u;
constexpr VkBufferCopy kRegions[4] = {
    {0, 4096, 8192},
    {16384, 0, 4096},
    {kUpdateOffset, 32768, kUpdateBytes},
    {kSmallUpdateOffset - 4, 50000, 12},
};

void hostFill(std::vector<uint8_t>& bytes, size_t offset, size_t size, uint32_t value) {
    for (size_t i = offset; i < offset + size; i += 4) {
        std::memcpy(&bytes[i], &value, 4);
    }
}

class BufferTransferScenario final : public Scenario {
public:
    void setup(Context& ctx) override {
        janitor_.attach(ctx.device);
        constexpr VkBufferUsageFlags usage =
            VK_BUFFER_USAGE_TRANSFER_SRC_BIT | VK_BUFFER_USAGE_TRANSFER_DST_BIT;
        source_ = createBuffer(ctx, janitor_, kSize, usage, Memory::Device);
        destination_ = createBuffer(ctx, janitor_, kSize, usage, Memory::Device);
        readback_ =
            createBuffer(ctx, janitor_, 2 * kSize, VK_BUFFER_USAGE_TRANSFER_DST_BIT, Memory::Host);
        pool_ = createCommandPool(ctx, janitor_, ctx.main.family);
        cmd_ = allocateCommandBuffers(ctx, pool_, 1)[0];
        fence_ = createFence(ctx, janitor_);

        update_.resize(kUpdateBytes);
        for (size_t i = 0; i < update_.size(); ++i) {
            update_[i] = static_cast<uint8_t>(i * 7 + 3);
        }
        // Replay on the host, in the same order as the commands below.
        std::vector<uint8_t> source(kSize), destination(kSize);
        hostFill(source, 0, 16384, 0x01020304u);
        hostFill(source, 16384, kSize - 16384, 0xcafebabeu);
        hostFill(destination, 0, kSize, 0x11111111u);
        std::memcpy(&source[kUpdateOffset], update_.data(), kUpdateBytes);
        std::memcpy(&source[kSmallUpdateOffset], &kSmallUpdate, 4);
        for (const VkBufferCopy& r : kRegions) {
            std::memcpy(&destination[r.dstOffset], &source[r.srcOffset], r.size);
        }
        expected_ = destination;
        expected_.insert(expected_.end(), source.begin(), source.end());
    }

    void frame(Context& ctx, uint32_t) override {
        VK_CHECK(vkResetCommandPool(ctx.device, pool_, 0));
        beginCommands(cmd_);
        // The previous frame's copies read both buffers before these writes.
        memoryBarrier(cmd_, VK_PIPELINE_STAGE_TRANSFER_BIT, 0, VK_PIPELINE_STAGE_TRANSFER_BIT,
                      VK_ACCESS_TRANSFER_WRITE_BIT);
        vkCmdFillBuffer(cmd_, source_.handle, 0, 16384, 0x01020304u);
        vkCmdFillBuffer(cmd_, source_.handle, 16384, VK_WHOLE_SIZE, 0xcafebabeu);
        vkCmdFillBuffer(cmd_, destination_.handle, 0, VK_WHOLE_SIZE, 0x11111111u);
        transferBarrier();
        vkCmdUpdateBuffer(cmd_, source_.handle, kUpdateOffset, kUpdateBytes, update_.data());
        vkCmdUpdateBuffer(cmd_, source_.handle, kSmallUpdateOffset, 4, &kSmallUpdate);
        transferBarrier();
        vkCmdCopyBuffer(cmd_, source_.handle, destination_.handle, 4, kRegions);
        transferBarrier();
        const VkBufferCopy destinationOut{0, 0, kSize};
        const VkBufferCopy sourceOut{0, kSize, kSize};
        vkCmdCopyBuffer(cmd_, destination_.handle, readback_.handle, 1, &destinationOut);
        vkCmdCopyBuffer(cmd_, source_.handle, readback_.handle, 1, &sourceOut);
        transferToHostBarrier(cmd_);
        endCommands(cmd_);

        submitAndWait(ctx, ctx.main.queue, {&cmd_, 1}, fence_);
        expectBytes("copy destination", readback_.mapped, expected_.data(), kSize);
        expectBytes("fill/update source", readback_.as<uint8_t>() + kSize, expected_.data() + kSize,
                    kSize);
    }

private:
    void transferBarrier() {
        memoryBarrier(cmd_, VK_PIPELINE_STAGE_TRANSFER_BIT, VK_ACCESS_TRANSFER_WRITE_BIT,
                      VK_PIPELINE_STAGE_TRANSFER_BIT,
                      VK_ACCESS_TRANSFER_READ_BIT | VK_ACCESS_TRANSFER_WRITE_BIT);
    }

    Janitor janitor_;
    Buffer source_;
    Buffer destination_;
    Buffer readback_;
    VkCommandPool pool_ = VK_NULL_HANDLE;
    VkCommandBuffer cmd_ = VK_NULL_HANDLE;
    VkFence fence_ = VK_NULL_HANDLE;
    std::vector<uint8_t> update_;
    std::vector<uint8_t> expected_;
};

} // namespace

std::unique_ptr<Scenario> makeBufferTransferScenario() {
    return std::make_unique<BufferTransferScenario>();
}

} // namespace wl
