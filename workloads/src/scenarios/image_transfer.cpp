// image_transfer: buffer-to-image upload, image copy, nearest-filter blit, clears of colour,
// 4x MSAA and depth images, an MSAA resolve, and image-to-buffer downloads of everything,
// each compared byte for byte with a host model.

#include "errors.h"
#include "raster.h"
#include "resources.h"
#include "scenario.h"

#include <cstring>
#include <vector>

namespace wl {

namespace {

constexpr uint32_t kSize = 64;
constexpr VkDeviceSize kColorBytes = kSize * kSize * 4;
constexpr Rgba kCopyClear = {1, 2, 3, 4};
constexpr Rgba kBlitClear = {250, 128, 0, 255};
constexpr Rgba kMsaaClear = {64, 128, 191, 255};
constexpr VkOffset3D kCopySrc = {8, 8, 0};
constexpr VkOffset3D kCopyDst = {16, 40, 0};
constexpr VkExtent3D kCopyExtent = {32, 16, 1};

// Readback layout: one slot per downloaded image.
enum Slot { kSource, kCopied, kBlitted, kResolved, kDepth, kSlots };

Rgba patternAt(uint32_t x, uint32_t y) {
    return {static_cast<uint8_t>(x * 4), static_cast<uint8_t>(y * 4),
            static_cast<uint8_t>((x ^ y) * 3), static_cast<uint8_t>(255 - x)};
}

void put(Pixels& pixels, uint32_t x, uint32_t y, Rgba color) {
    std::memcpy(&pixels[(y * kSize + x) * 4], color.data(), 4);
}

class ImageTransferScenario final : public Scenario {
public:
    void setup(Context& ctx) override {
        janitor_.attach(ctx.device);
        constexpr VkImageUsageFlags transfer =
            VK_IMAGE_USAGE_TRANSFER_SRC_BIT | VK_IMAGE_USAGE_TRANSFER_DST_BIT;
        constexpr VkImageUsageFlags msaaUsage = transfer | VK_IMAGE_USAGE_COLOR_ATTACHMENT_BIT;
        VkImageFormatProperties msaaProps{};
        const VkResult msaaResult = vkGetPhysicalDeviceImageFormatProperties(
            ctx.physical, kColorFormat, VK_IMAGE_TYPE_2D, VK_IMAGE_TILING_OPTIMAL, msaaUsage, 0,
            &msaaProps);
        if (msaaResult != VK_SUCCESS || !(msaaProps.sampleCounts & VK_SAMPLE_COUNT_4_BIT)) {
            throw SkipScenario("needs 4x MSAA for R8G8B8A8_UNORM");
        }

        source_ = createImage(ctx, janitor_, {.usage = transfer, .createView = false});
        copied_ = createImage(ctx, janitor_, {.usage = transfer, .createView = false});
        blitted_ = createImage(ctx, janitor_, {.usage = transfer, .createView = false});
        resolved_ = createImage(ctx, janitor_, {.usage = msaaUsage, .createView = false});
        msaa_ = createImage(
            ctx, janitor_,
            {.samples = VK_SAMPLE_COUNT_4_BIT, .usage = msaaUsage, .createView = false});
        depthFormat_ = pickDepthFormat(ctx, VK_FORMAT_FEATURE_TRANSFER_SRC_BIT |
                                                VK_FORMAT_FEATURE_TRANSFER_DST_BIT);
        depth_ = createImage(ctx, janitor_,
                             {.format = depthFormat_,
                              .usage = transfer,
                              .aspect = VK_IMAGE_ASPECT_DEPTH_BIT,
                              .createView = false});

        upload_ = createBuffer(ctx, janitor_, kColorBytes, VK_BUFFER_USAGE_TRANSFER_SRC_BIT,
                               Memory::Host);
        readback_ = createBuffer(ctx, janitor_, kColorBytes * kSlots,
                                 VK_BUFFER_USAGE_TRANSFER_DST_BIT, Memory::Host);
        pool_ = createCommandPool(ctx, janitor_, ctx.main.family);
        cmd_ = allocateCommandBuffers(ctx, pool_, 1)[0];
        fence_ = createFence(ctx, janitor_);

        expectedSource_ = Pixels(kColorBytes);
        for (uint32_t y = 0; y < kSize; ++y) {
            for (uint32_t x = 0; x < kSize; ++x) {
                put(expectedSource_, x, y, patternAt(x, y));
            }
        }
        std::memcpy(upload_.mapped, expectedSource_.data(), kColorBytes);
        buildExpectations();
    }

