#pragma once
// Builds one command buffer's layer command stream while the application records it, and decides
// where the layer's own commands go (tags, parameter copies). It makes no Vulkan call: whatever it
// needs written into the command buffer goes through a RecordSink, so it is tested without a GPU.
//
// One recorder belongs to one command buffer, which one thread at a time records (the
// application's external synchronisation), so nothing here is shared or locked.

#include "timeline/command_stream.hpp"

#include <array>
#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace vkscope::timeline {

// Bytes of an application buffer to copy into a layer-owned slot.
struct ParameterRequest {
    uint64_t buffer = 0; // VkBuffer
    uint64_t offset = 0;
    uint32_t bytes = 0;
};

class RecordSink {
public:
    virtual ~RecordSink() = default;
    // Debug labels "t<tag>" around a workload.
    virtual void begin_tag(uint64_t tag) = 0;
    virtual void end_tag() = 0;
    // Records copies of the requested bytes into fresh layer-owned slots (with the barriers they
    // need) at this point of the command buffer. out[i] is null when request i cannot be copied.
    virtual void copy_parameters(std::span<const ParameterRequest> requests,
                                 std::span<ParameterSlot*> out) = 0;
};

struct RecordOptions {
    // Write t<tag> labels at all (the device has a label extension, and the frame is captured).
    bool tags = true;
    // Some drivers (Mesa before 23.1) keep a label stack per command buffer that underflows when a
    // label begun in an earlier command buffer ends, and crash on the next label begin there. With
    // this set, the recorder begins no tag in a command buffer after such an end, and leaves the
    // end of a tag begun elsewhere to a layer command buffer submitted after this one.
    bool defer_foreign_ends = false;
    // Outside captured frames: workloads outside render passes are only logged, and become
    // commands of the stream when a captured frame submits the command buffer (materialize()),
    // which most recordings made there never are; their instruments' marks say why there are
    // none (InstrumentRecording::unmarked()).
    bool defer_workloads = false;
    // The command buffer's instruments, by slot (begun before the recorder): asked for a mark
    // right before and right after each workload (a render pass instance: before its first begin,
    // after its final end), and told of the parameter copies between workloads. None: no mark is
    // asked for or kept.
    std::span<const std::unique_ptr<InstrumentRecording>> instruments;
    uint64_t device = 0; // the layer's id of the device, for logged workloads
    // Which instruments measure each workload (null: all of them): the one place where that is
    // decided per workload, as it begins. A cost budget that instruments a rotating subset of a
    // frame's workloads chooses here; an instrument left out writes nothing around the workload
    // and is told of it (Interruption::left_out), so that it measures nothing across it.
    InstrumentChoice (*choose)(const Workload& w, void* context) = nullptr;
    void* choose_context = nullptr;
    // Time what the instruments' calls take around the workloads that some instrument measures
    // (instrument_ns()): a cost budget tells what the application's own recording took from it.
    bool time_instruments = false;
};

struct RenderPassFlags {
    bool resuming = false;
    bool suspending = false;
    bool secondaries = false; // its first subpass executes secondary command buffers
};

class Recorder {
public:
    Recorder();
    Recorder(const Recorder&) = delete;
    Recorder& operator=(const Recorder&) = delete;

    // vkBeginCommandBuffer (which also resets).
    void begin(bool primary, bool one_time_submit, RecordOptions options = {});
    // vkResetCommandBuffer, vkResetCommandPool, vkFreeCommandBuffers.
    void reset();
    // vkEndCommandBuffer: settles what is still open.
    void end();

    void marker_begin(std::string_view name);
    void marker_end();

    // A workload outside render passes: tags it and, when its parameters are indirect, copies
    // them first so that the copy is not part of the workload's own time. The workload's command
    // goes between begin_workload and end_workload; the caller describes the returned workload.
    Workload& begin_workload(WorkloadType type, RecordSink& sink,
                             const ParameterRequest* indirect = nullptr,
                             ParameterKind kind = ParameterKind::dispatch);
    void end_workload(RecordSink& sink);

