#include "timeline/submission.hpp"

#include "core/log.hpp"
#include "core/message_channel.hpp"
#include "core/monotonic_clock.hpp"
#include "protocol.gen.hpp"
#include "timeline/ids.hpp"
#include "timeline/messages.hpp"
#include "timeline/outgoing.hpp"
#include "timeline/record_sink.hpp"

#include <map>

namespace vkscope::timeline {
namespace {

// Jobs the interpretation worker may hold before a submission whose instruments pair its command
// buffers waits for it instead of handing them over: a few frames of a few command buffers each.
constexpr uint64_t kMostHandedOver = 32;

// How long a submission waits for the readback of a slot it is about to overwrite. A previous
// submission that has not finished by then is probably waiting for something the application
// will only do later, so waiting longer could hang it.
constexpr std::chrono::milliseconds kSlotWait{2000};

// The queue's layer-owned timeline semaphore, made on first use; false without one.
bool ensure_semaphore(TimelineQueue& q) {
    TimelineDevice& d = q.device;
    if (d.semaphore_value && !q.semaphore) {
        VkSemaphoreTypeCreateInfo type{VK_STRUCTURE_TYPE_SEMAPHORE_TYPE_CREATE_INFO, nullptr,
                                       VK_SEMAPHORE_TYPE_TIMELINE, 0};
        const VkSemaphoreCreateInfo info{VK_STRUCTURE_TYPE_SEMAPHORE_CREATE_INFO, &type, 0};
        if (d.next.CreateSemaphore(d.handle, &info, nullptr, &q.semaphore) != VK_SUCCESS) {
            q.semaphore = VK_NULL_HANDLE;
        }
    }
    return q.semaphore != VK_NULL_HANDLE;
}

} // namespace

void end_frame(TimelineQueue& queue, const char* reason) {
    TimelineDevice& device = queue.device;
    const uint64_t frame = device.frame.fetch_add(1, std::memory_order_relaxed);
    // The next frame's fate is decided as it begins (a trigger file is looked at now, and the
    // capture server's latest CAPTURE command taken).
    bool next = device.frames.selects(frame + 1);
    if (device.frames.server_driven() && device.server) {
        if (const auto asked = device.server->take_frame_request()) {
            device.server_frames_left.store(*asked, std::memory_order_relaxed);
        }
        uint64_t left = device.server_frames_left.load(std::memory_order_relaxed);
        while (left > 0 && !device.server_frames_left.compare_exchange_weak(
                               left, left - 1, std::memory_order_relaxed)) {
        }
        next = left > 0;
    }
    const bool was_selected = device.frame_selected.exchange(next, std::memory_order_relaxed);
    const uint64_t now = monotonic_ns();
    std::optional<BudgetFrame> budget;
    if (device.budget) {
        budget = device.budget->frame_ended(now, was_selected);
    }
    const FrameCompiles compiled{device.pipelines_created.exchange(0, std::memory_order_relaxed),
                                 device.modules_created.exchange(0, std::memory_order_relaxed)};
    if (device.sending()) {
        device.post_in_order(std::make_unique<FrameMessage>(frame, device.id, queue.id, now, reason,
                                                            was_selected, compiled, budget));
    }
}

void run_stream(Interpreter& interpreter, ServerSink& sink, const CommandStream& stream,
                SubmitRecord& record, SubmitMessages* messages) {
    if (messages) {
        // Two commands a workload, most of them new in a recording submitted once.
        record.workloads.reserve(stream.size() / 2 + 1);
        messages->workloads.reserve(stream.size() / 2 + 1);
    }
    sink.collect(messages);
    interpreter.run(stream, sink, record);
    sink.collect(nullptr);
}

void post_submit(TimelineQueue& queue, std::unique_ptr<SubmitMessages> messages,
                 const SubmitDescription& description, uint64_t submit, SubmitRecord& record) {
    messages->description = description;
    messages->description.device = queue.device.id;
    messages->description.queue = queue.id;
    messages->has_submit = true;
    messages->submit = submit;
    messages->listed = std::move(record.workloads);
    if (record.left_out > 0) {
        messages->left_out = record.left_out;
        messages->left_out_annexes = queue.left_out_annexes;
    }
    queue.device.post(std::move(messages));
}

Submission::Submission(TimelineQueue& queue, const char* api)
    : queue_(queue), device_(queue.device), lock_(queue.mutex), sink_(queue.device), api_(api),
      frame_(queue.device.frame.load(std::memory_order_relaxed)), cpu_ns_(monotonic_ns()),
      frame_selected_(queue.device.frame_selected.load(std::memory_order_relaxed)),
      sends_(frame_selected_ && queue.device.sending()), wrappers_(queue.call_wrappers),
      record_(queue.record), cut_after_(queue.call_cuts) {
    wrappers_.clear();
    record_.reuse();
    cut_after_.clear();
    worker_ = queue_.worker();
    if (worker_) {
        // The worker may be running the queue's interpreter now: the queue's shape as the
        // command buffers handed to it leave it is kept here.
        shape_ = queue_.shape;
    } else {
        shape_ = queue_.interpreter.shape();
    }
    // Layer command buffers are only reused, and results only read, once the semaphore says so.
    const bool completes = ensure_semaphore(queue_);
    can_label_ = completes && device_.label_api != LabelApi::none;
    const SubmissionStart start{frame_selected_, completes};
    // On a CPU device the driver's call wakes the thread that runs the work on these same
    // cores: work of the layer's left until after it competes with that thread for them and,
    // on a busy machine, gets the application's thread preempted for the length of the
    // device's run (docs/timeline.md). Nothing starts sooner for it there.
    // With the worker interpreting, what is left until after the driver's call is handing the
    // streams over, on either kind of device.
    after_driver_ = worker_ != nullptr || !device_.cpu_device;
    for (const auto& instrument : queue_.instruments) {
        instrument->begin_submission(start);
        pair_marks_ = pair_marks_ || instrument->pairs_marks();
        after_driver_ = after_driver_ && !instrument->pairs_before_submit();
    }
    recycle();
}

Submission::~Submission() {
    if (worker_) {
        queue_.shape = shape_;
        // Only a render pass left open needs its part; the stream holding it may be gone by
        // the next submission.
        if (!shape_.open) {
            queue_.shape.part = nullptr;
        }
    }
    for (const auto& instrument : queue_.instruments) {
        instrument->end_submission();
    }
}

bool Submission::batch(uint32_t index, std::span<const VkCommandBuffer> cbs, bool wrappable,
                       std::vector<VkCommandBuffer>& out) {
    out.clear();
    // Labels that must close are closed in any frame; new ones open only in captured frames.
    const bool insert = can_label_ && wrappable;
    const bool open_labels = insert && frame_selected_;
    const size_t wrappers_before = wrappers_.size();
    // Where instruments may place layer command buffers: not between the parts of a render pass
    // instance suspended in one command buffer and resumed in the next.
    const auto boundary = [&]() -> LayerCommandBuffers* {
        return wrappable && !shape_.render_pass_open() ? this : nullptr;
    };
    for (VkCommandBuffer handle : cbs) {
        const CommandBufferState* cb = find_command_buffer(handle);
        const uint64_t submit = next_submit_id();
        // A label opened before a command buffer closes only where everything opened inside it
        // is closed again: command buffers that share a split render pass or a label of the
        // application's share one s<submitID> label (SUBMIT's s_label says which).
        close_s_label(shape_.depth(), insert, out);
        if (open_labels && !queue_.s_label && cb && cb->recorder.needs_submit_label()) {
            out.push_back(wrapper(0, submit));
            queue_.s_label = submit;
            queue_.s_label_depth = shape_.depth();
        }
        for (const auto& instrument : queue_.instruments) {
            instrument->before_command_buffer(handle, boundary(), out);
        }
        if (cb && frame_selected_) {
            cb->recorder.materialize();
        }
        const Interpreted what{cb, submit, index, queue_.s_label};
        // What must be known before the driver's call is the shape the command buffer leaves
        // the queue in; its workloads wait, unless an instrument needs them now, or their marks
        // pair with a render pass instance an earlier command buffer began, or the GPU will
        // write parameters the layer reads back.
        QueueShape next = shape_;
        uint32_t tag_ends = 0;
        bool measures = false;
        std::unique_ptr<SubmitMessages> messages;
        if (after_driver_ && !shape_.render_pass_open() &&
            (!cb || Interpreter::scan(cb->recorder.stream(), !frame_selected_, next, tag_ends,
                                      &measures))) {
            shape_ = next;
            waiting_.push_back(what);
            record_.clear();
            record_.submit = submit;
            record_.deferred_tag_ends = tag_ends;
            if (cb) {
                record_.stream = cb->recorder.stream();
            }
            // Paired on the worker after the instruments' jobs are taken: whether a job will have
            // workloads of this command buffer to say something of (every one, or, under a cost
            // budget, those measured: the timeline says the rest).
            record_.lists_later = worker_ && pair_marks_ && cb && cb->recorder.has_workloads() &&
                                  (!queue_.left_out_annexes || measures);
        } else {
            interpret_waiting();
            take_interpreter_back();
            messages = interpret(what);
            shape_ = queue_.interpreter.shape();
            for (Readback& r : record_.readbacks) {
                job_.readbacks.push_back(std::move(r));
            }
        }
        out.push_back(handle);
        if (record_.deferred_tag_ends && insert) {
            out.push_back(wrapper(record_.deferred_tag_ends, 0));
        }
        // Instruments copy their results as soon as nothing is suspended: a later command buffer
        // may run the same queries again (the same secondary, or this one twice).
        for (const auto& instrument : queue_.instruments) {
            instrument->after_command_buffer(record_, boundary(), out);
        }
        cut_after_.push_back(shape_.render_pass_open() ? 0 : 1);
        post(std::move(messages), what);
    }
    close_s_label(shape_.depth(), insert, out);
    for (const auto& instrument : queue_.instruments) {
        instrument->end_batch(wrappable ? this : nullptr, out);
    }
    return wrappers_.size() != wrappers_before;
}

std::unique_ptr<SubmitMessages> Submission::interpret(const Interpreted& what) {
    record_.clear();
    record_.quiet = !frame_selected_;
    record_.describe = sends_;
    record_.submit = what.submit;
    record_.pair_marks = pair_marks_;
    record_.skip_left_out = queue_.left_out_annexes != nullptr;
    // What the capture server hears of each command buffer leaves as one record (outgoing.hpp).
    std::unique_ptr<SubmitMessages> messages;
    if (sends_) {
        messages = std::make_unique<SubmitMessages>();
    }
    if (what.cb) {
        const CommandStream stream = what.cb->recorder.stream();
        record_.stream = stream;
        if (pair_marks_) {
            record_.instances.reserve(stream.size() / 2 + 1);
        }
        run_stream(queue_.interpreter, sink_, stream, record_, messages.get());
    }
    for (const auto& instrument : queue_.instruments) {
        instrument->paired(record_);
    }
    return messages;
}

void Submission::post(std::unique_ptr<SubmitMessages> messages, const Interpreted& what) {
    if (!messages) {
        return;
    }
    post_submit(queue_, std::move(messages), describe(what), what.submit, record_);
    sink_.posted();
}

SubmitDescription Submission::describe(const Interpreted& what) const {
    SubmitDescription d;
    d.frame = frame_;
    d.cpu_ns = cpu_ns_;
    d.api = api_;
    d.batch = what.batch;
    d.s_label = what.s_label;
    return d;
}

void Submission::take_interpreter_back() {
    if (worker_) {
        worker_->drain();
    }
}

void Submission::interpret_waiting() {
    if (worker_ && !pair_marks_) {
        hand_over(nullptr, nullptr);
        return;
    }
    // Instruments pair these before their jobs are taken: here, after what the worker has.
    take_interpreter_back();
    for (const Interpreted& what : waiting_) {
        post(interpret(what), what);
        // The stream's checks (Interpreter::scan) leave nothing to read back.
        record_.readbacks.clear();
    }
    waiting_.clear();
}

void Submission::hand_over(std::shared_ptr<const std::vector<DeferredPairing>> pairings,
                           std::unique_ptr<ReadbackJob> readback) {
    for (const Interpreted& what : waiting_) {
        InterpretationJob& job = jobs_.emplace_back();
        job.queue = &queue_;
        if (what.cb) {
            job.commands = what.cb->recorder.pinned_commands();
            if (pairings) {
                const CommandStream stream = what.cb->recorder.stream();
                job.marks.assign(stream.marks.begin(), stream.marks.end());
                job.width = stream.width;
            }
        }
        job.submit = what.submit;
        job.description = describe(what);
        job.quiet = !frame_selected_;
        job.describe = sends_;
        job.skip_left_out = queue_.left_out_annexes != nullptr;
        job.pairings = pairings;
    }
    waiting_.clear();
    if (readback) {
        InterpretationJob& job = jobs_.emplace_back();
        job.kind = InterpretationJob::Kind::readback;
        job.readback = std::move(readback);
    }
    worker_->push(jobs_);
}

bool Submission::needs_signal() const {
    if (!wrappers_.empty() || !job_.readbacks.empty()) {
        return true;
    }
    for (const auto& instrument : queue_.instruments) {
        if (instrument->needs_completion()) {
            return true;
        }
    }
    return false;
}

bool Submission::splits() const {
    for (const auto& instrument : queue_.instruments) {
        if (instrument->splits()) {
            return true;
        }
    }
    return false;
}

void Submission::split_point(size_t index, bool completed) {
    for (const auto& instrument : queue_.instruments) {
        instrument->split_point(index, completed);
    }
}

void Submission::close_s_label(size_t depth, bool insert, std::vector<VkCommandBuffer>& out) {
    if (!queue_.s_label || !insert || depth > queue_.s_label_depth) {
        return;
    }
    // Below the depth it opened at, the application has ended more labels than it began, and one
    // of its ends has already closed the layer's label.
    if (depth == queue_.s_label_depth) {
        out.push_back(wrapper(1, 0));
    }
    queue_.s_label = 0;
}

void Submission::before_submit() {
    if (job_.readbacks.empty()) {
        return;
    }
    if (!device_.readback || !queue_.semaphore) {
        job_.readbacks.clear(); // nobody could tell when to read them
        return;
    }
    // Two command buffers of this call running the same slot (one secondary executed by both):
    // the first readback would see the second's values.
    std::map<ParameterSlot*, size_t> owner;
    std::vector<Readback> unique;
    for (Readback& r : job_.readbacks) {
        auto [it, fresh] = owner.emplace(r.copies.front().slot, unique.size());
        if (fresh) {
            unique.push_back(std::move(r));
        } else {
            unique[it->second].ambiguous = true;
        }
    }
    job_.readbacks = std::move(unique);
    for (const Readback& r : job_.readbacks) {
        for (const ParameterCopy& c : r.copies) {
            if (c.slot->in_flight.load(std::memory_order_acquire) &&
                !device_.readback->wait_read(*c.slot, kSlotWait)) {
                log_once(LogLevel::warn,
                         "timeline: a command buffer was submitted again while its previous "
                         "submission was still running; its indirect parameters are not "
                         "reported");
            }
        }
    }
    ReadbackWorker::claim(job_);
}

void Submission::after_submit(VkResult result, bool frame_boundary) {
    // The driver has the application's work: now its workloads (before the readback job, whose
    // messages must come after their SUBMIT). Where instruments pair them, on the worker once
    // their jobs are taken, the readback job handed over behind them; unless the worker is behind
    // (a machine whose cores are all busy): every job it holds holds its query pools until it has
    // run, so here the application's thread waits for it and pairs them itself, as it would
    // without a worker.
    const bool pair_on_worker = worker_ && pair_marks_ && worker_->backlog() < kMostHandedOver;
    if (!pair_on_worker) {
        interpret_waiting();
    }
    std::shared_ptr<std::vector<DeferredPairing>> pairings;
    std::unique_ptr<ReadbackJob> handed;
    for (const auto& instrument : queue_.instruments) {
        instrument->submitted(result);
    }
    bool signalled = false;
    if (result == VK_SUCCESS && queue_.semaphore && needs_signal()) {
        const uint64_t value = queue_.signalled + 1;
        const VkTimelineSemaphoreSubmitInfo values{
            VK_STRUCTURE_TYPE_TIMELINE_SEMAPHORE_SUBMIT_INFO, nullptr, 0, nullptr, 1, &value};
        const VkSubmitInfo signal{VK_STRUCTURE_TYPE_SUBMIT_INFO,
                                  &values,
                                  0,
                                  nullptr,
                                  nullptr,
                                  0,
                                  nullptr,
                                  1,
                                  &queue_.semaphore};
        // Unless it rode along in the application's last batch, the signal is a submission of
        // its own.
        signalled =
            merged_signal_ == value ||
            device_.next.QueueSubmit(queue_.handle, 1, &signal, VK_NULL_HANDLE) == VK_SUCCESS;
        if (signalled) {
            queue_.signalled = value;
            for (VkCommandBuffer w : wrappers_) {
                queue_.busy_wrappers.emplace_back(value, w);
            }
            for (const auto& instrument : queue_.instruments) {
                if (CompletionJob completion = instrument->take_completion()) {
                    job_.completions.push_back(std::move(completion));
                    DeferredPairing pairing;
                    if (pair_on_worker && (pairing = instrument->take_pairing())) {
                        if (!pairings) {
                            pairings = std::make_shared<std::vector<DeferredPairing>>();
                        }
                        pairings->push_back(std::move(pairing));
                    }
                }
            }
            if (!job_.readbacks.empty() || !job_.completions.empty()) {
                job_.semaphore = queue_.semaphore;
                job_.value = value;
                if (pair_on_worker) {
                    handed = std::make_unique<ReadbackJob>(std::move(job_));
                } else {
                    device_.readback->push(std::move(job_));
                }
            }
        }
    }
    if (pair_on_worker) {
        hand_over(std::move(pairings), std::move(handed));
    }
    if (!signalled) {
        // Nothing will say when these are done: the wrappers were not submitted (or the GPU is
        // lost) and the slots will not be read.
        if (result != VK_SUCCESS) {
            queue_.free_wrappers.insert(queue_.free_wrappers.end(), wrappers_.begin(),
                                        wrappers_.end());
        }
        for (const Readback& r : job_.readbacks) {
            for (const ParameterCopy& c : r.copies) {
                c.slot->in_flight.store(false, std::memory_order_release);
            }
        }
    }
    if (result != VK_SUCCESS) {
        return;
    }
    const uint64_t n = device_.submissions.fetch_add(1, std::memory_order_relaxed) + 1;
    if (frame_boundary) {
        end_frame(queue_, protocol::name(protocol::FrameReason::frame_boundary));
    } else if (device_.frame_submits > 0 && n % static_cast<uint64_t>(device_.frame_submits) == 0) {
        end_frame(queue_, protocol::name(protocol::FrameReason::submit_count));
    }
}

VkCommandBuffer Submission::wrapper(uint32_t ends, uint64_t begin_submit) {
    const VkCommandBuffer cb = begin();
    for (uint32_t i = 0; i < ends; ++i) {
        end_label(device_, cb);
    }
    if (begin_submit) {
        begin_id_label(device_, cb, 's', begin_submit);
    }
    device_.next.EndCommandBuffer(cb);
    return cb;
}

VkCommandBuffer Submission::begin() {
    const DeviceDispatch& next = device_.next;
    if (!queue_.pool) {
        const VkCommandPoolCreateInfo info{VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO, nullptr,
                                           VK_COMMAND_POOL_CREATE_TRANSIENT_BIT |
                                               VK_COMMAND_POOL_CREATE_RESET_COMMAND_BUFFER_BIT,
                                           queue_.family};
        next.CreateCommandPool(device_.handle, &info, nullptr, &queue_.pool);
    }
    VkCommandBuffer cb = VK_NULL_HANDLE;
    if (!queue_.free_wrappers.empty()) {
        cb = queue_.free_wrappers.back();
        queue_.free_wrappers.pop_back();
        // Explicitly: an implicit reset may keep a driver's label bookkeeping (see RecordOptions).
        next.ResetCommandBuffer(cb, 0);
    } else {
        const VkCommandBufferAllocateInfo info{VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO,
                                               nullptr, queue_.pool,
                                               VK_COMMAND_BUFFER_LEVEL_PRIMARY, 1};
        next.AllocateCommandBuffers(device_.handle, &info, &cb);
        // A command buffer made below the loader has no loader dispatch yet; the layers below
        // look it up through it.
        if (device_.set_loader_data) {
            device_.set_loader_data(device_.handle, cb);
        }
    }
    const VkCommandBufferBeginInfo begin{VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO, nullptr,
                                         VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT, nullptr};
    next.BeginCommandBuffer(cb, &begin);
    wrappers_.push_back(cb);
    return cb;
}

void Submission::recycle() {
    if (queue_.busy_wrappers.empty() || !queue_.semaphore) {
        return;
    }
    uint64_t done = 0;
    device_.semaphore_value(device_.handle, queue_.semaphore, &done);
    while (!queue_.busy_wrappers.empty() && queue_.busy_wrappers.front().first <= done) {
        queue_.free_wrappers.push_back(queue_.busy_wrappers.front().second);
        queue_.busy_wrappers.pop_front();
    }
}

} // namespace vkscope::timeline