    void frame(Context& ctx, uint32_t) override {
        VK_CHECK(vkResetCommandPool(ctx.device, pool_, 0));
        beginCommands(cmd_);
        const Image* all[] = {&source_, &copied_, &blitted_, &resolved_, &msaa_, &depth_};
        // The previous frame's downloads read these images before they are rewritten.
        for (const Image* image : all) {
            imageBarrier(cmd_, *image, VK_IMAGE_LAYOUT_UNDEFINED,
                         VK_IMAGE_LAYOUT_TRANSFER_DST_OPTIMAL, VK_PIPELINE_STAGE_TRANSFER_BIT, 0,
                         VK_PIPELINE_STAGE_TRANSFER_BIT, VK_ACCESS_TRANSFER_WRITE_BIT);
        }
        const VkBufferImageCopy upload{
            .imageSubresource = source_.layers(),
            .imageExtent = source_.extent(),
        };
        vkCmdCopyBufferToImage(cmd_, upload_.handle, source_.handle,
                               VK_IMAGE_LAYOUT_TRANSFER_DST_OPTIMAL, 1, &upload);
        clear(copied_, kCopyClear);
        clear(blitted_, kBlitClear);
        clear(msaa_, kMsaaClear);
        const VkClearDepthStencilValue depthClear{depthValue(), 0};
        const VkImageSubresourceRange depthRange = depth_.range();
        vkCmdClearDepthStencilImage(cmd_, depth_.handle, VK_IMAGE_LAYOUT_TRANSFER_DST_OPTIMAL,
                                    &depthClear, 1, &depthRange);

        for (const Image* image : {&source_, &msaa_, &depth_}) {
            toSource(*image, VK_IMAGE_LAYOUT_TRANSFER_DST_OPTIMAL);
        }
        // The clears of these two are overwritten in part: write after write.
        for (const Image* image : {&copied_, &blitted_}) {
            imageBarrier(cmd_, *image, VK_IMAGE_LAYOUT_TRANSFER_DST_OPTIMAL,
                         VK_IMAGE_LAYOUT_TRANSFER_DST_OPTIMAL, VK_PIPELINE_STAGE_TRANSFER_BIT,
                         VK_ACCESS_TRANSFER_WRITE_BIT, VK_PIPELINE_STAGE_TRANSFER_BIT,
                         VK_ACCESS_TRANSFER_WRITE_BIT);
        }

        const VkImageCopy copy{
            .srcSubresource = source_.layers(),
            .srcOffset = kCopySrc,
            .dstSubresource = copied_.layers(),
            .dstOffset = kCopyDst,
            .extent = kCopyExtent,
        };
        vkCmdCopyImage(cmd_, source_.handle, VK_IMAGE_LAYOUT_TRANSFER_SRC_OPTIMAL, copied_.handle,
                       VK_IMAGE_LAYOUT_TRANSFER_DST_OPTIMAL, 1, &copy);
        // 2x magnification: every destination pixel centre maps strictly inside one source
        // pixel, so NEAREST is exact on every implementation.
        const VkImageBlit blit{
            .srcSubresource = source_.layers(),
            .srcOffsets = {{0, 0, 0}, {int32_t(kSize / 4), int32_t(kSize / 2), 1}},
            .dstSubresource = blitted_.layers(),
            .dstOffsets = {{0, 0, 0}, {int32_t(kSize / 2), int32_t(kSize), 1}},
        };
        vkCmdBlitImage(cmd_, source_.handle, VK_IMAGE_LAYOUT_TRANSFER_SRC_OPTIMAL, blitted_.handle,
                       VK_IMAGE_LAYOUT_TRANSFER_DST_OPTIMAL, 1, &blit, VK_FILTER_NEAREST);
        const VkImageResolve resolve{
            .srcSubresource = msaa_.layers(),
            .dstSubresource = resolved_.layers(),
            .extent = msaa_.extent(),
        };
        vkCmdResolveImage(cmd_, msaa_.handle, VK_IMAGE_LAYOUT_TRANSFER_SRC_OPTIMAL,
                          resolved_.handle, VK_IMAGE_LAYOUT_TRANSFER_DST_OPTIMAL, 1, &resolve);

        for (const Image* image : {&copied_, &blitted_, &resolved_}) {
            toSource(*image, VK_IMAGE_LAYOUT_TRANSFER_DST_OPTIMAL);
        }
        const Image* slots[kSlots] = {&source_, &copied_, &blitted_, &resolved_, &depth_};
        for (uint32_t slot = 0; slot < kSlots; ++slot) {
            copyImageToBuffer(cmd_, *slots[slot], readback_.handle, slot * kColorBytes);
        }
        transferToHostBarrier(cmd_);
        endCommands(cmd_);

        submitAndWait(ctx, ctx.main.queue, {&cmd_, 1}, fence_);
        const auto* bytes = readback_.as<uint8_t>();
        expectPixels("vkCmdCopyBufferToImage round trip", bytes + kSource * kColorBytes,
                     expectedSource_);
        expectPixels("vkCmdCopyImage", bytes + kCopied * kColorBytes, expectedCopied_);
        expectPixels("vkCmdBlitImage", bytes + kBlitted * kColorBytes, expectedBlitted_);
        expectPixels("vkCmdResolveImage", bytes + kResolved * kColorBytes, expectedResolved_);
        expectBytes("vkCmdClearDepthStencilImage", bytes + kDepth * kColorBytes,
                    expectedDepth_.data(), expectedDepth_.size());
    }

private:
    float depthValue() const { return depthFormat_ == VK_FORMAT_D32_SFLOAT ? 0.375f : 1.0f; }

