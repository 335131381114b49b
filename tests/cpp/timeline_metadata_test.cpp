// What the WORKLOAD, SUBMIT and ANNEX payloads say, read back with an independent JSON parser.

#include "timeline/messages.hpp"
#include "timeline/metadata.hpp"

#include "core/wire_format.hpp"
#include "json_parse.hpp"

#include <gtest/gtest.h>

#include <atomic>
#include <cstring>
#include <thread>
#include <tuple>
#include <vector>

namespace vkscope::timeline {
namespace {

using test::Json;
using test::JsonParser;

Json parse(const std::string& text) {
    auto json = JsonParser::parse(text);
    EXPECT_TRUE(json) << text;
    return json ? *json : Json{};
}

Json members(const std::string& fields) {
    return parse("{" + fields + "}");
}

// The payload of a frame made by messages.cpp, and its header fields.
struct Frame {
    uint8_t type = 0;
    uint64_t sequence = 0;
    uint64_t tag = 0;
    Json payload;
};

Frame read_frame(const std::string& bytes) {
    Frame f;
    f.type = static_cast<uint8_t>(bytes[0]);
    size_t at = 1;
    if (f.type & 0x80) {
        std::memcpy(&f.sequence, bytes.data() + at, 8);
        at += 8;
    }
    std::memcpy(&f.tag, bytes.data() + at, 8);
    at += 8;
    uint32_t length = 0;
    std::memcpy(&length, bytes.data() + at, 4);
    at += 4;
    EXPECT_EQ(bytes.size(), at + length);
    f.payload = parse(bytes.substr(at));
    return f;
}

TEST(TimelineMetadata, RenderPassAttachmentsKeepTheirEnumerants) {
    VkAttachmentDescription attachments[3] = {};
    attachments[0].format = VK_FORMAT_R8G8B8A8_UNORM;
    attachments[0].samples = VK_SAMPLE_COUNT_4_BIT;
    attachments[0].loadOp = VK_ATTACHMENT_LOAD_OP_CLEAR;
    attachments[0].storeOp = VK_ATTACHMENT_STORE_OP_DONT_CARE;
    attachments[1].format = VK_FORMAT_R8G8B8A8_UNORM;
    attachments[1].samples = VK_SAMPLE_COUNT_1_BIT;
    attachments[1].loadOp = VK_ATTACHMENT_LOAD_OP_DONT_CARE;
    attachments[2].format = VK_FORMAT_D24_UNORM_S8_UINT;
    attachments[2].samples = VK_SAMPLE_COUNT_4_BIT;
    attachments[2].stencilLoadOp = VK_ATTACHMENT_LOAD_OP_CLEAR;
    const VkAttachmentReference color{0, VK_IMAGE_LAYOUT_COLOR_ATTACHMENT_OPTIMAL};
    const VkAttachmentReference resolve{1, VK_IMAGE_LAYOUT_COLOR_ATTACHMENT_OPTIMAL};
    const VkAttachmentReference depth{2, VK_IMAGE_LAYOUT_DEPTH_STENCIL_ATTACHMENT_OPTIMAL};
    VkSubpassDescription subpass{};
    subpass.colorAttachmentCount = 1;
    subpass.pColorAttachments = &color;
    subpass.pResolveAttachments = &resolve;
    subpass.pDepthStencilAttachment = &depth;
    const uint32_t masks[1] = {0b101};
    VkRenderPassMultiviewCreateInfo multiview{};
    multiview.sType = VK_STRUCTURE_TYPE_RENDER_PASS_MULTIVIEW_CREATE_INFO;
    multiview.subpassCount = 1;
    multiview.pViewMasks = masks;
    VkRenderPassCreateInfo info{};
    info.sType = VK_STRUCTURE_TYPE_RENDER_PASS_CREATE_INFO;
    info.pNext = &multiview;
    info.attachmentCount = 3;
    info.pAttachments = attachments;
    info.subpassCount = 1;
    info.pSubpasses = &subpass;

    const RenderPassInfo pass = describe_render_pass(info);
    EXPECT_EQ(pass.view_mask, 0b101u);
    const Json w = members(
        render_pass_fields(3, "vkCmdBeginRenderPass", VkRect2D{{0, 0}, {640, 480}}, 2, pass));
    EXPECT_EQ(w["type"].text, "renderpass");
    EXPECT_EQ(w["device"].text, "3");
    EXPECT_EQ(w["width"].text, "640");
    EXPECT_EQ(w["height"].text, "480");
    EXPECT_EQ(w["layers"].text, "2");
    EXPECT_EQ(w["view_mask"].text, "5");
    const Json& a = w["attachments"];
    ASSERT_EQ(a.items.size(), 3u);
    EXPECT_EQ(a[0]["kind"].text, "color");
    EXPECT_EQ(a[0]["samples"].text, "4");
    EXPECT_EQ(a[0]["load"].text, "1");  // CLEAR, not a flipped or named value
    EXPECT_EQ(a[0]["store"].text, "1"); // DONT_CARE
    EXPECT_FALSE(a[0]["resolve"].boolean);
    EXPECT_TRUE(a[1]["resolve"].boolean);
    EXPECT_EQ(a[2]["kind"].text, "depth_stencil");
    EXPECT_EQ(a[2]["stencil_load"].text, "1");
    EXPECT_EQ(a[2]["format"].text, std::to_string(VK_FORMAT_D24_UNORM_S8_UINT));
}

TEST(TimelineMetadata, ARenderPassKeepsItsLastInstancesFieldsForTheNextAlike) {
    RenderPassInfo pass;
    pass.attachments = R"([{"kind":"color"}])";
    const VkRect2D area{{0, 0}, {640, 480}};
    const std::string first = cached_render_pass_fields(3, "vkCmdBeginRenderPass", area, 1, pass);
    EXPECT_EQ(first, render_pass_fields(3, "vkCmdBeginRenderPass", area, 1, pass));
    // Kept: the same again, whatever the description says now (it cannot change while the
    // render pass lives; changed here only to see where the fields come from).
    pass.attachments = "[]";
    EXPECT_EQ(cached_render_pass_fields(3, "vkCmdBeginRenderPass", area, 1, pass), first);
    // Anything of the instance that differs builds them anew.
    const VkRect2D half{{0, 0}, {320, 480}};
    const VkRect2D moved{{1, 0}, {640, 480}};
    for (const auto& [device, api, a, layers] :
         {std::tuple{4ull, "vkCmdBeginRenderPass", area, 1u},
          std::tuple{3ull, "vkCmdBeginRenderPass2", area, 1u},
          std::tuple{3ull, "vkCmdBeginRenderPass", half, 1u},
          std::tuple{3ull, "vkCmdBeginRenderPass", moved, 1u},
          std::tuple{3ull, "vkCmdBeginRenderPass", area, 2u}}) {
        EXPECT_EQ(cached_render_pass_fields(device, api, a, layers, pass),
                  render_pass_fields(device, api, a, layers, pass))
            << api << " " << a.extent.width << " " << layers;
    }
}

TEST(TimelineMetadata, ARenderPassRecordedOnSeveralThreadsAtOnceGivesEachItsFields) {
    RenderPassInfo pass;
    pass.attachments = "[]";
    std::vector<std::thread> threads;
    std::atomic<int> wrong{0};
    for (uint32_t t = 0; t < 4; ++t) {
        threads.emplace_back([&pass, &wrong, t] {
            for (uint32_t i = 0; i < 2000; ++i) {
                // Two areas a thread, so that the cache changes under the others.
                const VkRect2D area{{0, 0}, {100 + t, 100 + (i % 2)}};
                const std::string got =
                    cached_render_pass_fields(1, "vkCmdBeginRenderPass", area, 1, pass);
                if (got != render_pass_fields(1, "vkCmdBeginRenderPass", area, 1, pass)) {
                    ++wrong;
                }
            }
        });
    }
    for (std::thread& t : threads) {
        t.join();
    }
    EXPECT_EQ(wrong.load(), 0);
}

TEST(TimelineMetadata, DynamicRenderingAttachmentsComeFromTheirViews) {
    VkRenderingAttachmentInfo colors[2] = {};
    colors[0].sType = VK_STRUCTURE_TYPE_RENDERING_ATTACHMENT_INFO;
    colors[0].imageView = reinterpret_cast<VkImageView>(uintptr_t{0x10});
    colors[0].loadOp = VK_ATTACHMENT_LOAD_OP_LOAD;
    colors[0].storeOp = VK_ATTACHMENT_STORE_OP_STORE;
    colors[0].resolveMode = VK_RESOLVE_MODE_AVERAGE_BIT;
    colors[0].resolveImageView = reinterpret_cast<VkImageView>(uintptr_t{0x11});
    colors[1].sType = VK_STRUCTURE_TYPE_RENDERING_ATTACHMENT_INFO; // no view: left out
    VkRenderingAttachmentInfo depth{};
    depth.sType = VK_STRUCTURE_TYPE_RENDERING_ATTACHMENT_INFO;
    depth.imageView = reinterpret_cast<VkImageView>(uintptr_t{0x20});
    depth.loadOp = VK_ATTACHMENT_LOAD_OP_CLEAR;
    depth.storeOp = VK_ATTACHMENT_STORE_OP_DONT_CARE;
    VkRenderingAttachmentInfo stencil = depth;
    stencil.loadOp = VK_ATTACHMENT_LOAD_OP_LOAD;
    VkRenderingInfo info{};
    info.sType = VK_STRUCTURE_TYPE_RENDERING_INFO;
    info.renderArea = {{0, 0}, {32, 16}};
    info.layerCount = 3;
    info.viewMask = 0;
    info.colorAttachmentCount = 2;
    info.pColorAttachments = colors;
    info.pDepthAttachment = &depth;
    info.pStencilAttachment = &stencil;
    const Json w = members(rendering_fields(
        1, "vkCmdBeginRendering", info, [](VkImageView v) -> std::optional<ImageViewInfo> {
            if (v == reinterpret_cast<VkImageView>(uintptr_t{0x20})) {
                return ImageViewInfo{VK_FORMAT_D32_SFLOAT_S8_UINT, VK_SAMPLE_COUNT_1_BIT};
            }
            return std::nullopt;
        }));
    EXPECT_EQ(w["layers"].text, "3");
    EXPECT_EQ(w["subpasses"].text, "1");
    const Json& a = w["attachments"];
    ASSERT_EQ(a.items.size(), 2u);
    EXPECT_EQ(a[0]["index"].text, "0");
    EXPECT_EQ(a[0]["format"].kind, Json::Kind::Null) << "unknown view";
    EXPECT_EQ(a[0]["load"].text, "0");
    EXPECT_TRUE(a[0]["resolve"].boolean);
    EXPECT_EQ(a[0]["stencil_load"].kind, Json::Kind::Null);
    EXPECT_EQ(a[1]["index"].text, "2");
    EXPECT_EQ(a[1]["kind"].text, "depth_stencil");
    EXPECT_EQ(a[1]["format"].text, std::to_string(VK_FORMAT_D32_SFLOAT_S8_UINT));
    EXPECT_EQ(a[1]["load"].text, "1");
    EXPECT_EQ(a[1]["stencil_load"].text, "0");
}

TEST(TimelineMetadata, ACommandBufferKeepsItsLastRenderingInstancesFieldsForTheNextAlike) {
    VkRenderingAttachmentInfo color{};
    color.sType = VK_STRUCTURE_TYPE_RENDERING_ATTACHMENT_INFO;
    color.imageView = reinterpret_cast<VkImageView>(uintptr_t{0x10});
    color.loadOp = VK_ATTACHMENT_LOAD_OP_CLEAR;
    color.storeOp = VK_ATTACHMENT_STORE_OP_STORE;
    VkRenderingInfo info{};
    info.sType = VK_STRUCTURE_TYPE_RENDERING_INFO;
    info.renderArea = {{0, 0}, {64, 64}};
    info.layerCount = 1;
    info.colorAttachmentCount = 1;
    info.pColorAttachments = &color;
    VkFormat format = VK_FORMAT_R8G8B8A8_UNORM;
    const ViewLookup view = [&format](VkImageView) -> std::optional<ImageViewInfo> {
        return ImageViewInfo{format, VK_SAMPLE_COUNT_1_BIT};
    };
    RenderingFieldsCache cache;
    const auto cached = [&] {
        return cache.fields(describe_rendering(1, "vkCmdBeginRendering", info, view));
    };
    const auto built = [&] { return rendering_fields(1, "vkCmdBeginRendering", info, view); };
    EXPECT_EQ(cached(), built());
    EXPECT_EQ(cached(), built());
    // What the instance says changed: its fields are written anew, not taken from the cache.
    color.loadOp = VK_ATTACHMENT_LOAD_OP_LOAD;
    EXPECT_EQ(cached(), built());
    EXPECT_NE(members(cached())["attachments"][0]["load"].text, "1");
    // A view made again under the same handle, of another format: compared by what it is.
    format = VK_FORMAT_B8G8R8A8_SRGB;
    EXPECT_EQ(members(cached())["attachments"][0]["format"].text,
              std::to_string(VK_FORMAT_B8G8R8A8_SRGB));
    // More instances than the cache keeps, in turn, each with its own fields.
    for (uint32_t round = 0; round < 3; ++round) {
        for (uint32_t width = 1; width <= 6; ++width) {
            info.renderArea.extent.width = width;
            EXPECT_EQ(cached(), built()) << width;
            EXPECT_EQ(members(cached())["width"].text, std::to_string(width));
        }
    }
}

TEST(TimelineMetadata, DispatchInvocationsOnlyWhenBothSizesAreKnown) {
    Json w = members(dispatch_fields(1, "vkCmdDispatch", Size3{4, 2, 1}, {}, Size3{8, 8, 1}));
    EXPECT_EQ(w["invocations"].text, "512");
    EXPECT_EQ(w["base"][0].text, "0");
    w = members(dispatch_fields(1, "vkCmdDispatch", Size3{4, 2, 1}, {}, std::nullopt));
    EXPECT_EQ(w["invocations"].kind, Json::Kind::Null);
    EXPECT_EQ(w["local_size"].kind, Json::Kind::Null);
    w = members(dispatch_fields(1, "vkCmdDispatchIndirect", std::nullopt, {}, Size3{64, 1, 1}));
    EXPECT_EQ(w["groups"].kind, Json::Kind::Null);
    EXPECT_EQ(w["invocations"].kind, Json::Kind::Null);
    // 2^32 groups of 2^10: more than 32 bits, never wrapped.
    w = members(dispatch_fields(1, "vkCmdDispatch", Size3{65536, 65536, 1}, {}, Size3{1024, 1, 1}));
    EXPECT_EQ(w["invocations"].text, "4398046511104");
}

TEST(TimelineMetadata, TransferAmounts) {
    Json w = members(transfer_fields(1, "vkCmdFillBuffer", false, "fill", std::nullopt));
    EXPECT_EQ(w["type"].text, "buffer_transfer");
    EXPECT_EQ(w["bytes"].kind, Json::Kind::Null);
    w = members(transfer_fields(1, "vkCmdBlitImage", true, "blit", 100));
    EXPECT_EQ(w["type"].text, "image_transfer");
    EXPECT_EQ(w["pixels"].text, "100");

    ImageInfo image;
    image.extent = {64, 32, 1};
    image.mip_levels = 3;
    image.array_layers = 6;
    const VkImageSubresourceRange ranges[2] = {
        {VK_IMAGE_ASPECT_COLOR_BIT, 0, VK_REMAINING_MIP_LEVELS, 0, 1},
        {VK_IMAGE_ASPECT_COLOR_BIT, 1, 1, 2, VK_REMAINING_ARRAY_LAYERS},
    };
    // Levels 64x32 + 32x16 + 16x8 of one layer, then level 1 of layers 2..5.
    EXPECT_EQ(clear_pixels(image, ranges), 2048u + 512u + 128u + 4u * 512u);
    EXPECT_EQ(clear_pixels(std::nullopt, ranges), std::nullopt);
}

TEST(TimelineMetadata, ReadbackAnnexes) {
    auto workload = std::make_shared<Workload>();
    workload->local_size = Size3{64, 1, 1};
    Readback dispatch;
    dispatch.workload = workload;
    dispatch.copies.push_back(ParameterCopy{nullptr, ParameterKind::dispatch, 0});
    const Size3 groups[1] = {{8, 2, 1}};
    Json a = parse(readback_annex(dispatch, groups));
    EXPECT_EQ(a["groups"][0].text, "8");
    EXPECT_EQ(a["invocations"].text, "1024");
    dispatch.ambiguous = true;
    a = parse(readback_annex(dispatch, groups));
    EXPECT_EQ(a["groups"].kind, Json::Kind::Null);
    EXPECT_TRUE(a["indirect_ambiguous"].boolean);

    Readback draws;
    draws.workload = workload;
    draws.draws = 3;
    draws.copies.push_back(ParameterCopy{nullptr, ParameterKind::draw_count, 10});
    draws.copies.push_back(ParameterCopy{nullptr, ParameterKind::draw_count, 4});
    const Size3 counts[2] = {{7, 0, 0}, {1000, 0, 0}};
    a = parse(readback_annex(draws, counts));
    EXPECT_EQ(a["draws"].text, "14") << "3 + 7 + min(1000, maxDrawCount 4)";
    draws.counts_lost = true;
    a = parse(readback_annex(draws, counts));
    EXPECT_EQ(a["draws"].kind, Json::Kind::Null);
    EXPECT_TRUE(a["draws_lost"].boolean);
}

TEST(TimelineMessages, WorkloadOfASplitRenderPassHasNoTotal) {
    Workload w;
    w.tag = 42;
    w.type = WorkloadType::render_pass;
    w.fields = R"("device":1,"type":"renderpass","api":"vkCmdBeginRendering")";
    w.draws = 5;
    Frame f = read_frame(workload_frame(w));
    EXPECT_EQ(f.type, 0x03);
    EXPECT_EQ(f.tag, 42u);
    EXPECT_EQ(f.payload["draws"].text, "5");
    EXPECT_FALSE(f.payload["split"].boolean);
    EXPECT_EQ(f.payload["tagged"].kind, Json::Kind::Null) << "only said when false";
    w.split = true;
    w.tagged = false;
    f = read_frame(workload_frame(w));
    EXPECT_EQ(f.payload["draws"].kind, Json::Kind::Null);
    EXPECT_TRUE(f.payload["split"].boolean);
    EXPECT_EQ(f.payload["tagged"].kind, Json::Kind::Bool);
    EXPECT_FALSE(f.payload["tagged"].boolean);
}

TEST(TimelineMessages, WorkloadsOtherThanRenderPassesAreDescribedWhenSent) {
    Workload w;
    w.tag = 8;
    w.type = WorkloadType::dispatch;
    w.device = 2;
    w.api = "vkCmdDispatchBase";
    w.size = Size3{1, 2, 3};
    w.base = Size3{4, 0, 0};
    w.local_size = Size3{4, 1, 1};
    Frame f = read_frame(workload_frame(w));
    EXPECT_EQ(f.payload["device"].text, "2");
    EXPECT_EQ(f.payload["type"].text, "dispatch");
    EXPECT_EQ(f.payload["api"].text, "vkCmdDispatchBase");
    EXPECT_EQ(f.payload["base"][0].text, "4");
    EXPECT_EQ(f.payload["invocations"].text, "24");
    EXPECT_EQ(f.payload["draws"].kind, Json::Kind::Null) << "no render pass fields";

    Workload t;
    t.type = WorkloadType::image_transfer;
    t.api = "vkCmdClearColorImage";
    t.kind = "clear_color";
    f = read_frame(workload_frame(t));
    EXPECT_EQ(f.payload["type"].text, "image_transfer");
    EXPECT_EQ(f.payload["kind"].text, "clear_color");
    EXPECT_EQ(f.payload["pixels"].kind, Json::Kind::Null) << "unknown, not 0";

    Workload a;
    a.type = WorkloadType::acceleration_structure;
    a.api = "vkCmdBuildAccelerationStructuresKHR";
    a.kind = "build";
    a.amount = 3;
    f = read_frame(workload_frame(a));
    EXPECT_EQ(f.payload["count"].text, "3");
}

TEST(TimelineMessages, SubmitCarriesItsIdAsSequence) {
    SubmitDescription s;
    s.device = 2;
    s.queue = 1;
    s.frame = 7;
    s.cpu_ns = 123456789012345;
    s.api = "vkQueueSubmit2";
    s.batch = 3;
    s.s_label = 99;
    const SubmittedWorkload workloads[2] = {{10, 0}, {11, 4}};
    Frame f = read_frame(submit_frame(99, s, workloads));
    EXPECT_EQ(f.type, 0x81);
    EXPECT_EQ(f.sequence, 99u);
    EXPECT_EQ(f.tag, 0u);
    EXPECT_EQ(f.payload["cpu_ns"].text, "123456789012345");
    EXPECT_EQ(f.payload["api"].text, "vkQueueSubmit2");
    EXPECT_EQ(f.payload["s_label"].text, "99");
    EXPECT_EQ(f.payload["workloads"][1][0].text, "11");
    EXPECT_EQ(f.payload["workloads"][1][1].text, "4");
    s.s_label = 0;
    f = read_frame(submit_frame(100, s, {}));
    EXPECT_EQ(f.payload["s_label"].kind, Json::Kind::Null);
    EXPECT_TRUE(f.payload["workloads"].items.empty());
}

TEST(TimelineMessages, AnnexAndLabels) {
    Frame f = read_frame(annex_frame(5, 6, R"({"draws":9})"));
    EXPECT_EQ(f.type, 0x82);
    EXPECT_EQ(f.sequence, 5u);
    EXPECT_EQ(f.tag, 6u);
    EXPECT_EQ(f.payload["draws"].text, "9");
    f = read_frame(labels_frame(1, 3, {"outer", "inner \"quoted\""}));
    EXPECT_EQ(f.type, 0x04);
    EXPECT_EQ(f.tag, 3u);
    EXPECT_EQ(f.payload["labels"][1].text, "inner \"quoted\"");
}

TEST(TimelineMessages, DeviceQueuesNameTheirFlags) {
    DeviceDescription d;
    d.name = "gpu";
    d.api_version = VK_MAKE_API_VERSION(0, 1, 3, 230);
    d.timestamp_period_ns = 1.5;
    d.queues.push_back(QueueDescription{0, 2, 1, VK_QUEUE_COMPUTE_BIT | VK_QUEUE_TRANSFER_BIT, 36});
    Frame f = read_frame(device_frame(7, d));
    EXPECT_EQ(f.tag, 7u);
    EXPECT_EQ(f.payload["api_version"].text, "1.3.230");
    EXPECT_EQ(f.payload["driver_name"].kind, Json::Kind::Null);
    EXPECT_EQ(f.payload["timestamp_period_ns"].text, "1.5");
    const Json& q = f.payload["queues"][0];
    EXPECT_EQ(q["family"].text, "2");
    EXPECT_EQ(q["flags"][0].text, "compute");
    EXPECT_EQ(q["flags"][1].text, "transfer");
    EXPECT_EQ(q["timestamp_valid_bits"].text, "36");
}

} // namespace
} // namespace vkscope::timeline
