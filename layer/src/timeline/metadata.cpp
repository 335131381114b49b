#include "timeline/metadata.hpp"

#include "core/wire_format.hpp"

#include <algorithm>
#include <vector>

namespace vkscope::timeline {
namespace {

// One attachment of a render pass as the protocol lists it.
template <typename T> void optional_value(JsonWriter& json, const char* key, std::optional<T> v) {
    json.key(key);
    if (v) {
        json.integer(static_cast<int64_t>(*v));
    } else {
        json.null();
    }
}

std::string attachments_json(const std::vector<Attachment>& list) {
    JsonWriter json;
    json.begin_array();
    for (const Attachment& a : list) {
        json.begin_object()
            .field("index", a.index)
            .field("kind", protocol::name(a.depth_stencil ? protocol::AttachmentKind::depth_stencil
                                                          : protocol::AttachmentKind::color));
        optional_value(json, "format", a.format);
        optional_value(json, "samples", a.samples);
        optional_value(json, "load", a.load);
        optional_value(json, "store", a.store);
        optional_value(json, "stencil_load", a.stencil_load);
        optional_value(json, "stencil_store", a.stencil_store);
        json.field("resolve", a.resolve).end_object();
    }
    json.end_array();
    return json.take();
}

template <typename Description> Attachment from_description(uint32_t index, const Description& d) {
    Attachment a;
    a.index = index;
    a.depth_stencil = is_depth_stencil_format(d.format);
    a.format = d.format;
    a.samples = static_cast<uint32_t>(d.samples);
    a.load = d.loadOp;
    a.store = d.storeOp;
    a.stencil_load = d.stencilLoadOp;
    a.stencil_store = d.stencilStoreOp;
    return a;
}

void mark_resolve(std::vector<Attachment>& list, uint32_t index) {
    if (index != VK_ATTACHMENT_UNUSED && index < list.size()) {
        list[index].resolve = true;
    }
}

JsonWriter common(uint64_t device, WorkloadType type, const char* api) {
    JsonWriter json;
    // Enough for any workload but a render pass with many attachments.
    json.reserve(256);
    json.field("device", device).field("type", protocol::name(type)).field("api", api);
    return json;
}

void size3(JsonWriter& json, const char* key, const std::optional<Size3>& v) {
    json.key(key);
    if (v) {
        json.begin_array().uinteger((*v)[0]).uinteger((*v)[1]).uinteger((*v)[2]).end_array();
    } else {
        json.null();
    }
}

void invocations(JsonWriter& json, const std::optional<Size3>& groups,
                 const std::optional<Size3>& local) {
    json.key("invocations");
    if (groups && local) {
        uint64_t n = 1;
        for (int i = 0; i < 3; ++i) {
            n *= uint64_t{(*groups)[i]} * (*local)[i];
        }
        json.uinteger(n);
    } else {
        json.null();
    }
}

std::string flagged(std::initializer_list<const char*> null_keys, protocol::AnnexFlag flag) {
    JsonWriter json;
    json.begin_object();
    for (const char* k : null_keys) {
        json.key(k).null();
    }
    json.field(protocol::name(flag), true).end_object();
    return json.take();
}

} // namespace

std::string describe_fields(const Workload& w) {
    switch (w.type) {
    case WorkloadType::render_pass:
        return w.fields;
    case WorkloadType::dispatch:
        return dispatch_fields(w.device, w.api, w.size, w.base, w.local_size);
    case WorkloadType::trace_rays:
        return trace_rays_fields(w.device, w.api, w.size);
    case WorkloadType::buffer_transfer:
    case WorkloadType::image_transfer:
        return transfer_fields(w.device, w.api, w.type == WorkloadType::image_transfer, w.kind,
                               w.amount);
    case WorkloadType::acceleration_structure:
        return acceleration_structure_fields(w.device, w.api, w.kind,
                                             static_cast<uint32_t>(w.amount.value_or(0)));
    }
    return {};
}

std::string readback_annex(const Readback& r, std::span<const Size3> values) {
    if (r.copies.empty() || values.size() != r.copies.size()) {
        return "{}";
    }
    switch (r.copies[0].kind) {
    case ParameterKind::dispatch:
        if (r.ambiguous) {
            return flagged({"groups", "invocations"}, protocol::AnnexFlag::indirect_ambiguous);
        }
        return dispatch_annex(values[0], r.workload->local_size);
    case ParameterKind::trace_rays:
        if (r.ambiguous) {
            return flagged({"width", "height", "depth"}, protocol::AnnexFlag::indirect_ambiguous);
        }
        return trace_rays_annex(values[0]);
    case ParameterKind::draw_count:
        break;
    }
    if (r.ambiguous) {
        return flagged({"draws"}, protocol::AnnexFlag::draws_ambiguous);
    }
    if (r.counts_lost) {
        return flagged({"draws"}, protocol::AnnexFlag::draws_lost);
    }
    uint64_t draws = r.draws;
    for (size_t i = 0; i < r.copies.size(); ++i) {
        draws += std::min(values[i][0], r.copies[i].max_draws);
    }
    JsonWriter json;
    json.begin_object().field("draws", draws).end_object();
    return json.take();
}

bool is_depth_stencil_format(VkFormat format) {
    return format >= VK_FORMAT_D16_UNORM && format <= VK_FORMAT_D32_SFLOAT_S8_UINT;
}

RenderPassInfo describe_render_pass(const VkRenderPassCreateInfo& info) {
    std::vector<Attachment> list;
    for (uint32_t i = 0; i < info.attachmentCount; ++i) {
        list.push_back(from_description(i, info.pAttachments[i]));
    }
    for (uint32_t s = 0; s < info.subpassCount; ++s) {
        const VkSubpassDescription& sub = info.pSubpasses[s];
        for (uint32_t c = 0; sub.pResolveAttachments && c < sub.colorAttachmentCount; ++c) {
            mark_resolve(list, sub.pResolveAttachments[c].attachment);
        }
    }
    RenderPassInfo out;
    out.subpasses = info.subpassCount;
    for (auto* s = static_cast<const VkBaseInStructure*>(info.pNext); s; s = s->pNext) {
        if (s->sType == VK_STRUCTURE_TYPE_RENDER_PASS_MULTIVIEW_CREATE_INFO) {
            const auto* mv = reinterpret_cast<const VkRenderPassMultiviewCreateInfo*>(s);
            for (uint32_t i = 0; i < mv->subpassCount; ++i) {
                out.view_mask |= mv->pViewMasks[i];
            }
        }
    }
    out.attachments = attachments_json(list);
    return out;
}

RenderPassInfo describe_render_pass(const VkRenderPassCreateInfo2& info) {
    std::vector<Attachment> list;
    for (uint32_t i = 0; i < info.attachmentCount; ++i) {
        list.push_back(from_description(i, info.pAttachments[i]));
    }
    RenderPassInfo out;
    out.subpasses = info.subpassCount;
    for (uint32_t s = 0; s < info.subpassCount; ++s) {
        const VkSubpassDescription2& sub = info.pSubpasses[s];
        out.view_mask |= sub.viewMask;
        for (uint32_t c = 0; sub.pResolveAttachments && c < sub.colorAttachmentCount; ++c) {
            mark_resolve(list, sub.pResolveAttachments[c].attachment);
        }
        for (auto* n = static_cast<const VkBaseInStructure*>(sub.pNext); n; n = n->pNext) {
            if (n->sType == VK_STRUCTURE_TYPE_SUBPASS_DESCRIPTION_DEPTH_STENCIL_RESOLVE) {
                const auto* r = reinterpret_cast<const VkSubpassDescriptionDepthStencilResolve*>(n);
                if (r->pDepthStencilResolveAttachment) {
                    mark_resolve(list, r->pDepthStencilResolveAttachment->attachment);
                }
            }
        }
    }
    out.attachments = attachments_json(list);
    return out;
}

std::string render_pass_fields(uint64_t device, const char* api, const VkRect2D& area,
                               uint32_t layers, const RenderPassInfo& pass) {
    JsonWriter json = common(device, WorkloadType::render_pass, api);
    json.field("width", area.extent.width)
        .field("height", area.extent.height)
        .field("layers", layers)
        .field("subpasses", pass.subpasses)
        .field("view_mask", pass.view_mask)
        .key("attachments")
        .raw(pass.attachments);
    return json.take();
}

std::string cached_render_pass_fields(uint64_t device, const char* api, const VkRect2D& area,
                                      uint32_t layers, const RenderPassInfo& pass) {
    RenderPassFieldsCache& c = *pass.cache;
    std::lock_guard lock(c.mutex);
    const bool same = c.valid && c.device == device && c.api == api && same_area(c.area, area) &&
                      c.layers == layers;
    if (!same) {
        c.fields = render_pass_fields(device, api, area, layers, pass);
        c.valid = true;
        c.device = device;
        c.api = api;
        c.area = area;
        c.layers = layers;
    }
    return c.fields;
}

RenderingDescription describe_rendering(uint64_t device, const char* api,
                                        const VkRenderingInfo& info, const ViewLookup& view) {
    RenderingDescription out;
    out.device = device;
    out.api = api;
    out.area = info.renderArea;
    out.layers = info.layerCount;
    out.view_mask = info.viewMask;
    std::vector<Attachment>& list = out.attachments;
    auto describe_view = [&](Attachment& a, VkImageView handle) {
        if (auto v = view(handle)) {
            a.format = v->format;
            a.samples = static_cast<uint32_t>(v->samples);
        }
    };
    for (uint32_t i = 0; i < info.colorAttachmentCount; ++i) {
        const VkRenderingAttachmentInfo& c = info.pColorAttachments[i];
        if (c.imageView == VK_NULL_HANDLE) {
            continue;
        }
        Attachment a;
        a.index = i;
        describe_view(a, c.imageView);
        a.load = c.loadOp;
        a.store = c.storeOp;
        a.resolve = c.resolveMode != VK_RESOLVE_MODE_NONE && c.resolveImageView != VK_NULL_HANDLE;
        list.push_back(a);
    }
    const VkRenderingAttachmentInfo* depth = info.pDepthAttachment;
    const VkRenderingAttachmentInfo* stencil = info.pStencilAttachment;
    if (depth && depth->imageView == VK_NULL_HANDLE) {
        depth = nullptr;
    }
    if (stencil && stencil->imageView == VK_NULL_HANDLE) {
        stencil = nullptr;
    }
    if (depth || stencil) {
        Attachment a;
        a.index = info.colorAttachmentCount;
        a.depth_stencil = true;
        describe_view(a, depth ? depth->imageView : stencil->imageView);
        for (const VkRenderingAttachmentInfo* d : {depth, stencil}) {
            if (d && d->resolveMode != VK_RESOLVE_MODE_NONE && d->resolveImageView) {
                a.resolve = true;
            }
        }
        if (depth) {
            a.load = depth->loadOp;
            a.store = depth->storeOp;
        }
        if (stencil) {
            a.stencil_load = stencil->loadOp;
            a.stencil_store = stencil->storeOp;
        }
        list.push_back(a);
    }
    return out;
}

std::string rendering_fields(const RenderingDescription& rendering) {
    RenderPassInfo pass;
    pass.subpasses = 1;
    pass.view_mask = rendering.view_mask;
    pass.attachments = attachments_json(rendering.attachments);
    return render_pass_fields(rendering.device, rendering.api, rendering.area, rendering.layers,
                              pass);
}

std::string rendering_fields(uint64_t device, const char* api, const VkRenderingInfo& info,
                             const ViewLookup& view) {
    return rendering_fields(describe_rendering(device, api, info, view));
}

std::string RenderingFieldsCache::fields(RenderingDescription rendering) {
    for (const std::optional<Entry>& e : entries_) {
        if (e && e->rendering == rendering) {
            return e->fields;
        }
    }
    std::string built = rendering_fields(rendering);
    entries_[next_] = Entry{std::move(rendering), built};
    next_ = (next_ + 1) % kEntries;
    return built;
}

std::string dispatch_fields(uint64_t device, const char* api, std::optional<Size3> groups,
                            Size3 base, std::optional<Size3> local_size) {
    JsonWriter json = common(device, WorkloadType::dispatch, api);
    size3(json, "groups", groups);
    size3(json, "base", base);
    size3(json, "local_size", local_size);
    invocations(json, groups, local_size);
    return json.take();
}

std::string dispatch_annex(Size3 groups, std::optional<Size3> local_size) {
    JsonWriter json;
    json.begin_object();
    size3(json, "groups", groups);
    invocations(json, groups, local_size);
    json.end_object();
    return json.take();
}

std::string trace_rays_fields(uint64_t device, const char* api, std::optional<Size3> size) {
    JsonWriter json = common(device, WorkloadType::trace_rays, api);
    for (int i = 0; i < 3; ++i) {
        static constexpr const char* kKeys[] = {"width", "height", "depth"};
        json.key(kKeys[i]);
        size ? json.uinteger((*size)[i]) : json.null();
    }
    return json.take();
}

std::string trace_rays_annex(Size3 size) {
    JsonWriter json;
    json.begin_object()
        .field("width", size[0])
        .field("height", size[1])
        .field("depth", size[2])
        .end_object();
    return json.take();
}

std::string transfer_fields(uint64_t device, const char* api, bool image, const char* kind,
                            std::optional<uint64_t> amount) {
    JsonWriter json =
        common(device, image ? WorkloadType::image_transfer : WorkloadType::buffer_transfer, api);
    json.field("kind", kind).key(image ? "pixels" : "bytes");
    amount ? json.uinteger(*amount) : json.null();
    return json.take();
}

std::string acceleration_structure_fields(uint64_t device, const char* api, const char* kind,
                                          uint32_t count) {
    JsonWriter json = common(device, WorkloadType::acceleration_structure, api);
    json.field("kind", kind).field("count", count);
    return json.take();
}

uint64_t region_pixels(const VkExtent3D& extent, uint32_t layers) {
    return uint64_t{extent.width} * extent.height * std::max(extent.depth, 1u) * layers;
}

std::optional<uint64_t> clear_pixels(const std::optional<ImageInfo>& image,
                                     std::span<const VkImageSubresourceRange> ranges) {
    if (!image) {
        return std::nullopt;
    }
    uint64_t total = 0;
    for (const VkImageSubresourceRange& r : ranges) {
        const uint32_t levels =
            r.levelCount == VK_REMAINING_MIP_LEVELS
                ? image->mip_levels - std::min(r.baseMipLevel, image->mip_levels)
                : r.levelCount;
        const uint32_t layers =
            r.layerCount == VK_REMAINING_ARRAY_LAYERS
                ? image->array_layers - std::min(r.baseArrayLayer, image->array_layers)
                : r.layerCount;
        for (uint32_t l = r.baseMipLevel; l < r.baseMipLevel + levels && l < 32; ++l) {
            const VkExtent3D e{std::max(image->extent.width >> l, 1u),
                               std::max(image->extent.height >> l, 1u),
                               std::max(image->extent.depth >> l, 1u)};
            total += region_pixels(e, layers);
        }
    }
    return total;
}

} // namespace vkscope::timeline
