#include "timeline/interpretation_worker.hpp"

#include "core/background_thread.hpp"
#include "core/pending_posts.hpp"
#include "timeline/device.hpp"
#include "timeline/server_sink.hpp"
#include "timeline/submission.hpp"

namespace vkscope::timeline {

InterpretationWorker::InterpretationWorker(TimelineDevice& device) : device_(device) {
    thread_.start([this] { run(); });
}

InterpretationWorker::~InterpretationWorker() {
    thread_.stop(mutex_, stopping_, wake_);
}

bool InterpretationWorker::usable() const {
    return thread_.usable();
}

void InterpretationWorker::push(InterpretationJob job) {
    push_all(std::span(&job, 1));
}

void InterpretationWorker::push(std::vector<InterpretationJob>& jobs) {
    push_all(jobs);
    jobs.clear();
}

void InterpretationWorker::push_all(std::span<InterpretationJob> jobs) {
    if (jobs.empty()) {
        return;
    }
    bool wake = false;
    add_pending_posts(static_cast<int64_t>(jobs.size()));
    {
        std::lock_guard lock(mutex_);
        for (InterpretationJob& job : jobs) {
            queue_.push_back(std::move(job));
        }
        pushed_ += jobs.size();
        wake = idle_;
        idle_ = false;
    }
    if (wake) {
        wake_.notify_one();
    }
}

void InterpretationWorker::drain() {
    std::unique_lock lock(mutex_);
    const uint64_t target = pushed_;
    ran_.wait(lock, [&] { return done_ >= target; });
}

uint64_t InterpretationWorker::backlog() {
    std::lock_guard lock(mutex_);
    return pushed_ - done_;
}

void InterpretationWorker::run() {
    become_background_thread(kInterpretationThread);
    std::vector<InterpretationJob> batch;
    std::unique_lock lock(mutex_);
    for (;;) {
        while (queue_.empty() && !stopping_) {
            idle_ = true;
            wake_.wait(lock);
        }
        if (queue_.empty()) {
            return; // stopping, with everything run
        }
        batch.swap(queue_);
        lock.unlock();
        for (InterpretationJob& job : batch) {
            execute(job);
        }
        const auto ran = static_cast<int64_t>(batch.size());
        // The pinned streams are let go here, on this thread, not in the application's.
        batch.clear();
        add_pending_posts(-ran);
        lock.lock();
        done_ += static_cast<uint64_t>(ran);
        ran_.notify_all();
    }
}

void InterpretationWorker::execute(InterpretationJob& job) {
    switch (job.kind) {
    case InterpretationJob::Kind::command_buffer:
        interpret(job);
        break;
    case InterpretationJob::Kind::label_begin: {
        ServerSink sink(device_);
        job.queue->interpreter.queue_label_begin(job.label, sink);
        break;
    }
    case InterpretationJob::Kind::label_end:
        job.queue->interpreter.queue_label_end();
        break;
    case InterpretationJob::Kind::record:
        device_.post(std::move(job.record));
        break;
    case InterpretationJob::Kind::readback:
        device_.readback->push(std::move(*job.readback));
        break;
    }
}

void InterpretationWorker::interpret(InterpretationJob& job) {
    TimelineQueue& queue = *job.queue;
    ServerSink sink(device_);
    SubmitRecord record;
    record.quiet = job.quiet;
    record.describe = job.describe;
    record.submit = job.submit;
    record.skip_left_out = job.skip_left_out;
    record.pair_marks = job.pairings != nullptr;
    std::unique_ptr<SubmitMessages> messages;
    if (job.describe) {
        messages = std::make_unique<SubmitMessages>();
    }
    if (job.commands) {
        const CommandStream stream{*job.commands, job.marks, job.width, {}};
        if (record.pair_marks) {
            record.instances.reserve(stream.size() / 2 + 1);
        }
        run_stream(queue.interpreter, sink, stream, record, messages.get());
    }
    // Every command buffer of the submission, known or not: each job counts them.
    if (job.pairings) {
        for (const DeferredPairing& pair : *job.pairings) {
            pair(record);
        }
    }
    if (messages) {
        post_submit(queue, std::move(messages), job.description, job.submit, record);
        sink.posted();
    }
}

} // namespace vkscope::timeline