    // RecordOptions::defer_workloads: a workload outside render passes is only logged (nothing is
    // written around it); the caller describes it, records the application's command and logs
    // it. Inline: it is most of what such a recording costs.
    bool deferring() const { return options_.defer_workloads; }
    void log_workload(WorkloadType type, const WorkloadInfo& info) {
        has_workloads_ = true;
        // Published to submitting threads by the queue submission that follows the recording.
        has_deferred_.store(true, std::memory_order_relaxed);
        deferred_.emplace_back().assign(static_cast<uint32_t>(commands_->size()), type, info);
    }
    // Turns logged workloads into stream commands. Safe to call from several submitting threads
    // (a SIMULTANEOUS_USE command buffer), never while the command buffer is being recorded.
    void materialize() const;

    // vkCmdBeginRenderPass* / vkCmdBeginRendering*; `fields` is only used by a beginning (not
    // resuming) instance.
    void begin_render_pass(std::string fields, RenderPassFlags flags, RecordSink& sink);
    void end_render_pass(RecordSink& sink);

    // Draws: inside a render pass, or in a secondary that continues one.
    void count_draws(uint64_t n) { draws_ += n; }
    // A draw whose count the GPU reads from `count`; at most max_draws.
    void count_indirect_draws(const ParameterRequest& count, uint32_t max_draws);

    // vkCmdExecuteCommands: inlines the secondary's stream; draws it recorded for the render pass
    // it continues count for the current one, once per execution.
    void execute(const Recorder& secondary);

    // Logged workloads are missing until materialize(): what is left (labels, render passes)
    // keeps a queue's label stack right in frames that are not captured.
    CommandStream stream() const {
        return {*commands_, marks_, options_.instruments.size(), mark_objects_};
    }
    // The recording's commands, kept whole for a reader on another thread (the interpretation
    // worker) whatever the application does to the command buffer meanwhile: reset() and
    // materialize() leave pinned storage as it is. Its marks are not kept: a worker that pairs
    // them is handed a copy (interpretation_worker.hpp).
    std::shared_ptr<const std::vector<Command>> pinned_commands() const {
        pinned_.store(true, std::memory_order_relaxed);
        return commands_;
    }
    // The command buffer needs an s<submitID> label around each submission: its workloads can run
    // more than once, or have data that only a submission can name.
    bool needs_submit_label() const { return has_workloads_ && needs_submit_label_; }
    bool has_workloads() const { return has_workloads_; }
    // What the instruments' calls took in this recording (RecordOptions::time_instruments), in
    // cycle_count()'s counts: cycles_as_ns() gives it as a share of the recording's span.
    uint64_t instrument_cycles() const { return instrument_cycles_; }
    bool in_render_pass() const { return part_ != nullptr; }

private:
    struct PendingCount {
        ParameterRequest request;
        uint32_t max_draws = 0;
    };

    // Asks the instruments that measure `w` for their marks at its start or finish; their index
    // in marks_, or kNoMarks without instruments (inline: the timeline alone pays only the test).
    uint32_t mark(bool start, const Workload* w, const RenderPassFlags* render_pass = nullptr) {
        if (options_.instruments.empty()) {
            return kNoMarks;
        }
        return options_.time_instruments ? timed_marks(start, w, render_pass)
                                         : instrument_marks(start, w, render_pass);
    }
    uint32_t timed_marks(bool start, const Workload* w, const RenderPassFlags* render_pass);
    uint32_t instrument_marks(bool start, const Workload* w, const RenderPassFlags* render_pass);
    // Appends instrument `slot`'s mark to marks_ and keeps mark_objects_ up.
    void add_mark(size_t slot, Mark m) {
        marks_.push_back(m);
        note_object(MarkObject{m.object(), static_cast<uint32_t>(slot)});
    }
    void note_object(const MarkObject& o) {
        if (o.object && o.object != last_objects_[o.slot]) {
            last_objects_[o.slot] = o.object;
            mark_objects_.push_back(o);
        }
    }
    // The same for a workload some instrument is left out of.
    uint32_t chosen_marks(bool start, const Workload& w, const RenderPassFlags* render_pass);
    void restart(uint32_t at, uint32_t below, uint8_t measured);
    // The instruments that measure `w`, chosen as it begins (RecordOptions::choose).
    void choose(Workload& w) {
        if (options_.choose && !options_.instruments.empty()) {
            choose_with_options(w);
        }
    }
    void choose_with_options(Workload& w);
    // Parameter copies follow: what ran between two workloads was no workload.
    void copying();
    void flush_draws();
    void copy_counts(RecordSink& sink, RenderPassPart& part);
    bool can_tag() const { return options_.tags && !(options_.defer_foreign_ends && foreign_end_); }
    void tag_begin(RecordSink& sink, uint64_t tag);
    void tag_end(RecordSink& sink);
    void label_ended();

