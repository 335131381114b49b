// game_scale: a frame of the size games submit, for measuring what a profiler costs per workload
// (bench/workload_cost.py). Each frame holds --workloads N workloads (default 200), each waiting
// for the one before through a pipeline barrier (a memory dependency, as a game's passes have):
// a clear of a colour image first, then render passes of three draws, compute dispatches and
// buffer copies in the order render pass, dispatch, dispatch, copy, repeated; last, the image and
// the data buffer copied to host memory, which the host checks. --submits S spreads them over S
// command buffers, one vkQueueSubmit each (default 1); --record-thread records each frame on a
// thread of its own while the frame before runs, as engines with a render thread do.
//
// --floor timestamps|pipeline_statistics makes the program itself write what a profiler would:
// a BOTTOM_OF_PIPE timestamp before the first workload of each command buffer and after every
// workload, or a pipeline statistics query around every workload (every statistic the queue
// family can count), read on the host once the frame's fence has signalled. That is the floor:
// what the queries themselves cost on this device, with no layer at all.
//
// It times every frame from --time-frames on (all of them without it) and prints the medians:
// the frame from its first vkQueueSubmit until its fence has signalled, the vkQueueSubmit calls
// alone, and the recording of its command buffers (on the recording thread with
// --record-thread). Dispatches are two groups of 64 invocations running --compute-iterations / 16
// loop steps each (160 by default). Frames end like small_frame's: VK_EXT_frame_boundary on the
// last submission where the device has it, else the layer's `frame_submits` (= S).
// --frame-log PATH writes every frame's recording, vkQueueSubmit calls and fence wait to PATH,
// one line a frame, once the last frame is done: where in the frame a profiler's cost lands.
// Selected by name only: not part of --all.

#include "errors.h"
#include "kernels.h"
#include "pipelines.h"
#include "profiled.h"
#include "raster.h"
#include "resources.h"
#include "scenario.h"

#include <algorithm>
#include <array>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

