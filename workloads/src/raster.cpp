#include "raster.h"

#include "errors.h"
#include "pipelines.h"

#include <algorithm>
#include <cstdio>
#include <cstring>

namespace wl {

namespace {

constexpr uint32_t kCellSize = 8;
constexpr uint32_t kCellsPerRow = kTargetSize / kCellSize;
constexpr uint32_t kCells = kCellsPerRow * kCellsPerRow;

} // namespace

RectPush rectFor(uint32_t draw, uint32_t salt, Blend blend) {
    const uint32_t cell = draw % kCells;
    const int32_t x0 = static_cast<int32_t>((cell % kCellsPerRow) * kCellSize);
    const int32_t y0 = static_cast<int32_t>((cell / kCellsPerRow) * kCellSize);
    RectPush push{{x0, y0, x0 + int32_t(kCellSize), y0 + int32_t(kCellSize)}, {}};
    if (blend == Blend::Replace) {
        push.color[0] = (draw * 53 + salt * 97 + 17) & 255;
        push.color[1] = (draw * 29 + salt * 13 + 101) & 255;
        push.color[2] = (draw * 11 + salt * 71 + 7) & 255;
        push.color[3] = 255 - (draw * 7 + salt) % 64;
    } else {
        // Small so that several overlapping executions still fit in a byte.
        push.color[0] = 2 * (1 + (draw + salt) % 5);
        push.color[1] = 3 * (1 + draw % 3);
        push.color[2] = 1 + (draw + 2 * salt) % 7;
        push.color[3] = 4;
    }
    return push;
}

VkClearValue clearValueOf(Rgba color) {
    VkClearValue value{};
    for (int i = 0; i < 4; ++i) {
        // k / 255 converts back to exactly k in UNORM.
        value.color.float32[i] = static_cast<float>(color[i]) / 255.0f;
    }
    return value;
}

Pixels solidPixels(Rgba color, uint32_t layers) {
    Pixels pixels(kTargetBytes * layers);
    for (size_t i = 0; i < pixels.size(); i += 4) {
        std::copy(color.begin(), color.end(), pixels.begin() + static_cast<ptrdiff_t>(i));
    }
    return pixels;
}

void drawRects(Pixels& pixels, uint32_t first, uint32_t count, uint32_t salt, Blend blend,
               uint32_t layer) {
    for (uint32_t draw = first; draw < first + count; ++draw) {
        RectPush rect = rectFor(draw, salt, blend);
        rect.color[2] = (rect.color[2] + 85 * layer) & 255;
        for (int32_t y = rect.bounds[1]; y < rect.bounds[3]; ++y) {
            for (int32_t x = rect.bounds[0]; x < rect.bounds[2]; ++x) {
                uint8_t* px = &pixels[kTargetBytes * layer + (y * kTargetSize + x) * 4];
                for (int c = 0; c < 4; ++c) {
                    px[c] = blend == Blend::Replace
                                ? static_cast<uint8_t>(rect.color[c])
                                : static_cast<uint8_t>(std::min(255u, px[c] + rect.color[c]));
                }
            }
        }
    }
}

void expectPixels(const std::string& what, const void* actual, const Pixels& expected) {
    const auto* got = static_cast<const uint8_t*>(actual);
    for (size_t i = 0; i < expected.size(); i += 4) {
        if (std::memcmp(got + i, &expected[i], 4) != 0) {
            const size_t pixel = i / 4;
            const size_t layer = pixel / (kTargetSize * kTargetSize);
            const size_t inLayer = pixel % (kTargetSize * kTargetSize);
            char detail[160];
            std::snprintf(detail, sizeof(detail),
                          ": layer %zu pixel (%zu,%zu) is %u,%u,%u,%u, expected %u,%u,%u,%u", layer,
                          inLayer % kTargetSize, inLayer / kTargetSize, got[i], got[i + 1],
                          got[i + 2], got[i + 3], expected[i], expected[i + 1], expected[i + 2],
                          expected[i + 3]);
            throw VerifyError(what + detail);
        }
    }
}

Buffer createQuadIndices(Context& ctx, Janitor& janitor) {
    Buffer buffer = createBuffer(ctx, janitor, 6 * sizeof(uint16_t),
                                 VK_BUFFER_USAGE_INDEX_BUFFER_BIT, Memory::Host);
    const uint16_t indices[6] = {0, 1, 2, 3, 4, 5};
    std::memcpy(buffer.mapped, indices, sizeof(indices));
    return buffer;
}

void beginColorPass(VkCommandBuffer cmd, VkRenderPass pass, VkFramebuffer framebuffer, Rgba clear,
                    VkSubpassContents contents) {
    const VkClearValue value = clearValueOf(clear);
    const VkRenderPassBeginInfo begin{
        .sType = VK_STRUCTURE_TYPE_RENDER_PASS_BEGIN_INFO,
        .renderPass = pass,
        .framebuffer = framebuffer,
        .renderArea = {{0, 0}, {kTargetSize, kTargetSize}},
        .clearValueCount = 1,
        .pClearValues = &value,
    };
    vkCmdBeginRenderPass(cmd, &begin, contents);
}

void setFullViewport(VkCommandBuffer cmd) {
    const VkViewport viewport{0.0f, 0.0f, float(kTargetSize), float(kTargetSize), 0.0f, 1.0f};
    const VkRect2D scissor{{0, 0}, {kTargetSize, kTargetSize}};
    vkCmdSetViewport(cmd, 0, 1, &viewport);
    vkCmdSetScissor(cmd, 0, 1, &scissor);
}

void recordRects(VkCommandBuffer cmd, VkPipelineLayout layout, VkBuffer indices, uint32_t first,
                 uint32_t count, uint32_t salt, Blend blend) {
    if (indices) {
        vkCmdBindIndexBuffer(cmd, indices, 0, VK_INDEX_TYPE_UINT16);
    }
    for (uint32_t draw = first; draw < first + count; ++draw) {
        const RectPush push = rectFor(draw, salt, blend);
        vkCmdPushConstants(cmd, layout, VK_SHADER_STAGE_VERTEX_BIT, 0, sizeof(push), &push);
        if (indices && (draw & 1)) {
            vkCmdDrawIndexed(cmd, 6, 1, 0, 0, 0);
        } else {
            vkCmdDraw(cmd, 6, 1, 0, 0);
        }
    }
}

VkPipelineLayout createRectLayout(Context& ctx, Janitor& janitor) {
    return createPipelineLayout(ctx, janitor, {}, sizeof(RectPush), VK_SHADER_STAGE_VERTEX_BIT);
}

VkRenderPass createColorPass(Context& ctx, Janitor& janitor, uint32_t viewMask) {
    const VkAttachmentDescription attachment{
        .format = kColorFormat,
        .samples = VK_SAMPLE_COUNT_1_BIT,
        .loadOp = VK_ATTACHMENT_LOAD_OP_CLEAR,
        .storeOp = VK_ATTACHMENT_STORE_OP_STORE,
        .stencilLoadOp = VK_ATTACHMENT_LOAD_OP_DONT_CARE,
        .stencilStoreOp = VK_ATTACHMENT_STORE_OP_DONT_CARE,
        .initialLayout = VK_IMAGE_LAYOUT_UNDEFINED,
        .finalLayout = VK_IMAGE_LAYOUT_TRANSFER_SRC_OPTIMAL,
    };
    const VkAttachmentReference color{0, VK_IMAGE_LAYOUT_COLOR_ATTACHMENT_OPTIMAL};
    const VkSubpassDescription subpass{
        .pipelineBindPoint = VK_PIPELINE_BIND_POINT_GRAPHICS,
        .colorAttachmentCount = 1,
        .pColorAttachments = &color,
    };
    // In: the previous frame's copy must finish reading before the clear. Out: the copy
    // that follows the pass reads what the pass wrote.
    const VkSubpassDependency dependencies[2] = {
        {
            .srcSubpass = VK_SUBPASS_EXTERNAL,
            .dstSubpass = 0,
            .srcStageMask = VK_PIPELINE_STAGE_TRANSFER_BIT,
            .dstStageMask = VK_PIPELINE_STAGE_COLOR_ATTACHMENT_OUTPUT_BIT,
            .srcAccessMask = 0,
            .dstAccessMask =
                VK_ACCESS_COLOR_ATTACHMENT_READ_BIT | VK_ACCESS_COLOR_ATTACHMENT_WRITE_BIT,
        },
        {
            .srcSubpass = 0,
            .dstSubpass = VK_SUBPASS_EXTERNAL,
            .srcStageMask = VK_PIPELINE_STAGE_COLOR_ATTACHMENT_OUTPUT_BIT,
            .dstStageMask = VK_PIPELINE_STAGE_TRANSFER_BIT,
            .srcAccessMask = VK_ACCESS_COLOR_ATTACHMENT_WRITE_BIT,
            .dstAccessMask = VK_ACCESS_TRANSFER_READ_BIT,
        },
    };
    const uint32_t correlation = viewMask;
    const VkRenderPassMultiviewCreateInfo multiview{
        .sType = VK_STRUCTURE_TYPE_RENDER_PASS_MULTIVIEW_CREATE_INFO,
        .subpassCount = 1,
        .pViewMasks = &viewMask,
        .correlationMaskCount = 1,
        .pCorrelationMasks = &correlation,
    };
    const VkRenderPassCreateInfo info{
        .sType = VK_STRUCTURE_TYPE_RENDER_PASS_CREATE_INFO,
        .pNext = viewMask ? &multiview : nullptr,
        .attachmentCount = 1,
        .pAttachments = &attachment,
        .subpassCount = 1,
        .pSubpasses = &subpass,
        .dependencyCount = 2,
        .pDependencies = dependencies,
    };
    VkRenderPass pass = VK_NULL_HANDLE;
    VK_CHECK(vkCreateRenderPass(ctx.device, &info, nullptr, &pass));
    VkDevice device = ctx.device;
    janitor.defer([device, pass] { vkDestroyRenderPass(device, pass, nullptr); });
    return pass;
}

VkFramebuffer createFramebuffer(Context& ctx, Janitor& janitor, VkRenderPass pass,
                                std::initializer_list<VkImageView> views) {
    const VkFramebufferCreateInfo info{
        .sType = VK_STRUCTURE_TYPE_FRAMEBUFFER_CREATE_INFO,
        .renderPass = pass,
        .attachmentCount = static_cast<uint32_t>(views.size()),
        .pAttachments = views.begin(),
        .width = kTargetSize,
        .height = kTargetSize,
        .layers = 1,
    };
    VkFramebuffer framebuffer = VK_NULL_HANDLE;
    VK_CHECK(vkCreateFramebuffer(ctx.device, &info, nullptr, &framebuffer));
    VkDevice device = ctx.device;
    janitor.defer([device, framebuffer] { vkDestroyFramebuffer(device, framebuffer, nullptr); });
    return framebuffer;
}

ColorTarget createColorTarget(Context& ctx, Janitor& janitor, uint32_t layers) {
    ColorTarget target;
    target.image = createImage(ctx, janitor,
                               ImageDesc{
                                   .format = kColorFormat,
                                   .layers = layers,
                                   .usage = VK_IMAGE_USAGE_COLOR_ATTACHMENT_BIT |
                                            VK_IMAGE_USAGE_TRANSFER_SRC_BIT |
                                            VK_IMAGE_USAGE_INPUT_ATTACHMENT_BIT,
                               });
    target.readback = createBuffer(ctx, janitor, kTargetBytes * layers,
                                   VK_BUFFER_USAGE_TRANSFER_DST_BIT, Memory::Host);
    return target;
}

} // namespace wl