    void clear(const Image& image, Rgba color) {
        const VkClearColorValue value = clearValueOf(color).color;
        const VkImageSubresourceRange range = image.range();
        vkCmdClearColorImage(cmd_, image.handle, VK_IMAGE_LAYOUT_TRANSFER_DST_OPTIMAL, &value, 1,
                             &range);
    }

    void toSource(const Image& image, VkImageLayout from) {
        imageBarrier(cmd_, image, from, VK_IMAGE_LAYOUT_TRANSFER_SRC_OPTIMAL,
                     VK_PIPELINE_STAGE_TRANSFER_BIT, VK_ACCESS_TRANSFER_WRITE_BIT,
                     VK_PIPELINE_STAGE_TRANSFER_BIT, VK_ACCESS_TRANSFER_READ_BIT);
    }

    void buildExpectations() {
        expectedCopied_ = solidPixels(kCopyClear);
        for (uint32_t y = 0; y < kCopyExtent.height; ++y) {
            for (uint32_t x = 0; x < kCopyExtent.width; ++x) {
                put(expectedCopied_, kCopyDst.x + x, kCopyDst.y + y,
                    patternAt(kCopySrc.x + x, kCopySrc.y + y));
            }
        }
        expectedBlitted_ = solidPixels(kBlitClear);
        for (uint32_t y = 0; y < kSize; ++y) {
            for (uint32_t x = 0; x < kSize / 2; ++x) {
                put(expectedBlitted_, x, y, patternAt(x / 2, y / 2));
            }
        }
        expectedResolved_ = solidPixels(kMsaaClear);
        if (depthFormat_ == VK_FORMAT_D32_SFLOAT) {
            const float value = depthValue();
            expectedDepth_.resize(kSize * kSize * 4);
            for (size_t i = 0; i < expectedDepth_.size(); i += 4) {
                std::memcpy(&expectedDepth_[i], &value, 4);
            }
        } else {
            expectedDepth_.assign(kSize * kSize * 2, 0xff); // 1.0 in D16_UNORM
        }
    }

    Janitor janitor_;
    Image source_;
    Image copied_;
    Image blitted_;
    Image resolved_;
    Image msaa_;
    Image depth_;
    VkFormat depthFormat_ = VK_FORMAT_UNDEFINED;
    Buffer upload_;
    Buffer readback_;
    VkCommandPool pool_ = VK_NULL_HANDLE;
    VkCommandBuffer cmd_ = VK_NULL_HANDLE;
    VkFence fence_ = VK_NULL_HANDLE;
    Pixels expectedSource_;
    Pixels expectedCopied_;
    Pixels expectedBlitted_;
    Pixels expectedResolved_;
    std::vector<uint8_t> expectedDepth_;
};

} // namespace

std::unique_ptr<Scenario> makeImageTransferScenario() {
    return std::make_unique<ImageTransferScenario>();
}

} // namespace wl