namespace wl {

namespace {

using Clock = std::chrono::steady_clock;

constexpr uint32_t kLocalSize = 64;
constexpr uint32_t kGroups = 2;
constexpr uint32_t kRegionWords = kGroups * kLocalSize;
constexpr uint32_t kRegions = 16;   // dispatch k writes region k % kRegions
constexpr uint32_t kCopySlots = 16; // copy k writes slot k % kCopySlots, after the regions
constexpr uint32_t kDataWords = (kRegions + kCopySlots) * kRegionWords;
constexpr uint32_t kDrawsPerPass = 3;
constexpr Rgba kClear = {8, 16, 24, 255};
// Every statistic of a graphics and compute queue family, as a profiler would ask for them.
constexpr VkQueryPipelineStatisticFlags kGraphicsStatistics =
    (VK_QUERY_PIPELINE_STATISTIC_COMPUTE_SHADER_INVOCATIONS_BIT - 1);
constexpr uint32_t kSets = 2; // command buffers recorded while the frame before runs

enum class Kind { Clear, RenderPass, Dispatch, Copy, ReadImage, ReadData };

Kind kindOf(uint32_t index, uint32_t count) {
    if (index == 0) {
        return Kind::Clear;
    }
    if (index == count - 2) {
        return Kind::ReadImage;
    }
    if (index == count - 1) {
        return Kind::ReadData;
    }
    constexpr std::array<Kind, 4> pattern = {Kind::RenderPass, Kind::Dispatch, Kind::Dispatch,
                                             Kind::Copy};
    return pattern[(index - 1) % pattern.size()];
}

double median(std::vector<double> v) {
    if (v.empty()) {
        return 0;
    }
    std::sort(v.begin(), v.end());
    const size_t n = v.size();
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

double microseconds(Clock::duration d) {
    return std::chrono::duration<double, std::micro>(d).count();
}

// What the host expects of one frame, built while recording it.
struct Expected {
    std::array<std::optional<uint32_t>, kRegions> regions; // the seed of its last dispatch
    std::array<std::optional<uint32_t>, kCopySlots> slots; // the seed copied into it
    Pixels image;
};

class GameScaleScenario final : public Scenario {
public:
    ~GameScaleScenario() override { stopRecorder(); }

    void setup(Context& ctx) override {
        janitor_.attach(ctx.device);
        if (!ctx.hasGraphics()) {
            throw SkipScenario("needs a graphics queue");
        }
        const Options& o = ctx.options;
        workloads_ = o.workloads;
        submits_ = std::min(o.submits, workloads_);
        floor_ = o.floor;
        iterations_ = std::max(1u, o.computeIterations / 16);
        if (floor_ == Floor::Timestamps && ctx.main.timestampValidBits == 0) {
            throw SkipScenario("--floor timestamps needs a queue with timestamps");
        }
        if (floor_ == Floor::PipelineStatistics && !ctx.features.pipelineStatisticsQuery) {
            throw SkipScenario("--floor pipeline_statistics needs the pipelineStatisticsQuery "
                               "feature");
        }
        device_ = ctx.device;
        queue_ = ctx.main.queue;
        frameBoundary_ = ctx.features.frameBoundary;
        timestampPeriod_ = ctx.properties.limits.timestampPeriod;
        timeFrom_ = o.timeFramesFrom.value_or(0);
        frames_ = o.frames;
        if (!o.frameLog.empty()) {
            // Opened now, so that a path that cannot be written fails before the first frame.
            frameLog_.reset(std::fopen(o.frameLog.c_str(), "w"));
            if (!frameLog_) {
                throw std::runtime_error("--frame-log: cannot write " + o.frameLog);
            }
            std::fputs("frame record_us submit_us wait_us\n", frameLog_.get());
            frameLines_.reserve(frames_);
        }

        program_ = createComputeProgram(ctx, janitor_, spirv::lcgFixedComp(), 1, sizeof(LcgPush));
        data_ = createBuffer(ctx, janitor_, kDataWords * 4,
                             VK_BUFFER_USAGE_STORAGE_BUFFER_BIT | VK_BUFFER_USAGE_TRANSFER_SRC_BIT |
                                 VK_BUFFER_USAGE_TRANSFER_DST_BIT,
                             Memory::Device);
        dataReadback_ = createBuffer(ctx, janitor_, kDataWords * 4,
                                     VK_BUFFER_USAGE_TRANSFER_DST_BIT, Memory::Host);
        set_ = createStorageSet(ctx, janitor_, program_.setLayout, {data_.handle});
        image_ = createImage(ctx, janitor_,
                             ImageDesc{.format = kColorFormat,
                                       .usage = VK_IMAGE_USAGE_COLOR_ATTACHMENT_BIT |
                                                VK_IMAGE_USAGE_TRANSFER_SRC_BIT |
                                                VK_IMAGE_USAGE_TRANSFER_DST_BIT});
        imageReadback_ = createBuffer(ctx, janitor_, kTargetBytes, VK_BUFFER_USAGE_TRANSFER_DST_BIT,
                                      Memory::Host);
        pass_ = createLoadPass(ctx);
        framebuffer_ = createFramebuffer(ctx, janitor_, pass_, {image_.view});
        rectLayout_ = createRectLayout(ctx, janitor_);
        indices_ = createQuadIndices(ctx, janitor_);
        pipeline_ = createGraphicsPipeline(ctx, janitor_,
                                           {.vertex = spirv::rectVert(),
                                            .fragment = spirv::colorFrag(),
                                            .layout = rectLayout_,
                                            .renderPass = pass_});
        for (Set& s : sets_) {
            s.pool = createCommandPool(ctx, janitor_, ctx.main.family);
            s.cmds = allocateCommandBuffers(ctx, s.pool, submits_);
        }
        fence_ = createFence(ctx, janitor_);
        createQueries(ctx);
        if (o.recordThread) {
            recorder_ = std::thread([this] { recordLoop(); });
        }
    }

    void frame(Context& ctx, uint32_t frameIndex) override {
        Set& set = sets_[frameIndex % kSets];
        if (recorder_.joinable()) {
            // This frame was asked for with the frame before (the first one here); the next one
            // is recorded while this one runs.
            if (frameIndex == 0) {
                requestRecording(0);
            }
            waitRecorded(frameIndex);
            if (frameIndex + 1 < frames_) {
                requestRecording(frameIndex + 1);
            }
        } else {
            record(set, frameIndex);
        }
        const Clock::time_point start = Clock::now();
        Clock::duration submitting{};
        for (uint32_t s = 0; s < submits_; ++s) {
            const bool last = s + 1 == submits_;
            const VkFrameBoundaryEXT boundary{
                .sType = VK_STRUCTURE_TYPE_FRAME_BOUNDARY_EXT,
                .flags = VK_FRAME_BOUNDARY_FRAME_END_BIT_EXT,
                .frameID = frameIndex,
            };
            const VkSubmitInfo submit{
                .sType = VK_STRUCTURE_TYPE_SUBMIT_INFO,
                .pNext = last && frameBoundary_ ? &boundary : nullptr,
                .commandBufferCount = 1,
                .pCommandBuffers = &set.cmds[s],
            };
            const Clock::time_point before = Clock::now();
            VK_CHECK(wl_profiled_submit(queue_, 1, &submit, last ? fence_ : VK_NULL_HANDLE));
            submitting += Clock::now() - before;
        }
        ctx.frameEnded = frameBoundary_;
        const Clock::time_point waitStart = Clock::now();
        waitFence(ctx, fence_);
        const Clock::time_point end = Clock::now();
        const Clock::duration whole = end - start;
        if (frameLog_) {
            frameLines_.push_back({frameIndex, set.recordUs, microseconds(submitting),
                                   microseconds(end - waitStart)});
            if (frameIndex + 1 == frames_) {
                writeFrameLog();
            }
        }
        if (frameIndex >= timeFrom_) {
            frameUs_.push_back(microseconds(whole));
            submitUs_.push_back(microseconds(submitting));
            recordUs_.push_back(set.recordUs);
        }
        readQueries(frameIndex);
        verify(set.expected, frameIndex);
    }

    std::string summary() const override {
        char line[320];
        std::snprintf(line, sizeof line,
                      "workload cost: workloads %u submits %u floor %s record_thread %s frames %zu "
                      "frame_us %.3f submit_us %.3f record_us %.3f",
                      workloads_, submits_, floorName(floor_), recorder_.joinable() ? "yes" : "no",
                      frameUs_.size(), median(frameUs_), median(submitUs_), median(recordUs_));
        std::string out = line;
        if (!gpuUs_.empty()) {
            std::snprintf(line, sizeof line, " gpu_us %.3f", median(gpuUs_));
            out += line;
        }
        return out;
    }

private:
    struct FrameLine {
        uint32_t frame;
        double recordUs;
        double submitUs;
        double waitUs;
    };
    struct FileCloser {
        void operator()(std::FILE* f) const { std::fclose(f); }
    };

    // Written at the end, not frame by frame: no file write inside the frames it times.
    void writeFrameLog() {
        std::FILE* f = frameLog_.get();
        for (const FrameLine& l : frameLines_) {
            std::fprintf(f, "%u %.3f %.3f %.3f\n", l.frame, l.recordUs, l.submitUs, l.waitUs);
        }
        if (std::fflush(f) != 0) {
            throw std::runtime_error("--frame-log: writing the frames failed");
        }
    }

    struct Set {
        VkCommandPool pool = VK_NULL_HANDLE;
        std::vector<VkCommandBuffer> cmds;
        Expected expected;
        double recordUs = 0;
    };

    static const char* floorName(Floor f) {
        switch (f) {
        case Floor::Timestamps:
            return "timestamps";
        case Floor::PipelineStatistics:
            return "pipeline_statistics";
        case Floor::None:
            break;
        }
        return "none";
    }

    // Loads what the image holds and keeps it ready for the next render pass: the barrier before
    // each workload moves the image between the clear's, the passes' and the copy's layouts.
    VkRenderPass createLoadPass(Context& ctx) {
        const VkAttachmentDescription attachment{
            .format = kColorFormat,
            .samples = VK_SAMPLE_COUNT_1_BIT,
            .loadOp = VK_ATTACHMENT_LOAD_OP_LOAD,
            .storeOp = VK_ATTACHMENT_STORE_OP_STORE,
            .stencilLoadOp = VK_ATTACHMENT_LOAD_OP_DONT_CARE,
            .stencilStoreOp = VK_ATTACHMENT_STORE_OP_DONT_CARE,
            .initialLayout = VK_IMAGE_LAYOUT_COLOR_ATTACHMENT_OPTIMAL,
            .finalLayout = VK_IMAGE_LAYOUT_COLOR_ATTACHMENT_OPTIMAL,
        };
        const VkAttachmentReference color{0, VK_IMAGE_LAYOUT_COLOR_ATTACHMENT_OPTIMAL};
        const VkSubpassDescription subpass{
            .pipelineBindPoint = VK_PIPELINE_BIND_POINT_GRAPHICS,
            .colorAttachmentCount = 1,
            .pColorAttachments = &color,
        };
        const VkRenderPassCreateInfo info{
            .sType = VK_STRUCTURE_TYPE_RENDER_PASS_CREATE_INFO,
            .attachmentCount = 1,
            .pAttachments = &attachment,
            .subpassCount = 1,
            .pSubpasses = &subpass,
        };
        VkRenderPass pass = VK_NULL_HANDLE;
        VK_CHECK(vkCreateRenderPass(ctx.device, &info, nullptr, &pass));
        VkDevice device = ctx.device;
        janitor_.defer([device, pass] { vkDestroyRenderPass(device, pass, nullptr); });
        return pass;
    }

    void createQueries(Context& ctx) {
        if (floor_ == Floor::None) {
            return;
        }
        const bool stamps = floor_ == Floor::Timestamps;
        VkQueryPipelineStatisticFlags statistics = 0;
        if (!stamps) {
            statistics = (ctx.main.flags & VK_QUEUE_GRAPHICS_BIT ? kGraphicsStatistics : 0) |
                         (ctx.main.flags & VK_QUEUE_COMPUTE_BIT
                              ? VK_QUERY_PIPELINE_STATISTIC_COMPUTE_SHADER_INVOCATIONS_BIT
                              : 0);
            values_ = static_cast<uint32_t>(__builtin_popcount(statistics));
        }
        queryCount_ = stamps ? workloads_ + submits_ : workloads_;
        const VkQueryPoolCreateInfo info{
            .sType = VK_STRUCTURE_TYPE_QUERY_POOL_CREATE_INFO,
            .queryType = stamps ? VK_QUERY_TYPE_TIMESTAMP : VK_QUERY_TYPE_PIPELINE_STATISTICS,
            .queryCount = queryCount_,
            .pipelineStatistics = statistics,
        };
        VK_CHECK(vkCreateQueryPool(ctx.device, &info, nullptr, &queries_));
        VkDevice device = ctx.device;
        VkQueryPool pool = queries_;
        janitor_.defer([device, pool] { vkDestroyQueryPool(device, pool, nullptr); });
        results_.resize(size_t{queryCount_} * values_);
    }

    // The frame's first and last workloads of command buffer `s`: [first, end).
    uint32_t firstOf(uint32_t s) const { return workloads_ * s / submits_; }

    void record(Set& set, uint32_t frameIndex) {
        struct Call {
            GameScaleScenario* self;
            Set* set;
            uint32_t frame;
        } call{this, &set, frameIndex};
        wl_profiled_record(
            [](void* c) {
                auto* call = static_cast<Call*>(c);
                call->self->recordFrame(*call->set, call->frame);
            },
            &call);
    }

    void recordFrame(Set& set, uint32_t frameIndex) {
        const Clock::time_point start = Clock::now();
        VK_CHECK(vkResetCommandPool(device_, set.pool, 0));
        Expected& e = set.expected;
        e.regions.fill(std::nullopt);
        e.slots.fill(std::nullopt);
        e.image = solidPixels(kClear);
        uint32_t lastRegion = 0;
        uint32_t dispatches = 0;
        uint32_t copies = 0;
        uint32_t passes = 0;
        uint32_t query = 0;
        // The clear that opens the frame discards what the image held.
        VkImageLayout layout = VK_IMAGE_LAYOUT_UNDEFINED;
        for (uint32_t s = 0; s < submits_; ++s) {
            VkCommandBuffer cmd = set.cmds[s];
            beginCommands(cmd);
            const uint32_t first = firstOf(s);
            const uint32_t end = firstOf(s + 1);
            if (floor_ != Floor::None) {
                const uint32_t count = floor_ == Floor::Timestamps ? end - first + 1 : end - first;
                vkCmdResetQueryPool(cmd, queries_, query, count);
            }
            vkCmdBindPipeline(cmd, VK_PIPELINE_BIND_POINT_GRAPHICS, pipeline_);
            setFullViewport(cmd);
            vkCmdBindPipeline(cmd, VK_PIPELINE_BIND_POINT_COMPUTE, program_.pipeline);
            vkCmdBindDescriptorSets(cmd, VK_PIPELINE_BIND_POINT_COMPUTE, program_.layout, 0, 1,
                                    &set_, 0, nullptr);
            if (floor_ == Floor::Timestamps) {
                vkCmdWriteTimestamp(cmd, VK_PIPELINE_STAGE_BOTTOM_OF_PIPE_BIT, queries_, query++);
            }
            for (uint32_t i = first; i < end; ++i) {
                const Kind kind = kindOf(i, workloads_);
                dependency(cmd, kind, layout);
                if (floor_ == Floor::PipelineStatistics) {
                    vkCmdBeginQuery(cmd, queries_, query, 0);
                }
                switch (kind) {
                case Kind::Clear: {
                    const VkClearColorValue color = clearValueOf(kClear).color;
                    const VkImageSubresourceRange range = image_.range();
                    vkCmdClearColorImage(cmd, image_.handle, VK_IMAGE_LAYOUT_TRANSFER_DST_OPTIMAL,
                                         &color, 1, &range);
                } break;
                case Kind::RenderPass: {
                    const VkRenderPassBeginInfo begin{
                        .sType = VK_STRUCTURE_TYPE_RENDER_PASS_BEGIN_INFO,
                        .renderPass = pass_,
                        .framebuffer = framebuffer_,
                        .renderArea = {{0, 0}, {kTargetSize, kTargetSize}},
                    };
                    vkCmdBeginRenderPass(cmd, &begin, VK_SUBPASS_CONTENTS_INLINE);
                    const uint32_t firstDraw = passes * kDrawsPerPass;
                    const uint32_t salt = frameIndex * 7 + passes;
                    recordRects(cmd, rectLayout_, indices_.handle, firstDraw, kDrawsPerPass, salt,
                                Blend::Replace);
                    drawRects(e.image, firstDraw, kDrawsPerPass, salt, Blend::Replace);
                    vkCmdEndRenderPass(cmd);
                    ++passes;
                } break;
                case Kind::Dispatch: {
                    lastRegion = dispatches % kRegions;
                    const uint32_t seed = seedOf(frameIndex, dispatches);
                    const LcgPush push{lastRegion * kRegionWords, 0, seed, iterations_};
                    vkCmdPushConstants(cmd, program_.layout, VK_SHADER_STAGE_COMPUTE_BIT, 0,
                                       sizeof(push), &push);
                    vkCmdDispatch(cmd, kGroups, 1, 1);
                    e.regions[lastRegion] = seed;
                    ++dispatches;
                } break;
                case Kind::Copy: {
                    const uint32_t slot = copies % kCopySlots;
                    const VkBufferCopy region{VkDeviceSize{lastRegion} * kRegionWords * 4,
                                              VkDeviceSize{kRegions + slot} * kRegionWords * 4,
                                              kRegionWords * 4};
                    vkCmdCopyBuffer(cmd, data_.handle, data_.handle, 1, &region);
                    e.slots[slot] = e.regions[lastRegion];
                    ++copies;
                } break;
                case Kind::ReadImage: {
                    const VkBufferImageCopy region{.imageSubresource = image_.layers(),
                                                   .imageExtent = image_.extent()};
                    vkCmdCopyImageToBuffer(cmd, image_.handle, VK_IMAGE_LAYOUT_TRANSFER_SRC_OPTIMAL,
                                           imageReadback_.handle, 1, &region);
                } break;
                case Kind::ReadData: {
                    const VkBufferCopy region{0, 0, kDataWords * 4};
                    vkCmdCopyBuffer(cmd, data_.handle, dataReadback_.handle, 1, &region);
                } break;
                }
                if (floor_ == Floor::PipelineStatistics) {
                    vkCmdEndQuery(cmd, queries_, query++);
                } else if (floor_ == Floor::Timestamps) {
                    vkCmdWriteTimestamp(cmd, VK_PIPELINE_STAGE_BOTTOM_OF_PIPE_BIT, queries_,
                                        query++);
                }
            }
            if (s + 1 == submits_) {
                transferToHostBarrier(cmd);
            }
            endCommands(cmd);
        }
        set.recordUs = microseconds(Clock::now() - start);
    }

    // Before each workload: it waits for everything before it, writes included, and finds the
    // image in the layout it uses.
    void dependency(VkCommandBuffer cmd, Kind kind, VkImageLayout& layout) const {
        const VkMemoryBarrier memory{
            .sType = VK_STRUCTURE_TYPE_MEMORY_BARRIER,
            .srcAccessMask = VK_ACCESS_MEMORY_WRITE_BIT,
            .dstAccessMask = VK_ACCESS_MEMORY_READ_BIT | VK_ACCESS_MEMORY_WRITE_BIT,
        };
        const VkImageLayout wanted =
            kind == Kind::Clear        ? VK_IMAGE_LAYOUT_TRANSFER_DST_OPTIMAL
            : kind == Kind::RenderPass ? VK_IMAGE_LAYOUT_COLOR_ATTACHMENT_OPTIMAL
            : kind == Kind::ReadImage  ? VK_IMAGE_LAYOUT_TRANSFER_SRC_OPTIMAL
                                       : layout;
        const VkImageMemoryBarrier image{
            .sType = VK_STRUCTURE_TYPE_IMAGE_MEMORY_BARRIER,
            .srcAccessMask = VK_ACCESS_MEMORY_WRITE_BIT,
            .dstAccessMask = VK_ACCESS_MEMORY_READ_BIT | VK_ACCESS_MEMORY_WRITE_BIT,
            .oldLayout = layout,
            .newLayout = wanted,
            .srcQueueFamilyIndex = VK_QUEUE_FAMILY_IGNORED,
            .dstQueueFamilyIndex = VK_QUEUE_FAMILY_IGNORED,
            .image = image_.handle,
            .subresourceRange = image_.range(),
        };
        const uint32_t transitions = wanted != layout ? 1 : 0;
        vkCmdPipelineBarrier(cmd, VK_PIPELINE_STAGE_ALL_COMMANDS_BIT,
                             VK_PIPELINE_STAGE_ALL_COMMANDS_BIT, 0, 1, &memory, 0, nullptr,
                             transitions, &image);
        layout = wanted;
    }

    // The floor's results, read on the host as an application reads its own queries.
    void readQueries(uint32_t frameIndex) {
        if (floor_ == Floor::None) {
            return;
        }
        const uint32_t stride = values_ * sizeof(uint64_t);
        VK_CHECK(vkGetQueryPoolResults(device_, queries_, 0, queryCount_,
                                       results_.size() * sizeof(uint64_t), results_.data(), stride,
                                       VK_QUERY_RESULT_64_BIT | VK_QUERY_RESULT_WAIT_BIT));
        if (floor_ == Floor::Timestamps) {
            const uint64_t first = results_.front();
            const uint64_t last = results_.back();
            if (last < first) {
                throw VerifyError("frame " + std::to_string(frameIndex) +
                                  ": the last timestamp is earlier than the first");
            }
            if (frameIndex >= timeFrom_) {
                gpuUs_.push_back(double(last - first) * timestampPeriod_ / 1e3);
            }
        }
    }

    void verify(const Expected& e, uint32_t frameIndex) const {
        const std::string frame = "frame " + std::to_string(frameIndex);
        const LcgModel model(iterations_);
        const uint32_t* words = dataReadback_.as<uint32_t>();
        const auto check = [&](uint32_t at, uint32_t seed, uint32_t region, const char* what) {
            for (uint32_t i : {0u, kRegionWords - 1}) {
                const uint32_t expected = model(seed, region * kRegionWords + i);
                if (words[at + i] != expected) {
                    throw VerifyError(frame + ", " + what + " " +
                                      std::to_string(at / kRegionWords) + ": word " +
                                      std::to_string(i) + " is " + std::to_string(words[at + i]) +
                                      ", expected " + std::to_string(expected));
                }
            }
        };
        for (uint32_t r = 0; r < kRegions; ++r) {
            if (e.regions[r]) {
                check(r * kRegionWords, *e.regions[r], r, "region");
            }
        }
        for (uint32_t s = 0; s < kCopySlots; ++s) {
            if (e.slots[s]) {
                // A copy holds the region most recently written before it: find which one from
                // the seed it must hold.
                const uint32_t seed = *e.slots[s];
                const uint32_t region = regionOfSeed(frameIndex, seed);
                check((kRegions + s) * kRegionWords, seed, region, "copy slot");
            }
        }
        expectPixels(frame + ", image", imageReadback_.mapped, e.image);
    }

    uint32_t seedOf(uint32_t frameIndex, uint32_t dispatch) const {
        return 0x2545f491u * (frameIndex + 1) + 0x9e3779b9u * dispatch;
    }

    uint32_t regionOfSeed(uint32_t frameIndex, uint32_t seed) const {
        for (uint32_t d = 0; d < workloads_; ++d) {
            if (seedOf(frameIndex, d) == seed) {
                return d % kRegions;
            }
        }
        throw VerifyError("no dispatch has seed " + std::to_string(seed));
    }

    // -- the recording thread (--record-thread) --

    void recordLoop() {
        std::unique_lock lock(mutex_);
        for (;;) {
            cv_.wait(lock, [&] { return stopping_ || requested_ > recorded_; });
            if (stopping_) {
                return;
            }
            const uint32_t frameIndex = requested_ - 1;
            lock.unlock();
            std::string failure;
            VkResult result = VK_SUCCESS;
            try {
                record(sets_[frameIndex % kSets], frameIndex);
            } catch (const VulkanError& e) {
                failure = e.what();
                result = e.result;
            } catch (const std::exception& e) {
                failure = e.what();
                result = VK_ERROR_UNKNOWN;
            }
            lock.lock();
            failure_ = failure;
            failureResult_ = result;
            recorded_ = frameIndex + 1;
            cv_.notify_all();
        }
    }

    // Frame `frameIndex` is to be recorded (its command buffers are not in use: the frame that
    // used them last has been waited for).
    void requestRecording(uint32_t frameIndex) {
        std::lock_guard lock(mutex_);
        requested_ = frameIndex + 1;
        cv_.notify_all();
    }

    void waitRecorded(uint32_t frameIndex) {
        std::unique_lock lock(mutex_);
        cv_.wait(lock, [&] { return recorded_ > frameIndex; });
        if (!failure_.empty()) {
            throw VulkanError(failureResult_, "recording thread: " + failure_);
        }
    }

    void stopRecorder() {
        if (!recorder_.joinable()) {
            return;
        }
        {
            std::lock_guard lock(mutex_);
            stopping_ = true;
            cv_.notify_all();
        }
        recorder_.join();
    }

    Janitor janitor_;
    uint32_t workloads_ = 0;
    uint32_t submits_ = 1;
    Floor floor_ = Floor::None;
    uint32_t iterations_ = 1;
    uint32_t timeFrom_ = 0;
    uint32_t frames_ = 1;
    bool frameBoundary_ = false;
    float timestampPeriod_ = 1;
    VkDevice device_ = VK_NULL_HANDLE;
    VkQueue queue_ = VK_NULL_HANDLE;
    ComputeProgram program_;
    Buffer data_;
    Buffer dataReadback_;
    VkDescriptorSet set_ = VK_NULL_HANDLE;
    Image image_;
    Buffer imageReadback_;
    VkRenderPass pass_ = VK_NULL_HANDLE;
    VkFramebuffer framebuffer_ = VK_NULL_HANDLE;
    VkPipelineLayout rectLayout_ = VK_NULL_HANDLE;
    Buffer indices_;
    VkPipeline pipeline_ = VK_NULL_HANDLE;
    std::array<Set, kSets> sets_;
    VkFence fence_ = VK_NULL_HANDLE;
    VkQueryPool queries_ = VK_NULL_HANDLE;
    uint32_t queryCount_ = 0;
    uint32_t values_ = 1; // per query
    std::vector<uint64_t> results_;
    std::vector<double> frameUs_;
    std::vector<double> submitUs_;
    std::vector<double> recordUs_;
    std::vector<double> gpuUs_;
    std::unique_ptr<std::FILE, FileCloser> frameLog_;
    std::vector<FrameLine> frameLines_;

    std::thread recorder_;
    std::mutex mutex_;
    std::condition_variable cv_;
    uint32_t requested_ = 0; // frames asked for
    uint32_t recorded_ = 0;  // frames recorded
    bool stopping_ = false;
    std::string failure_;
    VkResult failureResult_ = VK_SUCCESS;
};

} // namespace

std::unique_ptr<Scenario> makeGameScaleScenario() {
    return std::make_unique<GameScaleScenario>();
}

} // namespace wl
