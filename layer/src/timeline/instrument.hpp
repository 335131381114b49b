#pragma once
// Instruments: what measures the workloads the timeline finds. Timing is one (timer queries);
// counters are the next ones. The timeline calls an instrument at fixed points and carries what
// the instrument leaves in a command buffer (its marks) from the recording to the submission that
// runs it; it knows no instrument by name. Which instruments a device gets is decided where the
// device is created (lifecycle.cpp), from the settings.
//
// The points, and the thread each runs on:
// - Device (vkCreateDevice / vkDestroyDevice, application thread): an InstrumentProvider adds what
//   the instrument needs to the device's creation, then creates the Instrument, which adds its
//   fields to the DEVICE message and lives until the device is destroyed.
// - Recording (the thread recording that command buffer, one at a time): an InstrumentRecording per
//   command buffer, told of begin, end and reset; around every workload of a captured frame it
//   writes its own commands and returns a Mark (render pass instances count as wholes: started
//   before the first begin, finished after the final end, in whichever command buffers those are).
// - Submission (vkQueueSubmit*, with the queue's submission lock held): an InstrumentQueue per
//   queue sees each application command buffer after the queue's interpreter has paired its
//   workloads' marks, may add layer command buffers before and after it, may patch each batch
//   (semaphores, pNext) and may work synchronously right after the driver's submission returns.
// - Completion (the device's readback thread): a job per submission, run once the GPU has
//   finished it, that reads the results and gives annex fields per workload instance.
//
// Instrument objects are only ever called through these points, so an instrument with nothing to
// do costs a virtual call where a workload is recorded or submitted, and a device without
// instruments none at all.

#include <array>
#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>
#include <vulkan/vulkan.h>

namespace vkscope {
struct InstanceState;
}

namespace vkscope::timeline {

class DevicePatch;
class SubmitPatch;
class TimelineDevice;
class TimelineQueue;
struct CommandBufferState;
struct DeviceDescription;
struct SubmitRecord;

// Instruments one device can have at once: timing and the three counter sources.
inline constexpr size_t kMaxInstruments = 4;

// What an instrument wrote into a command buffer at one point (a query slot, an event): an object
// of the instrument's and an index in it. Opaque to the timeline. When nothing was written, a
// reason instead (a static string, or null).
class Mark {
public:
    Mark() = default;
    static Mark at(void* object, uint32_t index) { return Mark(object, index); }
    static Mark none(const char* why) { return Mark(nullptr, reinterpret_cast<uintptr_t>(why)); }

    explicit operator bool() const { return object_ != nullptr; }
    void* object() const { return object_; }
    uint32_t index() const { return object_ ? static_cast<uint32_t>(value_) : 0; }
    const char* why() const { return object_ ? nullptr : reinterpret_cast<const char*>(value_); }
    bool operator==(const Mark&) const = default;

private:
    Mark(void* object, uintptr_t value) : object_(object), value_(value) {}

