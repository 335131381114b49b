// Transfers to buffers and to images: how many bytes or pixels each one moves.

#include "timeline/workload_hook.hpp"

#include "protocol.gen.hpp"

#include <algorithm>

namespace vkscope {
namespace {

using protocol::BufferTransferKind;
using protocol::ImageTransferKind;
using timeline::find_command_buffer;
using timeline::TimelineDevice;
using timeline::WorkloadType;

// `amount(TimelineDevice&)` gives bytes or pixels (nullopt when unknown).
template <typename Amount, typename Forward>
void transfer(VkCommandBuffer handle, bool image, const char* api, const char* kind,
              Amount&& amount, Forward&& forward) {
    timeline::record_workload(
        handle, find_command_buffer(handle),
        image ? WorkloadType::image_transfer : WorkloadType::buffer_transfer, api,
        [&](timeline::WorkloadInfo& w, TimelineDevice& tl) {
            w.kind = kind;
            w.amount = amount(tl);
        },
        forward);
}

template <typename Region> uint64_t copy_bytes(uint32_t count, const Region* regions) {
    uint64_t bytes = 0;
    for (uint32_t i = 0; i < count; ++i) {
        bytes += regions[i].size;
    }
    return bytes;
}

template <typename Region> uint64_t extent_pixels(uint32_t count, const Region* regions) {
    uint64_t pixels = 0;
    for (uint32_t i = 0; i < count; ++i) {
        pixels += timeline::region_pixels(regions[i].extent, regions[i].srcSubresource.layerCount);
    }
    return pixels;
}

template <typename Region> uint64_t buffer_image_pixels(uint32_t count, const Region* regions) {
    uint64_t pixels = 0;
    for (uint32_t i = 0; i < count; ++i) {
        pixels +=
            timeline::region_pixels(regions[i].imageExtent, regions[i].imageSubresource.layerCount);
    }
    return pixels;
}

template <typename Region> uint64_t blit_pixels(uint32_t count, const Region* regions) {
    uint64_t pixels = 0;
    for (uint32_t i = 0; i < count; ++i) {
        const VkOffset3D* d = regions[i].dstOffsets;
        const VkExtent3D e{static_cast<uint32_t>(std::abs(d[1].x - d[0].x)),
                           static_cast<uint32_t>(std::abs(d[1].y - d[0].y)),
                           static_cast<uint32_t>(std::abs(d[1].z - d[0].z))};
        pixels += timeline::region_pixels(e, regions[i].dstSubresource.layerCount);
    }
    return pixels;
}

std::optional<uint64_t> known(uint64_t v) {
    return v;
}

} // namespace

VKAPI_ATTR void VKAPI_CALL hooks::vkCmdCopyBuffer(VkCommandBuffer commandBuffer, VkBuffer srcBuffer,
                                                  VkBuffer dstBuffer, uint32_t regionCount,
                                                  const VkBufferCopy* pRegions) {
    transfer(
        commandBuffer, false, "vkCmdCopyBuffer", name(BufferTransferKind::copy),
        [&](TimelineDevice&) { return known(copy_bytes(regionCount, pRegions)); },
        [&](const DeviceDispatch& next) {
            next.CmdCopyBuffer(commandBuffer, srcBuffer, dstBuffer, regionCount, pRegions);
        });
}

#define VKSCOPE_COPY2(name, info_type, image, kind, amount)                                        \
    VKAPI_ATTR void VKAPI_CALL hooks::vk##name(VkCommandBuffer commandBuffer,                      \
                                               const info_type* pInfo) {                           \
        transfer(                                                                                  \
            commandBuffer, image, "vk" #name, kind,                                                \
            [&](TimelineDevice&) { return known(amount(pInfo->regionCount, pInfo->pRegions)); },   \
            [&](const DeviceDispatch& next) { next.name(commandBuffer, pInfo); });                 \
    }

VKSCOPE_COPY2(CmdCopyBuffer2, VkCopyBufferInfo2, false, name(BufferTransferKind::copy), copy_bytes)
VKSCOPE_COPY2(CmdCopyBuffer2KHR, VkCopyBufferInfo2, false, name(BufferTransferKind::copy),
              copy_bytes)
VKSCOPE_COPY2(CmdCopyImage2, VkCopyImageInfo2, true, name(ImageTransferKind::copy), extent_pixels)
VKSCOPE_COPY2(CmdCopyImage2KHR, VkCopyImageInfo2, true, name(ImageTransferKind::copy),
              extent_pixels)