    // A workload logged by log_workload(): it goes before stream_[position]. Packed (56 bytes,
    // WorkloadInfo has 88): a recording outside captured frames writes one per dispatch or
    // transfer, and in a command buffer of thousands of them these bytes, written to memory no
    // cache holds any more, are most of what the log costs.
    struct LoggedWorkload {
        struct Grid { // dispatches, trace rays
            Size3 size;
            Size3 base;
            Size3 local_size;
        };
        struct Work { // transfers, acceleration structures
            const char* kind;
            uint64_t amount;
        };
        enum Present : uint8_t { kSize = 1, kLocalSize = 2, kAmount = 4 };

        const char* api;
        union {
            Grid grid;
            Work work;
        };
        uint32_t position;
        WorkloadType type;
        uint8_t present; // Present bits

        static bool has_grid(WorkloadType t) {
            return t == WorkloadType::dispatch || t == WorkloadType::trace_rays;
        }
        // User-provided and empty, so that emplace_back() writes each byte once (in assign()),
        // straight into the log, rather than zeroing the entry or copying a temporary first.
        LoggedWorkload() {}
        void assign(uint32_t at, WorkloadType t, const WorkloadInfo& info) {
            api = info.api;
            position = at;
            type = t;
            if (has_grid(t)) {
                grid.size = info.size.value_or(Size3{});
                grid.base = info.base;
                grid.local_size = info.local_size.value_or(Size3{});
                present = (info.size ? kSize : 0) | (info.local_size ? kLocalSize : 0);
            } else {
                work.kind = info.kind;
                work.amount = info.amount.value_or(0);
                present = info.amount ? kAmount : 0;
            }
        }
        WorkloadInfo info() const {
            WorkloadInfo out;
            out.api = api;
            if (has_grid(type)) {
                if (present & kSize) {
                    out.size = grid.size;
                }
                out.base = grid.base;
                if (present & kLocalSize) {
                    out.local_size = grid.local_size;
                }
            } else {
                out.kind = work.kind;
                if (present & kAmount) {
                    out.amount = work.amount;
                }
            }
            return out;
        }
    };
    static_assert(sizeof(LoggedWorkload) <= 56);

    // Shared only with pinned_commands()' readers.
    mutable std::shared_ptr<std::vector<Command>> commands_;
    // pinned_commands() handed commands_ out since the last reset().
    mutable std::atomic<bool> pinned_{false};
    mutable std::vector<Mark> marks_; // the commands' marks, one per instrument each
    Marks deferred_marks_;            // what logged workloads carry
    // CommandStream::objects of marks_, and each instrument's last one. Logged workloads' marks
    // (materialize()) name none.
    std::vector<MarkObject> mark_objects_;
    std::array<void*, kMaxInstruments> last_objects_{};
    mutable std::vector<LoggedWorkload> deferred_;
    mutable std::atomic<bool> has_deferred_{false};
    mutable std::mutex materialize_mutex_;
    uint64_t draws_ = 0; // since the current part began, or for a continuing secondary
    std::shared_ptr<RenderPassPart> part_;      // being recorded
    bool part_suspends_ = false;                // its vkCmdBeginRendering said SUSPENDING
    std::shared_ptr<RenderPassPart> suspended_; // suspended earlier in this command buffer
    std::vector<PendingCount> pending_counts_;  // copied once the instance has ended
    std::shared_ptr<Workload> current_;         // between begin_workload and end_workload

    // A secondary's draws and counts for the render pass of the primary that executes it.
    uint64_t continued_draws_ = 0;
    std::vector<PendingCount> continued_counts_;

    RecordOptions options_;
    int depth_ = 0;            // labels (the application's and the layer's) open in this recording
    bool foreign_end_ = false; // a label begun in an earlier command buffer ended here
    bool current_tagged_ = false;
    bool primary_ = true;
    bool one_time_ = true;
    bool needs_submit_label_ = false;
    bool has_workloads_ = false;
    uint64_t instrument_cycles_ = 0;
};

} // namespace vkscope::timeline