    void* object_ = nullptr;
    uintptr_t value_ = 0; // the index, or the reason when there is no object
};

// One mark per instrument of the device, by the instrument's slot.
using Marks = std::array<Mark, kMaxInstruments>;

// A workload instance's marks, paired by the queue's interpreter at submission: those written
// before it (in the command buffer that began it) and after it (in the one that ended it: a later
// one for a render pass split over command buffers).
struct MarkedInstance {
    enum class Ending : uint8_t {
        workload,    // a workload outside render passes
        render_pass, // a render pass instance, ended in this submission
        never,       // a render pass suspended and never resumed: `end` is empty
    };
    uint64_t submit = 0; // the instance is submit.tag
    uint64_t tag = 0;
    Marks begin;
    Marks end;
    Ending ending = Ending::workload;
};

// ---- Recording ----

struct RecordingStart {
    uint32_t family = UINT32_MAX; // of its command pool; UINT32_MAX: not seen created
    bool primary = true;
    bool one_time_submit = false;
    // Recorded in a frame the `frames` setting selects: only then may the instrument write into
    // the command buffer.
    bool frame_selected = true;
};

// A render pass instance about to begin (the instrument's start comes before the application's
// begin command).
struct RenderPassStart {
    // It continues in a later command buffer (VK_RENDERING_SUSPENDING_BIT): it ends elsewhere.
    bool suspending = false;
    // Its first subpass executes secondary command buffers.
    bool secondaries = false;
};

// Something ran between two workloads that is no workload.
enum class Interruption : uint8_t {
    parameter_copy, // the timeline copied a workload's indirect parameters
    event_wait,     // vkCmdWaitEvents*
    left_out,       // a workload this instrument does not measure (InstrumentChoice)
};

// Which of the device's instruments measure one workload, chosen as it begins: bit i for the
// instrument in slot i; those left out write nothing around it, and their marks carry the reason
// each gives (InstrumentRecording::left_out()).
struct InstrumentChoice {
    static constexpr uint8_t kAll = (1u << kMaxInstruments) - 1;
    uint8_t measured = kAll;
    // Left out, and the workload after it in the frame is chosen: those left out of this one
    // are asked to start_ahead() right after it ends.
    bool precedes_measured = false;
};

// One instrument's state for one command buffer: made when the command buffer is allocated,
// destroyed when it is freed.
class InstrumentRecording {
public:
    virtual ~InstrumentRecording() = default;

    // vkBeginCommandBuffer of a secondary, before the driver's: the inheritance info the driver
    // will get (a copy of the application's), which the instrument may widen so that a query of
    // its own may stay active in the primary while this secondary runs.
    virtual void inherit(uint32_t /*family*/, VkCommandBufferInheritanceInfo&) {}
    // vkBeginCommandBuffer, after the driver's: a new recording (the previous one was released).
    virtual void begin(const RecordingStart& start) = 0;
    // vkEndCommandBuffer, before the driver's: the recording's last commands.
    virtual void end() {}
    // vkResetCommandBuffer, vkResetCommandPool, vkFreeCommandBuffers, the device's destruction:
    // what the recording held (query slots) goes back.
    virtual void release() = 0;

    // Right before a workload and right after it: writes the instrument's commands and says
    // where, or returns Mark::none(why). In a recording outside selected frames they must write
    // nothing (only render passes still ask there: other workloads are just logged).
    virtual Mark start() = 0;
    virtual Mark finish() = 0;
    // The start of a render pass instance: what an instrument needs to know about it beforehand.
    virtual Mark start_render_pass(const RenderPassStart&) { return start(); }
    virtual void interrupt(Interruption) {}
    // The last start() wrote commands the GPU spends time in before the workload, besides its
    // own mark: a wait the GPU may idle in (a handover to the host) or a query pool's reset. No
    // instrument may measure across them: those after it are told of an event_wait (timing then
    // takes a fresh start timestamp rather than the previous workload's end), and those before it,
    // whose start is already written, are asked to restart().
    virtual bool waited() const { return false; }
    // An instrument after this one wrote such commands after this one's start `current`: the mark
    // to keep instead. Timing writes a fresh start after them; an instrument whose start spans
    // them harmlessly (or could not be repeated) keeps its own.
    virtual Mark restart(Mark current) { return current; }
    // Right after the end of a workload this instrument was left out of, when the next workload
    // is likely to be measured (the first of a cost budget's window): timing writes the next
    // start here, where a start shared with a measured workload's end would be, so that what the
    // application records in between counts in the next workload's time as it does elsewhere.
    virtual void start_ahead() {}
    // vkCmdExecuteCommands, after the driver's: `secondaries` ran here (this instrument's
    // recordings of them, null for a command buffer the layer does not know), inside the current
    // render pass instance when `in_render_pass`. Their workloads' marks are their own.
    virtual void execute(std::span<InstrumentRecording* const> /*secondaries*/,
                         bool /*in_render_pass*/) {}