VKSCOPE_COPY2(CmdBlitImage2, VkBlitImageInfo2, true, name(ImageTransferKind::blit), blit_pixels)
VKSCOPE_COPY2(CmdBlitImage2KHR, VkBlitImageInfo2, true, name(ImageTransferKind::blit), blit_pixels)
VKSCOPE_COPY2(CmdResolveImage2, VkResolveImageInfo2, true, name(ImageTransferKind::resolve),
              extent_pixels)
VKSCOPE_COPY2(CmdResolveImage2KHR, VkResolveImageInfo2, true, name(ImageTransferKind::resolve),
              extent_pixels)
VKSCOPE_COPY2(CmdCopyBufferToImage2, VkCopyBufferToImageInfo2, true,
              name(ImageTransferKind::buffer_to_image), buffer_image_pixels)
VKSCOPE_COPY2(CmdCopyBufferToImage2KHR, VkCopyBufferToImageInfo2, true,
              name(ImageTransferKind::buffer_to_image), buffer_image_pixels)
VKSCOPE_COPY2(CmdCopyImageToBuffer2, VkCopyImageToBufferInfo2, true,
              name(ImageTransferKind::image_to_buffer), buffer_image_pixels)
VKSCOPE_COPY2(CmdCopyImageToBuffer2KHR, VkCopyImageToBufferInfo2, true,
              name(ImageTransferKind::image_to_buffer), buffer_image_pixels)
#undef VKSCOPE_COPY2

VKAPI_ATTR void VKAPI_CALL hooks::vkCmdFillBuffer(VkCommandBuffer commandBuffer, VkBuffer dstBuffer,
                                                  VkDeviceSize dstOffset, VkDeviceSize size,
                                                  uint32_t data) {
    transfer(
        commandBuffer, false, "vkCmdFillBuffer", name(BufferTransferKind::fill),
        [&](TimelineDevice& tl) -> std::optional<uint64_t> {
            if (size != VK_WHOLE_SIZE) {
                return size;
            }
            // The rest of the buffer, rounded down to whole words as the fill does.
            const timeline::BufferInfo* b = tl.buffers.find(key(dstBuffer));
            if (!b || b->size < dstOffset) {
                return std::nullopt;
            }
            return (b->size - dstOffset) & ~VkDeviceSize{3};
        },
        [&](const DeviceDispatch& next) {
            next.CmdFillBuffer(commandBuffer, dstBuffer, dstOffset, size, data);
        });
}

VKAPI_ATTR void VKAPI_CALL hooks::vkCmdUpdateBuffer(VkCommandBuffer commandBuffer,
                                                    VkBuffer dstBuffer, VkDeviceSize dstOffset,
                                                    VkDeviceSize dataSize, const void* pData) {
    transfer(
        commandBuffer, false, "vkCmdUpdateBuffer", name(BufferTransferKind::update),
        [&](TimelineDevice&) { return known(dataSize); },
        [&](const DeviceDispatch& next) {
            next.CmdUpdateBuffer(commandBuffer, dstBuffer, dstOffset, dataSize, pData);
        });
}

VKAPI_ATTR void VKAPI_CALL hooks::vkCmdCopyImage(VkCommandBuffer commandBuffer, VkImage srcImage,
                                                 VkImageLayout srcImageLayout, VkImage dstImage,
                                                 VkImageLayout dstImageLayout, uint32_t regionCount,
                                                 const VkImageCopy* pRegions) {
    transfer(
        commandBuffer, true, "vkCmdCopyImage", name(ImageTransferKind::copy),
        [&](TimelineDevice&) { return known(extent_pixels(regionCount, pRegions)); },
        [&](const DeviceDispatch& next) {
            next.CmdCopyImage(commandBuffer, srcImage, srcImageLayout, dstImage, dstImageLayout,
                              regionCount, pRegions);
        });
}

VKAPI_ATTR void VKAPI_CALL hooks::vkCmdBlitImage(VkCommandBuffer commandBuffer, VkImage srcImage,
                                                 VkImageLayout srcImageLayout, VkImage dstImage,
                                                 VkImageLayout dstImageLayout, uint32_t regionCount,
                                                 const VkImageBlit* pRegions, VkFilter filter) {
    transfer(
        commandBuffer, true, "vkCmdBlitImage", name(ImageTransferKind::blit),
        [&](TimelineDevice&) { return known(blit_pixels(regionCount, pRegions)); },
        [&](const DeviceDispatch& next) {
            next.CmdBlitImage(commandBuffer, srcImage, srcImageLayout, dstImage, dstImageLayout,
                              regionCount, pRegions, filter);
        });
}

