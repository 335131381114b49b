#pragma once
// Replays command streams at submission time for one queue. The interpreter owns what belongs to
// the queue rather than to any command buffer: the debug label stack (command buffer and queue
// labels nest on it, and a label may begin in one command buffer and end in another), and a render
// pass instance suspended in one command buffer and resumed in a later one.
//
// Like the recorder it makes no Vulkan call; what it finds goes to an InterpreterSink and into the
// SubmitRecord of each command buffer it runs.

#include "timeline/command_stream.hpp"
#include "timeline/labels.hpp"

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace vkscope::timeline {

class InterpreterSink : public LabelSink {
public:
    // A workload's first submission: its WORKLOAD message. Called once per workload, whichever
    // queue submits it first; a concurrent submission on another queue waits until it is marked
    // sent: by the interpreter when this returns true, else by the sink (mark_sent()) once the
    // message is out.
    virtual bool workload(const std::shared_ptr<Workload>& w) = 0;
    // The sink took `w` (workload() returned false) and has not marked it sent yet: a second
    // execution of it in the same command buffer (a secondary executed twice) must not wait.
    virtual bool holds(const Workload&) const { return false; }
    // The draws of render pass instance submit.tag, known only once its parts have run: their
    // total, or nullopt when some could not be counted (an ANNEX message, draws_annex()).
    virtual void draws_annex(uint64_t submit, uint64_t tag, std::optional<uint64_t> draws) = 0;
};

struct SubmittedWorkload {
    uint64_t tag = 0;
    uint64_t labels = 0; // label stack id when it began
    // The cost budget left it out of every instrument and the timeline sends its annexes
    // (SubmitRecord::skip_left_out): no instrument hears of it.
    bool left_out = false;
};

// An async command: parameters the GPU copied for an instance, to read once the submission has
// completed.
struct Readback {
    uint64_t submit = 0; // the instance is submit.tag
    std::shared_ptr<Workload> workload;
    std::vector<ParameterCopy> copies;
    uint64_t draws = 0;       // render passes: draws counted without the copies
    bool counts_lost = false; // render passes: some counts could not be copied
    // The same slot ran more than once in one submission (a secondary executed twice): only the
    // last run's values survive, so none are reported.
    bool ambiguous = false;
};

// What one submitted command buffer did.
struct SubmitRecord {
    uint64_t submit = 0;
    // Pair the instruments' marks into `instances` (only when an instrument asks for them).
    bool pair_marks = false;
    // Outside captured frames: only the queue's state (labels, a suspended render pass) is kept
    // up; nothing is described, sent or read back.
    bool quiet = false;
    // Workloads are described (InterpreterSink::workload) at their first submission: there is
    // somewhere to send them.
    bool describe = true;
    // Workloads the cost budget left out of every instrument are not paired, and are flagged in
    // `workloads` (InstrumentQueue::left_out_annex()).
    bool skip_left_out = false;
    uint32_t left_out = 0; // of `workloads`, those flagged
    std::vector<SubmittedWorkload> workloads;
    std::vector<Readback> readbacks;
    std::vector<MarkedInstance> instances;
    // Tag labels to end right after this command buffer (RenderPassPart::tag_end_deferred).
    uint32_t deferred_tag_ends = 0;
    // Its workloads are listed and paired later, on the interpretation worker (after the
    // instruments' jobs are taken: InstrumentQueue::take_pairing()), and some of them may be
    // listed: an instrument's job is needed although nothing is paired yet.
    bool lists_later = false;
    // The command buffer's stream (valid during the submission call): what the instruments find
    // their marks in before its workloads are paired (InstrumentQueue::paired()).
    CommandStream stream;

    void clear() {
        workloads.clear();
        left_out = 0;
        readbacks.clear();
        instances.clear();
        deferred_tag_ends = 0;
        lists_later = false;
        stream = {};
    }
    // Cleared, and with the settings a new record has: one record serves call after call.
    void reuse() {
        clear();
        submit = 0;
        pair_marks = false;
        quiet = false;
        describe = true;
        skip_left_out = false;
    }
};

// What decides where a submission's layer command buffers go: the labels open on the queue and a
// render pass instance suspended across command buffers. Interpreter::scan() moves it over a
// stream as run() moves the interpreter, without looking at the stream's workloads, so that their
// interpretation can wait until the driver has the submission.
struct QueueShape {
    size_t labels = 0;
    bool open = false;        // a render pass instance begun and not yet ended
    bool open_tagged = false; // it has a t<tag> label open on the queue
    bool open_counts = false; // it has draw counts to read back
    const RenderPassPart* part = nullptr;

    bool render_pass_open() const { return open; }
    size_t depth() const { return labels + (open && open_tagged ? 1 : 0); }
};

class Interpreter {
public:
    explicit Interpreter(LabelInterner& labels) : labels_(labels) {}

    // vkQueueBeginDebugUtilsLabelEXT / vkQueueEndDebugUtilsLabelEXT.
    void queue_label_begin(std::string_view name, InterpreterSink& sink);
    void queue_label_end();

    // Runs one submitted command buffer's stream. `out.submit` names the submission.
    void run(const CommandStream& stream, InterpreterSink& sink, SubmitRecord& out);

    // The shape run() leaves the queue in; scan() moves `shape` over `stream` the same way and
    // counts the tag ends to defer (SubmitRecord::deferred_tag_ends). False, `shape` then
    // unspecified, when run() must not wait for the driver's call: the stream has parameters or
    // draw counts to read back (indirect parameters only in a captured frame, `quiet` false),
    // whose slots must be free before the GPU runs it. `measures`, where given, is set when
    // some workload of the stream is measured by an instrument (Workload::measured).
    QueueShape shape() const;
    static bool scan(const CommandStream& stream, bool quiet, QueueShape& shape,
                     uint32_t& deferred_tag_ends, bool* measures = nullptr);

    uint64_t label_stack() const { return stack_.empty() ? LabelInterner::kEmpty : stack_.back(); }
    // A render pass instance is suspended between command buffers: nothing may run in between.
    bool render_pass_open() const { return open_.has_value(); }
    // Labels open on the queue between command buffers: the application's, and the tag of a
    // render pass instance that continues in a later command buffer.
    size_t depth() const { return stack_.size() + (open_ && open_->workload->tagged ? 1 : 0); }

private:
    struct Instance {
        std::shared_ptr<Workload> workload;
        uint64_t submit = 0;
        uint64_t draws = 0;
        std::vector<ParameterCopy> counts;
        bool counts_lost = false;
        Marks begin;
        bool quiet = false; // begun outside a captured frame
    };
    // A workload outside render passes, between its begin and its end (in one stream).
    struct Running {
        const Workload* workload = nullptr;
        uint64_t submit = 0;
        uint32_t begin = kNoMarks; // its marks in the stream's table
    };

    // started() and paired() run for every workload of every submitted stream: inlined into
    // run(), as a call each costs about as much as what they do.
    [[gnu::always_inline]] inline void started(const std::shared_ptr<Workload>& w,
                                               InterpreterSink& sink, SubmitRecord& out);
    void add_readback(Readback readback, SubmitRecord& out);
    void finish(Instance& instance, InterpreterSink& sink, SubmitRecord& out);
    [[gnu::always_inline]] inline void paired(const Workload& w, uint64_t submit,
                                              const Marks& begin, const Marks& end,
                                              MarkedInstance::Ending ending, SubmitRecord& out);
    // The same for a workload that began and ended in `stream`: its marks where they are.
    [[gnu::always_inline]] inline void paired(const Workload& w, uint64_t submit,
                                              const CommandStream& stream, uint32_t begin,
                                              uint32_t end, SubmitRecord& out);

    LabelInterner& labels_;
    std::vector<uint64_t> stack_;
    std::optional<Instance> open_;         // render pass instance begun and not yet ended
    std::shared_ptr<RenderPassPart> part_; // the part being run
    Running running_;
};

// Waits for, or claims, the right to send a workload's WORKLOAD message. True for the one caller
// that must send it, which then calls mark_sent(); false once it is sent, or when `sink` holds it.
// Inline where the workload is not being sent by anyone else (every workload of every
// submitted stream passes here); claim_send_contended() waits otherwise.
bool claim_send_contended(Workload& w, const InterpreterSink& sink);
inline bool claim_send(Workload& w, const InterpreterSink& sink) {
    uint8_t state = w.sent.load(std::memory_order_acquire);
    if (state == 2) {
        return false;
    }
    if (state == 0 && w.sent.compare_exchange_strong(state, 1, std::memory_order_acq_rel)) {
        return true;
    }
    return claim_send_contended(w, sink);
}
void mark_sent(Workload& w);

} // namespace vkscope::timeline
