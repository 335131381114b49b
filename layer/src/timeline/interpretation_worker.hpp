#pragma once
// Where a device interprets its submitted command streams: on a thread of the layer's own, not in
// the application's vkQueueSubmit.
//
// Interpreting a stream is most of what the timeline does per workload at submission (walking
// its commands, the queue's label stack, the WORKLOAD and SUBMIT records), and nothing in the
// application's call needs its result: the layer command buffers placed around the application's
// are decided by a scan of the stream's shape (Interpreter::scan()). So the submitting thread
// pins the stream (Recorder::pinned_commands()) and hands it over; this worker runs the queue's
// interpreter on it and posts what it finds.
//
// Instruments that only need their marks paired after the driver's call (timing, pipeline
// statistics: InstrumentQueue::pairs_before_submit() false) have them paired here too: the
// submitting thread takes their completion jobs first, hands over with the command buffers a
// copy of their marks and each job's pairing (InstrumentQueue::take_pairing()), then the readback
// job itself, which this worker passes to the readback thread once it has paired every command
// buffer of the submission. On an H200 machine, interpreting a 200-workload submission on the
// submitting thread took it several times what handing it over takes, in every frame with an
// instrument, measured or not. Instruments that pair before the driver's call keep a device
// interpreting on the submitting thread.
//
// Jobs run in the order they were pushed, one device's on one thread, and each queue's are
// pushed under that queue's lock: the queue's interpreter sees its command buffers and queue
// labels in submission order, as it did on the submitting threads. Everything the device would
// post after a submission's messages (FRAME) is pushed too, so the capture server hears it in
// the same order as before. A submission that has to interpret on its own thread (parameters to
// read back, a render pass left open by an earlier command buffer) first waits for the worker
// to run everything pushed before it (drain()).
//
// The thread starts with every signal blocked and runs at SCHED_BATCH (core/background_thread):
// its wake-ups never preempt the application. Jobs not yet run count as posts to come
// (core/pending_posts.hpp): a channel that closes, or a fatal signal, waits for them first.

#include "core/process_thread.hpp"
#include "timeline/command_stream.hpp"
#include "timeline/instrument.hpp"
#include "timeline/outgoing.hpp"
#include "timeline/readback.hpp"

#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <vector>

namespace vkscope {
class OutgoingRecord;
} // namespace vkscope

namespace vkscope::timeline {

class TimelineDevice;
class TimelineQueue;

struct InterpretationJob {
    enum class Kind : uint8_t { command_buffer, label_begin, label_end, record, readback };
    Kind kind = Kind::command_buffer;
    TimelineQueue* queue = nullptr;

    // command_buffer: its commands (null: a command buffer the layer does not know) and what its
    // SUBMIT says of the call.
    std::shared_ptr<const std::vector<Command>> commands;
    uint64_t submit = 0;
    SubmitDescription description; // its device and queue filled in as it is posted
    bool quiet = false;            // outside captured frames: the queue's state only
    bool describe = false;         // captured, and somewhere to send it
    bool skip_left_out = false;    // SubmitRecord::skip_left_out
    // The instruments' pairings of the submission's jobs (null: nothing to pair), and the
    // command buffer's marks they pair (a copy: the recording may be reset once the call
    // returns), `width` to a command.
    std::shared_ptr<const std::vector<DeferredPairing>> pairings;
    std::vector<Mark> marks;
    size_t width = 0;

    std::string label;                      // label_begin
    std::unique_ptr<OutgoingRecord> record; // record: posted in its place in the order
    std::unique_ptr<ReadbackJob> readback;  // readback: pushed to the readback thread
};

class InterpretationWorker {
public:
    explicit InterpretationWorker(TimelineDevice& device);
    // Runs what is left, then stops.
    ~InterpretationWorker();
    InterpretationWorker(const InterpretationWorker&) = delete;
    InterpretationWorker& operator=(const InterpretationWorker&) = delete;

    // False in a forked child, which has no such thread: it interprets on its own threads.
    bool usable() const;

    void push(InterpretationJob job);
    // Moves every job of `jobs` over, leaving it empty.
    void push(std::vector<InterpretationJob>& jobs);
    // Returns once every job pushed before the call has run. Never on the worker's thread.
    void drain();
    // Jobs pushed and not yet run.
    uint64_t backlog();

private:
    void push_all(std::span<InterpretationJob> jobs);
    void run();
    void execute(InterpretationJob& job);
    void interpret(InterpretationJob& job);

    TimelineDevice& device_;

    std::mutex mutex_; // guards everything down to the thread
    std::condition_variable wake_;
    std::condition_variable ran_;
    std::vector<InterpretationJob> queue_;
    uint64_t pushed_ = 0;
    uint64_t done_ = 0;
    bool idle_ = false; // waiting for a push
    bool stopping_ = false;

    ProcessThread thread_; // last: started once everything it reads is made
};

} // namespace vkscope::timeline