    // Why this recording's workloads carry no marks when they are only logged (outside captured
    // frames): what their instances will say.
    virtual const char* unmarked() const = 0;
    // Why a workload this instrument was left out of (InstrumentChoice: the cost budget) has no
    // values: the `budget` reason of the instrument's protocol enum.
    virtual const char* left_out() const = 0;
};

// ---- Submission ----

struct SubmissionStart {
    bool frame_selected = true; // the frame is one the `frames` setting selects
    // The queue's layer semaphore exists, so completion jobs can run.
    bool completes = false;
};

// Layer-owned primary command buffers of the queue, recycled once the GPU is past them.
class LayerCommandBuffers {
public:
    virtual ~LayerCommandBuffers() = default;
    // A begun one; the caller records into it, ends it and places it in the batch.
    virtual VkCommandBuffer begin() = 0;
};

// One batch of a vkQueueSubmit* call as the layer will pass it on: a copy of the application's
// (exactly one of the two is set), which an instrument may patch.
struct BatchPatch {
    VkSubmitInfo* info = nullptr;
    VkSubmitInfo2* info2 = nullptr;
    // The batch runs command buffers and its semaphore lists may grow (not a device group's).
    bool has_work = false;
    SubmitPatch* semaphores = nullptr; // adds semaphores; undone once the call returns
};

// Where a completion job's results go: messages to the capture server, sent by the timeline.
class CompletionSink {
public:
    virtual ~CompletionSink() = default;
    // Fields (a JSON object) for workload instance submit.tag: an ANNEX message.
    virtual void annex(uint64_t submit, uint64_t tag, std::string_view fields) = 0;
    // A message of the instrument's own (one frame of the wire format).
    virtual void post(std::string frame) = 0;
};

// Run on the readback thread once the GPU has finished the submission, with the CLOCK_MONOTONIC
// time the completion was seen. Destroyed unrun when the device goes first.
using CompletionJob = std::function<void(uint64_t seen_ns, CompletionSink& sink)>;
// Pairs one command buffer's record (workloads listed, marks paired) into the completion job it
// belongs to: run on the interpretation worker, every command buffer of the submission in call
// order, before the job is handed to the readback thread.
using DeferredPairing = std::function<void(const SubmitRecord& record)>;

// One instrument's state for one queue. Every call holds the queue's submission lock, so one
// submission runs at a time: begin_submission(), then per batch the command buffer points and
// patch(), then submitted() (unless the layer gave up before), take_completion() when the
// completion signal was submitted, and end_submission() always.
class InstrumentQueue {
public:
    virtual ~InstrumentQueue() = default;

    virtual void begin_submission(const SubmissionStart& start) = 0;
    // The interpreter should pair this submission's marks (SubmitRecord::instances).
    virtual bool pairs_marks() const = 0;
    // after_command_buffer() needs the record's workloads and paired marks. An instrument that
    // finds what it must place in the command stream itself (SubmitRecord::stream) gets them in
    // paired() instead; when no instrument of the queue needs them earlier, the timeline
    // interprets the command buffers after the driver's call, so that the GPU has the
    // application's work before the layer's per-workload work is done (not on a CPU device,
    // where that work would compete with the device's own for the same cores).
    virtual bool pairs_before_submit() const { return true; }
    // Each application command buffer's record, workloads listed and marks paired, in call
    // order: before its after_command_buffer(), or after the driver's call (before submitted())
    // when no instrument of the queue pairs_before_submit().
    virtual void paired(const SubmitRecord&) {}

    // Around one application command buffer of a batch. `layer` is null where no layer command
    // buffer may go (the batch's list cannot grow, or a render pass is suspended across the
    // boundary); what the instrument places goes to `out`. `record` is what the command buffer
    // did, with the marks paired when pairs_marks().
    virtual void before_command_buffer(VkCommandBuffer, LayerCommandBuffers*,
                                       std::vector<VkCommandBuffer>&) {}
    virtual void after_command_buffer(const SubmitRecord& record, LayerCommandBuffers* layer,
                                      std::vector<VkCommandBuffer>& out) = 0;
    // After the batch's last command buffer (`layer` null: the batch takes no layer command
    // buffers at all).
    virtual void end_batch(LayerCommandBuffers* layer, std::vector<VkCommandBuffer>& out) = 0;
    // The batch as it will be submitted, after end_batch().
    virtual void patch(BatchPatch&) {}

