#pragma once
// One vkQueueSubmit* call as the timeline sees it, with the queue's lock held throughout: every
// submitted command buffer gets a submitID and a SUBMIT message, its command stream runs on the
// queue's interpreter, and the command buffers that need it are wrapped in s<submitID> labels by
// layer-owned command buffers. The queue's timeline semaphore, signalled by the application's
// last batch (or, where that batch cannot take it, by an empty submission after it), tells when
// the wrappers can be reused and when the indirect parameters can be read. The device's
// instruments take part at every step (instrument.hpp).

#include "timeline/device.hpp"
#include "timeline/interpretation_worker.hpp"
#include "timeline/outgoing.hpp"
#include "timeline/server_sink.hpp"
#include "timeline/submit_patch.hpp"

#include <memory>
#include <mutex>
#include <span>
#include <type_traits>
#include <vector>

namespace vkscope::timeline {

// Runs one command buffer's stream on the queue's interpreter into `record`, describing what is
// new into `messages` (null: nothing is described), on whichever thread interprets it.
void run_stream(Interpreter& interpreter, ServerSink& sink, const CommandStream& stream,
                SubmitRecord& record, SubmitMessages* messages);
// Posts what one interpreted command buffer tells the capture server (`record`: what the
// interpreter found in it), on whichever thread interpreted it.
void post_submit(TimelineQueue& queue, std::unique_ptr<SubmitMessages> messages,
                 const SubmitDescription& description, uint64_t submit, SubmitRecord& record);

class Submission final : private LayerCommandBuffers {
public:
    Submission(TimelineQueue& queue, const char* api);
    Submission(const Submission&) = delete;
    Submission& operator=(const Submission&) = delete;
    ~Submission() override;

    // Runs batch `index`. Fills `out` with the command buffers to submit in its place and
    // returns true when it differs from `cbs` (layer command buffers inserted). `wrappable` is
    // false for batches whose command buffer list cannot grow (device groups, protected
    // submissions).
    bool batch(uint32_t index, std::span<const VkCommandBuffer> cbs, bool wrappable,
               std::vector<VkCommandBuffer>& out);
    // After batch(): the instruments may patch the batch (a copy of the application's) with
    // semaphores or pNext structures. `has_work`: it runs command buffers and its semaphore lists
    // may grow.
    template <typename Info> void patch(Info& batch, bool has_work) {
        BatchPatch p;
        if constexpr (std::is_same_v<Info, VkSubmitInfo>) {
            p.info = &batch;
        } else {
            p.info2 = &batch;
        }
        p.has_work = has_work;
        p.semaphores = &patch_;
        for (const auto& instrument : queue_.instruments) {
            instrument->patch(p);
        }
    }
    // Before the application's submission: slots its copies write must have been read.
    void before_submit();
    // After before_submit(): the signal that says when the GPU is done with this call rides
    // along in the application's last batch (a copy of it) instead of costing a submission of
    // its own; `allowed` is false for a batch whose semaphore lists must stay as they are
    // (device groups).
    template <typename Info> void merge_signal(Info& last, bool allowed) {
        if (allowed && queue_.semaphore && needs_signal()) {
            merged_signal_ = queue_.signalled + 1;
            patch_.apply(last, queue_.semaphore, 0, merged_signal_);
        }
    }
    // Whether an instrument asks for the call to be taken apart (split_submit.hpp), and the
    // points in it, passed on to the instruments.
    bool splits() const;
    void split_point(size_t index, bool completed);
    // Per application command buffer of the call, in order: whether the call may be cut after it
    // (not while a render pass instance is suspended across the boundary).
    std::span<const uint8_t> cut_points() const { return cut_after_; }
    // After it: the instruments' synchronous work, the signal, the readback job, the frame
    // accounting.
    void after_submit(VkResult result, bool frame_boundary);

private:
    // A layer command buffer that ends `ends` labels, or begins s<begin_submit>: never both, as
    // an end that crosses command buffers may break a later begin (RecordOptions).
    VkCommandBuffer wrapper(uint32_t ends, uint64_t begin_submit);
    // LayerCommandBuffers: a begun layer command buffer, recycled with the wrappers; the caller
    // ends it.
    VkCommandBuffer begin() override;
    bool needs_signal() const;
    void close_s_label(size_t depth, bool insert, std::vector<VkCommandBuffer>& out);
    void recycle();

    // An application command buffer of the call whose interpretation waits.
    struct Interpreted {
        const CommandBufferState* cb = nullptr; // null: one the layer does not know
        uint64_t submit = 0;
        uint32_t batch = 0;
        uint64_t s_label = 0;
    };
    // Runs the command buffer's stream on the queue's interpreter into record_, and hands the
    // record to the instruments (paired()); what the capture server hears of it is returned, for
    // post() once the instruments are done with the record.
    std::unique_ptr<SubmitMessages> interpret(const Interpreted& what);
    void post(std::unique_ptr<SubmitMessages> messages, const Interpreted& what);
    // What the SUBMIT of `what` says of the call (its device and queue aside).
    SubmitDescription describe(const Interpreted& what) const;
    // Interprets the command buffers whose interpretation waits, in call order: here, or on the
    // device's interpretation worker where no instrument pairs them (the frame is not captured).
    void interpret_waiting();
    // Hands the command buffers whose interpretation waits to the worker, with the instruments'
    // pairings of this call's jobs (null: none) and then the readback job (null: none), which the
    // worker passes on to the readback thread once it has run them.
    void hand_over(std::shared_ptr<const std::vector<DeferredPairing>> pairings,
                   std::unique_ptr<ReadbackJob> readback);
    // Before interpreting on this thread where the worker has the queue's interpreter: waits for
    // what was handed to it.
    void take_interpreter_back();

    TimelineQueue& queue_;
    TimelineDevice& device_;
    std::lock_guard<std::mutex> lock_;
    ServerSink sink_;
    const char* api_;
    const uint64_t frame_;
    const uint64_t cpu_ns_;
    const bool frame_selected_; // the frame is one the `frames` setting captures
    bool can_label_;            // layer command buffers with labels can be inserted
    bool pair_marks_ = false;   // some instrument resolves this submission's workloads
    // No instrument needs a command buffer's workloads before the driver's call, and the device
    // is not a CPU device: they are interpreted after it (InstrumentQueue::pairs_before_submit()).
    bool after_driver_ = true;
    // The device's interpretation worker runs this queue's streams (interpretation_worker.hpp);
    // null: this thread does.
    InterpretationWorker* worker_ = nullptr;
    std::vector<InterpretationJob> jobs_;
    const bool sends_; // captured frame, and somewhere to send it
    // The queue as the command buffers so far leave it, interpreted or not.
    QueueShape shape_;
    std::vector<Interpreted> waiting_;
    std::vector<VkCommandBuffer>& wrappers_; // the queue's (TimelineQueue::call_wrappers)
    ReadbackJob job_;
    SubmitRecord& record_; // the queue's (TimelineQueue::record)
    // The application's structures it changed are put back when the call is over.
    SubmitPatch patch_;
    uint64_t merged_signal_ = 0;      // the signal merge_signal() added, 0: none
    std::vector<uint8_t>& cut_after_; // the queue's (TimelineQueue::call_cuts)
};

// End of frame `device.frame` (and start of the next): a FRAME message.
void end_frame(TimelineQueue& queue, const char* reason);

} // namespace vkscope::timeline
