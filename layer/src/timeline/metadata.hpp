#pragma once
// What the WORKLOAD payload says about each kind of workload (docs/protocol.md), built from the
// Vulkan structures the application passed. Pure functions (but for a render pass's cache of
// its last instance's fields); the hooks look up the objects.
//
// The result is the payload's members without the braces, so that render passes can append the
// totals that are only final once their command buffer has ended.

#include "timeline/interpreter.hpp"

#include <array>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <vector>
#include <vulkan/vulkan.h>

namespace vkscope::timeline {

struct BufferInfo {
    VkDeviceSize size = 0;
    VkBufferUsageFlags usage = 0;
    VkDeviceAddress address = 0; // once queried; under TimelineDevice::addresses_mutex
};

struct ImageInfo {
    VkFormat format = VK_FORMAT_UNDEFINED;
    VkSampleCountFlagBits samples = VK_SAMPLE_COUNT_1_BIT;
    VkExtent3D extent{};
    uint32_t mip_levels = 1;
    uint32_t array_layers = 1;
};

struct ImageViewInfo {
    VkFormat format = VK_FORMAT_UNDEFINED;
    VkSampleCountFlagBits samples = VK_SAMPLE_COUNT_1_BIT;
};

// The fields of a render pass's last instance, kept for the next one: a frame begins the same
// render pass with the same area again and again, and building the fields is most of what a
// render pass instance costs its recording thread.
struct RenderPassFieldsCache {
    std::mutex mutex; // of this render pass only: threads recording it at once
    bool valid = false;
    uint64_t device = 0;
    const char* api = nullptr;
    VkRect2D area{};
    uint32_t layers = 0;
    std::string fields;
};

// What a VkRenderPass says about every instance of it.
struct RenderPassInfo {
    uint32_t subpasses = 1;
    uint32_t view_mask = 0;  // of all subpasses together
    std::string attachments; // JSON array
    // Shared by copies: the render pass is described once and stored once.
    std::shared_ptr<RenderPassFieldsCache> cache = std::make_shared<RenderPassFieldsCache>();
};

RenderPassInfo describe_render_pass(const VkRenderPassCreateInfo& info);
RenderPassInfo describe_render_pass(const VkRenderPassCreateInfo2& info);

std::string render_pass_fields(uint64_t device, const char* api, const VkRect2D& area,
                               uint32_t layers, const RenderPassInfo& pass);
// The same, from the render pass's cache where its last instance had the same area and layers.
std::string cached_render_pass_fields(uint64_t device, const char* api, const VkRect2D& area,
                                      uint32_t layers, const RenderPassInfo& pass);

// One attachment of a render pass instance as its WORKLOAD says it.
struct Attachment {
    uint32_t index = 0;
    bool depth_stencil = false;
    std::optional<VkFormat> format;
    std::optional<uint32_t> samples;
    std::optional<VkAttachmentLoadOp> load, stencil_load;
    std::optional<VkAttachmentStoreOp> store, stencil_store;
    bool resolve = false;
    bool operator==(const Attachment&) const = default;
};

// Whether two render areas are the same rectangle (VkRect2D has no comparison of its own).
inline bool same_area(const VkRect2D& a, const VkRect2D& b) {
    return a.offset.x == b.offset.x && a.offset.y == b.offset.y &&
           a.extent.width == b.extent.width && a.extent.height == b.extent.height;
}

// Everything a dynamic rendering instance's fields say, before they are written: what a cache
// of them compares (the views' formats and samples included, so that a view destroyed and made
// again under the same handle compares by what it is).
struct RenderingDescription {
    uint64_t device = 0;
    const char* api = nullptr;
    VkRect2D area{};
    uint32_t layers = 0;
    uint32_t view_mask = 0;
    std::vector<Attachment> attachments;
    bool operator==(const RenderingDescription& o) const {
        return device == o.device && api == o.api && same_area(area, o.area) &&
               layers == o.layers && view_mask == o.view_mask && attachments == o.attachments;
    }
};

using ViewLookup = std::function<std::optional<ImageViewInfo>(VkImageView)>;
RenderingDescription describe_rendering(uint64_t device, const char* api,
                                        const VkRenderingInfo& info, const ViewLookup& view);
std::string rendering_fields(const RenderingDescription& rendering);
std::string rendering_fields(uint64_t device, const char* api, const VkRenderingInfo& info,
                             const ViewLookup& view);

// The fields of a command buffer's last few dynamic rendering instances, for the next alike: a
// command buffer recorded again every frame begins the same instances again, and writing their
// fields is most of what one costs its recording thread. One recording thread at a time, as its
// command buffer.
class RenderingFieldsCache {
public:
    std::string fields(RenderingDescription rendering);

private:
    static constexpr size_t kEntries = 4;
    struct Entry {
        RenderingDescription rendering;
        std::string fields;
    };
    std::array<std::optional<Entry>, kEntries> entries_;
    size_t next_ = 0; // the entry a miss replaces
};

// groups is nullopt for an indirect dispatch until its annex.
std::string dispatch_fields(uint64_t device, const char* api, std::optional<Size3> groups,
                            Size3 base, std::optional<Size3> local_size);
// The annex of an indirect dispatch once its parameters are read back.
std::string dispatch_annex(Size3 groups, std::optional<Size3> local_size);

std::string trace_rays_fields(uint64_t device, const char* api, std::optional<Size3> size);
std::string trace_rays_annex(Size3 size);

std::string transfer_fields(uint64_t device, const char* api, bool image, const char* kind,
                            std::optional<uint64_t> amount);

std::string acceleration_structure_fields(uint64_t device, const char* api, const char* kind,
                                          uint32_t count);

// The WORKLOAD members of a workload other than a render pass, from what was recorded.
std::string describe_fields(const Workload& w);

// The annex of an async readback, from what its slots held (the first three words of each).
std::string readback_annex(const Readback& r, std::span<const Size3> values);

bool is_depth_stencil_format(VkFormat format);

// Pixels an image region covers: width x height x depth x layers.
uint64_t region_pixels(const VkExtent3D& extent, uint32_t layers);
// Pixels of every level and layer a clear touches, or nullopt without the image's description.
std::optional<uint64_t> clear_pixels(const std::optional<ImageInfo>& image,
                                     std::span<const VkImageSubresourceRange> ranges);

} // namespace vkscope::timeline
