// The rectangle-drawing model shared by the rendering scenarios: draw i fills cell i % 64 of
// an 8x8 grid of 8x8-pixel cells in a 64x64 RGBA8 target with a colour derived from (i, salt),
// so the host can compute the exact expected image for any draw count.
#pragma once

#include "context.h"
#include "janitor.h"
#include "resources.h"

#include <array>
#include <cstdint>
#include <initializer_list>
#include <string>
#include <vector>

namespace wl {

constexpr uint32_t kTargetSize = 64;
constexpr VkFormat kColorFormat = VK_FORMAT_R8G8B8A8_UNORM;
constexpr VkDeviceSize kTargetBytes = kTargetSize * kTargetSize * 4;

enum class Blend {
    Replace, // each draw overwrites its cell with an arbitrary colour
    Add,     // ONE + ONE blending of small colours, so every execution of a draw counts
};

// Push constants of shaders/rect.vert.
struct RectPush {
    int32_t bounds[4];
    uint32_t color[4];
};

using Rgba = std::array<uint8_t, 4>;
// Tightly packed RGBA8 pixels, layer after layer.
using Pixels = std::vector<uint8_t>;

RectPush rectFor(uint32_t draw, uint32_t salt, Blend blend);
VkClearValue clearValueOf(Rgba color);
Pixels solidPixels(Rgba color, uint32_t layers = 1);
// Applies draws [first, first + count) the way the GPU does; `layer` selects the layer of a
// multi-layer image and is also the multiview view index (which shifts the blue channel).
void drawRects(Pixels& pixels, uint32_t first, uint32_t count, uint32_t salt, Blend blend,
               uint32_t layer = 0);
void expectPixels(const std::string& what, const void* actual, const Pixels& expected);

// Index buffer holding 0..5 so indexed draws produce the same quads as vkCmdDraw.
Buffer createQuadIndices(Context& ctx, Janitor& janitor);
void setFullViewport(VkCommandBuffer cmd);
// Begins `pass` over the whole target of `framebuffer`, its one attachment cleared to `clear`.
void beginColorPass(VkCommandBuffer cmd, VkRenderPass pass, VkFramebuffer framebuffer, Rgba clear,
                    VkSubpassContents contents = VK_SUBPASS_CONTENTS_INLINE);
// Records draws [first, first + count). With an index buffer, odd draws use
// vkCmdDrawIndexed and even draws vkCmdDraw.
void recordRects(VkCommandBuffer cmd, VkPipelineLayout layout, VkBuffer indices, uint32_t first,
                 uint32_t count, uint32_t salt, Blend blend);
VkPipelineLayout createRectLayout(Context& ctx, Janitor& janitor);

// Single-subpass render pass with one RGBA8 colour attachment that is cleared and left in
// TRANSFER_SRC_OPTIMAL for a copy. A non-zero viewMask makes it a multiview pass.
VkRenderPass createColorPass(Context& ctx, Janitor& janitor, uint32_t viewMask = 0);
VkFramebuffer createFramebuffer(Context& ctx, Janitor& janitor, VkRenderPass pass,
                                std::initializer_list<VkImageView> views);

// A 64x64 colour target usable as attachment and copy source, with a host readback buffer.
struct ColorTarget {
    Image image;
    Buffer readback;
};
ColorTarget createColorTarget(Context& ctx, Janitor& janitor, uint32_t layers = 1);

} // namespace wl