    // Whether the submission should reach the driver one application command buffer at a time,
    // each waited for on the CPU (split_submit.hpp); asked after patch(), before the driver's call.
    virtual bool splits() const { return false; }
    // With splits(): point 0 comes before the first application command buffer of the call, point
    // i + 1 once command buffer i (in call order) has completed; `completed` is false where the
    // layer could not wait for it (its batch was not taken apart, or the wait was given up).
    virtual void split_point(size_t /*index*/, bool /*completed*/) {}

    // The layer must signal the queue's semaphore after this submission (results to read).
    virtual bool needs_completion() const = 0;
    // Right after the driver's vkQueueSubmit* returned, before the application gets control back.
    virtual void submitted(VkResult) {}
    // The readback thread's work for this submission; empty when there is none.
    virtual CompletionJob take_completion() = 0;
    // Right after take_completion() returned a job, where the timeline interprets the rest of the
    // submission's command buffers on its interpretation worker: what pairs them into that job
    // (the instrument's paired() is not called for them). Those command buffers' records came to
    // after_command_buffer() with SubmitRecord::lists_later, so that needs_completion() could
    // count them. Empty: the instrument pairs before the driver's call (pairs_before_submit()),
    // and the timeline interprets on the submitting thread.
    virtual DeferredPairing take_pairing() { return {}; }
    // The ANNEX fields (a JSON object) of every workload instance the cost budget left out of
    // this instrument, or empty. When every instrument of the queue gives them, the timeline
    // sends them itself, after the instance's SUBMIT (the sender thread encodes them), and the
    // instruments never see a left-out instance: it is not paired, and it is flagged in the
    // record's list (SubmittedWorkload::left_out), which they leave out of theirs. A left-out
    // workload then costs the submission no more than the timeline's own record of it.
    virtual std::string left_out_annex() const { return {}; }
    virtual void end_submission() = 0;
};

// ---- Device ----

// What an instrument is given when its device is created.
struct InstrumentDevice {
    TimelineDevice& timeline;
    const InstanceState& instance; // settings, the instance's dispatch
    VkPhysicalDevice physical = VK_NULL_HANDLE;
    const VkPhysicalDeviceProperties& properties;
    const VkPhysicalDeviceMemoryProperties& memory;
    std::span<const VkQueueFamilyProperties> families;
    // The instrument's index in every Marks array.
    size_t slot = 0;
};

class Instrument {
public:
    virtual ~Instrument() = default;

    // Its fields of the DEVICE message.
    virtual void describe(DeviceDescription&) const {}
    // Frames one full measurement of a workload spans (performance queries: a pass each). A cost
    // budget keeps its rotation coprime with it, so that a workload it measures every few frames
    // meets every one of them.
    virtual uint32_t frames_per_set() const { return 1; }
    virtual std::unique_ptr<InstrumentRecording> make_recording(const CommandBufferState& cb) = 0;
    virtual std::unique_ptr<InstrumentQueue> make_queue(TimelineQueue& queue) = 0;
};

// One instrument's part in creating a device.
class InstrumentProvider {
public:
    virtual ~InstrumentProvider() = default;
    // Before vkCreateDevice: extensions (and features) the instrument needs enabled.
    virtual void prepare(DevicePatch&) {}
    // After it: the instrument for the new device, or null when it cannot work there (it says why
    // in the log).
    virtual std::unique_ptr<Instrument> create(const InstrumentDevice& device) = 0;
};

using InstrumentProviders = std::vector<std::unique_ptr<InstrumentProvider>>;

} // namespace vkscope::timeline