VKAPI_ATTR void VKAPI_CALL hooks::vkCmdResolveImage(VkCommandBuffer commandBuffer, VkImage srcImage,
                                                    VkImageLayout srcImageLayout, VkImage dstImage,
                                                    VkImageLayout dstImageLayout,
                                                    uint32_t regionCount,
                                                    const VkImageResolve* pRegions) {
    transfer(
        commandBuffer, true, "vkCmdResolveImage", name(ImageTransferKind::resolve),
        [&](TimelineDevice&) { return known(extent_pixels(regionCount, pRegions)); },
        [&](const DeviceDispatch& next) {
            next.CmdResolveImage(commandBuffer, srcImage, srcImageLayout, dstImage, dstImageLayout,
                                 regionCount, pRegions);
        });
}

VKAPI_ATTR void VKAPI_CALL hooks::vkCmdClearColorImage(VkCommandBuffer commandBuffer, VkImage image,
                                                       VkImageLayout imageLayout,
                                                       const VkClearColorValue* pColor,
                                                       uint32_t rangeCount,
                                                       const VkImageSubresourceRange* pRanges) {
    transfer(
        commandBuffer, true, "vkCmdClearColorImage", name(ImageTransferKind::clear_color),
        [&](TimelineDevice& tl) {
            const timeline::ImageInfo* info = tl.images.find(key(image));
            return timeline::clear_pixels(info ? std::optional(*info) : std::nullopt,
                                          {pRanges, rangeCount});
        },
        [&](const DeviceDispatch& next) {
            next.CmdClearColorImage(commandBuffer, image, imageLayout, pColor, rangeCount, pRanges);
        });
}

VKAPI_ATTR void VKAPI_CALL hooks::vkCmdClearDepthStencilImage(
    VkCommandBuffer commandBuffer, VkImage image, VkImageLayout imageLayout,
    const VkClearDepthStencilValue* pDepthStencil, uint32_t rangeCount,
    const VkImageSubresourceRange* pRanges) {
    transfer(
        commandBuffer, true, "vkCmdClearDepthStencilImage",
        name(ImageTransferKind::clear_depth_stencil),
        [&](TimelineDevice& tl) {
            const timeline::ImageInfo* info = tl.images.find(key(image));
            return timeline::clear_pixels(info ? std::optional(*info) : std::nullopt,
                                          {pRanges, rangeCount});
        },
        [&](const DeviceDispatch& next) {
            next.CmdClearDepthStencilImage(commandBuffer, image, imageLayout, pDepthStencil,
                                           rangeCount, pRanges);
        });
}

VKAPI_ATTR void VKAPI_CALL hooks::vkCmdCopyBufferToImage(VkCommandBuffer commandBuffer,
                                                         VkBuffer srcBuffer, VkImage dstImage,
                                                         VkImageLayout dstImageLayout,
                                                         uint32_t regionCount,
                                                         const VkBufferImageCopy* pRegions) {
    transfer(
        commandBuffer, true, "vkCmdCopyBufferToImage", name(ImageTransferKind::buffer_to_image),
        [&](TimelineDevice&) { return known(buffer_image_pixels(regionCount, pRegions)); },
        [&](const DeviceDispatch& next) {
            next.CmdCopyBufferToImage(commandBuffer, srcBuffer, dstImage, dstImageLayout,
                                      regionCount, pRegions);
        });
}

VKAPI_ATTR void VKAPI_CALL hooks::vkCmdCopyImageToBuffer(VkCommandBuffer commandBuffer,
                                                         VkImage srcImage,
                                                         VkImageLayout srcImageLayout,
                                                         VkBuffer dstBuffer, uint32_t regionCount,
                                                         const VkBufferImageCopy* pRegions) {
    transfer(
        commandBuffer, true, "vkCmdCopyImageToBuffer", name(ImageTransferKind::image_to_buffer),
        [&](TimelineDevice&) { return known(buffer_image_pixels(regionCount, pRegions)); },
        [&](const DeviceDispatch& next) {
            next.CmdCopyImageToBuffer(commandBuffer, srcImage, srcImageLayout, dstBuffer,
                                      regionCount, pRegions);
        });
}

} // namespace vkscope
