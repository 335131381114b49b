#include "instruments/samplers/queue.hpp"

#include "core/log.hpp"
#include "core/wire_format.hpp"
#include "timeline/device.hpp"
#include "timeline/interpreter.hpp"
#include "timeline/submit_patch.hpp"

#include <algorithm>
#include <chrono>
#include <memory>
#include <sys/prctl.h>
#include <thread>

namespace vkscope::samplers {
namespace {

using Clock = std::chrono::steady_clock;

// How long a handover may take to be reached before the layer stops holding the GPU for the rest
// of the frame: far above any workload a frame has, short enough that a hung GPU costs the
// application one pause.
constexpr std::chrono::seconds kGiveUp{5};
// How long a submission waits for the previous run of one of its command buffers (whose events
// it is about to reset) before running it unheld.
constexpr uint64_t kPreviousRunNs = 100'000'000;
// How the host polls A: with sleeps. Until A is set the GPU runs; once it is set the GPU idles,
// and where the GPU is a CPU thread (lavapipe) it spins, its time counted in the workload just
// before: the sleeps are a small fraction of the time waited so far (the added time grows with
// the workload, so ratios between workloads hold). Never a busy loop: on a CPU with simultaneous
// threads a spinning poller slows the core's other thread, which may be the GPU's.
constexpr int kPollFraction = 32;
constexpr std::chrono::microseconds kShortestSleep{20};
constexpr std::chrono::microseconds kLongestSleep{2000};
// The sleeping thread's timer slack meanwhile (Linux's default, 50 us, would more than double
// each sleep).
constexpr unsigned long kTimerSlackNs = 1000;

// The calling thread's timer slack, changed for a scope (it is the application's thread).
class TimerSlack {
public:
    explicit TimerSlack(unsigned long ns) : before_(prctl(PR_GET_TIMERSLACK, 0, 0, 0, 0)) {
        if (before_ >= 0) {
            prctl(PR_SET_TIMERSLACK, ns, 0, 0, 0);
        }
    }
    ~TimerSlack() {
        if (before_ >= 0) {
            prctl(PR_SET_TIMERSLACK, static_cast<unsigned long>(before_), 0, 0, 0);
        }
    }
    TimerSlack(const TimerSlack&) = delete;
    TimerSlack& operator=(const TimerSlack&) = delete;

private:
    const int before_;
};

} // namespace

void HandoverQueue::begin_submission(const timeline::SubmissionStart& start) {
    active_ = start.completes && start.frame_selected;
    blocked_ = nullptr;
    parts_.clear();
    samples_.clear();
    rows_.clear();
    instances_.clear();
    listed_.clear();
    annexes_.clear();
}

void HandoverQueue::before_command_buffer(VkCommandBuffer handle, timeline::LayerCommandBuffers*,
                                          std::vector<VkCommandBuffer>&) {
    timeline::CommandBufferState* cb = timeline::find_command_buffer(handle);
    auto* recording = cb && slot_ < cb->instruments.size()
                          ? static_cast<HandoverRecording*>(cb->instruments[slot_].get())
                          : nullptr;
    if (per_command_buffer()) {
        // Every application command buffer is a part: the split points count them all. One
        // that waits on the application's events may wait for the application, which waits for
        // this call: the call is not taken apart.
        if (recording && recording->waits_application_events()) {
            blocked_ = why(Reason::waits_application_event);
        }
        parts_.push_back(
            Part{recording, recording ? nullptr : why(Reason::unknown_pool), false, parts_.size()});
        return;
    }
    if (!recording || recording->handovers().empty()) {
        return;
    }
    Part part{recording, nullptr, false, 0};
    const timeline::TimelineDevice& tl = queue_.device;
    const bool again = std::any_of(parts_.begin(), parts_.end(),
                                   [&](const Part& p) { return p.recording == recording; });
    bool previous_done = true;
    if (!again && recording->last_semaphore) {
        uint64_t reached = 0;
        tl.semaphore_value(tl.handle, recording->last_semaphore, &reached);
        if (reached < recording->last_value && tl.wait_semaphores) {
            const VkSemaphoreWaitInfo wait{VK_STRUCTURE_TYPE_SEMAPHORE_WAIT_INFO,
                                           nullptr,
                                           0,
                                           1,
                                           &recording->last_semaphore,
                                           &recording->last_value};
            previous_done = tl.wait_semaphores(tl.handle, &wait, kPreviousRunNs) == VK_SUCCESS;
        } else {
            previous_done = reached >= recording->last_value;
        }
    }
    if (again) {
        // Its events already serve its first execution in this call.
        part.why = why(Reason::submitted_twice);
    } else if (!previous_done) {
        // Its events cannot be reset while it may still run; their B events are set from its
        // last run, so it runs through unheld.
        part.why = why(Reason::previous_run_pending);
    } else {
        for (const EventPair& p : recording->handovers()) {
            device_.next.ResetEvent(device_.handle, p.a);
            device_.next.ResetEvent(device_.handle, p.b);
        }
        part.reset = true;
        if (recording->waits_application_events()) {
            part.why = why(Reason::waits_application_event);
        } else if (!active_) {
            part.why = why(Reason::outside_frame);
        }
        if (part.why) {
            // Set before the GPU waits: valid everywhere, and nothing is held.
            for (const EventPair& p : recording->handovers()) {
                device_.next.SetEvent(device_.handle, p.b);
            }
        }
    }
    part.first = rows_.size();
    rows_.insert(rows_.end(), recording->handovers().size(), part.why);
    parts_.push_back(part);
}

void HandoverQueue::after_command_buffer(const timeline::SubmitRecord& record,
                                         timeline::LayerCommandBuffers*,
                                         std::vector<VkCommandBuffer>&) {
    if (!active_) {
        return;
    }
    for (const timeline::SubmittedWorkload& w : record.workloads) {
        listed_.emplace_back(record.submit, w.tag);
    }
    using Ending = timeline::MarkedInstance::Ending;
    for (const timeline::MarkedInstance& i : record.instances) {
        instances_.push_back(Instance{parts_.empty() ? 0 : parts_.size() - 1, i.submit, i.tag,
                                      i.begin[slot_], i.end[slot_], i.ending == Ending::never});
    }
}

void HandoverQueue::patch(timeline::BatchPatch& batch) {
    if (blocked_ || parts_.empty()) {
        return;
    }
    const timeline::BatchSemaphores s =
        batch.info ? timeline::semaphores_of(*batch.info) : timeline::semaphores_of(*batch.info2);
    const timeline::TimelineDevice& tl = queue_.device;
    for (const timeline::SemaphoreUse& w : s.waits) {
        // A binary semaphore's wait is on a signal already submitted; a timeline value not yet
        // reached may wait for something the application does only after this call returns.
        if (w.value == 0) {
            continue;
        }
        uint64_t reached = 0;
        tl.semaphore_value(tl.handle, reinterpret_cast<VkSemaphore>(w.semaphore), &reached);
        if (reached < w.value) {
            blocked_ = why(Reason::waits_unsignalled_semaphore);
            return;
        }
    }
}

void HandoverQueue::release_all(size_t from_part, uint32_t from_handover) {
    for (size_t p = from_part; p < parts_.size(); ++p) {
        const Part& part = parts_[p];
        if (!part.reset || part.why) {
            continue; // its B events are set already
        }
        const auto& pairs = part.recording->handovers();
        for (size_t k = p == from_part ? from_handover : 0; k < pairs.size(); ++k) {
            device_.next.SetEvent(device_.handle, pairs[k].b);
        }
    }
}

bool HandoverQueue::wait_for_a(VkEvent a) const {
    const DeviceDispatch& next = device_.next;
    const auto start = Clock::now();
    const auto deadline = start + kGiveUp;
    for (;;) {
        const VkResult status = next.GetEventStatus(device_.handle, a);
        if (status == VK_EVENT_SET) {
            return true;
        }
        if (status != VK_EVENT_RESET || Clock::now() > deadline) {
            return false; // the device is lost, or the GPU never got here
        }
        // A poll every few percent of the time waited so far: the host's latency stays a small
        // part of the workload, and a long workload is not interrupted thousands of times
        // (where the GPU's work runs on the CPU, every wake-up takes from it).
        const auto waited =
            std::chrono::duration_cast<std::chrono::microseconds>(Clock::now() - start);
        std::this_thread::sleep_for(
            std::clamp(waited / kPollFraction, kShortestSleep, kLongestSleep));
    }
}

void HandoverQueue::hold_and_sample(uint64_t frame) {
    const size_t width = device_.samplers.counters().size();
    samples_.assign(rows_.size() * width, 0.0);
    const DeviceDispatch& next = device_.next;
    const TimerSlack slack(kTimerSlackNs);
    for (size_t p = 0; p < parts_.size(); ++p) {
        const Part& part = parts_[p];
        if (part.why) {
            continue;
        }
        const auto& pairs = part.recording->handovers();
        for (uint32_t k = 0; k < pairs.size(); ++k) {
            const size_t row = part.first + k;
            if (!wait_for_a(pairs[k].a)) {
                device_.gave_up_frame.store(frame, std::memory_order_relaxed);
                log_once(LogLevel::warn,
                         "counters: the GPU did not reach a handover within %lld s; the rest "
                         "of frame %llu runs without samples",
                         static_cast<long long>(kGiveUp.count()),
                         static_cast<unsigned long long>(frame));
                release_all(p, k);
                for (size_t r = row; r < rows_.size(); ++r) {
                    rows_[r] = rows_[r] ? rows_[r] : why(Reason::handover_gave_up);
                }
                return;
            }
            next.ResetEvent(device_.handle, pairs[k].a);
            if (device_.sleep_us) {
                std::this_thread::sleep_for(std::chrono::microseconds(device_.sleep_us));
            }
            if (!device_.samplers.sample(samples_.data() + row * width)) {
                rows_[row] = why(Reason::sample_failed);
            }
            next.SetEvent(device_.handle, pairs[k].b);
        }
    }
}

void HandoverQueue::submitted(VkResult result) {
    if (per_command_buffer()) {
        if (active_) {
            if (result != VK_SUCCESS) {
                rows_.assign(parts_.size() + 1, why(Reason::not_available));
            }
            resolve_per_command_buffer();
        }
        if (sampling_.owns_lock()) {
            sampling_.unlock();
        }
        return;
    }
    if (parts_.empty()) {
        if (active_) {
            resolve();
        }
        return;
    }
    for (const Part& part : parts_) {
        if (part.reset) {
            // The timeline signals this value once the GPU is past the submission.
            part.recording->last_semaphore = queue_.semaphore;
            part.recording->last_value = queue_.signalled + 1;
        }
    }
    if (result != VK_SUCCESS) {
        for (const char*& r : rows_) {
            r = r ? r : why(Reason::not_available);
        }
        release_all(0, 0);
        resolve();
        return;
    }
    const uint64_t frame = queue_.device.frame.load(std::memory_order_relaxed);
    std::lock_guard lock(device_.sampling);
    const char* unheld = blocked_;
    if (!unheld && device_.gave_up_frame.load(std::memory_order_relaxed) == frame) {
        unheld = why(Reason::handover_gave_up);
    }
    if (unheld) {
        release_all(0, 0);
        for (const char*& r : rows_) {
            r = r ? r : unheld;
        }
    } else {
        hold_and_sample(frame);
    }
    resolve();
}

const double* HandoverQueue::row_of(const timeline::Mark& mark, const char*& reason) const {
    if (!mark) {
        reason = mark.why() ? mark.why() : why(Reason::not_available);
        return nullptr;
    }
    const auto* recording = static_cast<const HandoverRecording*>(mark.object());
    for (const Part& part : parts_) {
        if (part.recording != recording) {
            continue;
        }
        if (mark.index() >= recording->handovers().size()) {
            reason = why(Reason::split_render_pass); // no handover followed it in its recording
            return nullptr;
        }
        const size_t row = part.first + mark.index();
        if (rows_[row]) {
            reason = rows_[row];
            return nullptr;
        }
        return samples_.data() + row * device_.samplers.counters().size();
    }
    // Begun in an earlier submission (a render pass split over submissions).
    reason = why(Reason::split_render_pass);
    return nullptr;
}

void HandoverQueue::resolve() {
    const std::vector<SamplerCounter>& counters = device_.samplers.counters();
    JsonWriter json;
    std::vector<std::pair<uint64_t, uint64_t>> seen;
    for (const Instance& i : instances_) {
        const char* reason = nullptr;
        const double* before = row_of(i.begin, reason);
        const double* after = before ? row_of(i.end, reason) : nullptr;
        if (after && i.never_ended) {
            reason = why(Reason::not_ended);
        } else if (after) {
            const auto* recording = static_cast<const HandoverRecording*>(i.end.object());
            if (recording->crosses_other_work(i.end.index())) {
                reason = why(Reason::secondaries_between);
            }
        }
        json.clear();
        json.begin_object();
        if (reason || !after) {
            json.key("counters")
                .null()
                .field("counters_reason", reason ? reason : why(Reason::not_available));
        } else {
            json.key("counters").begin_object();
            bool clock_changed = false;
            for (size_t c = 0; c < counters.size(); ++c) {
                const double v = counters[c].kind == VKSCOPE_COUNTER_CUMULATIVE
                                     ? after[c] - before[c]
                                     : after[c];
                json.field(counters[c].name, v);
                clock_changed = clock_changed || (counters[c].kind == VKSCOPE_COUNTER_CLOCK &&
                                                  after[c] != before[c]);
            }
            json.end_object();
            if (clock_changed) {
                json.field("clock_changed", true);
            }
        }
        json.end_object();
        annexes_.push_back(Annex{i.submit, i.tag, std::string(json.view())});
        seen.emplace_back(i.submit, i.tag);
    }
    add_unseen(seen);
}

void HandoverQueue::add_unseen(std::vector<std::pair<uint64_t, uint64_t>>& seen) {
    // An instance listed in a SUBMIT says something, even when no end of it was seen.
    JsonWriter json;
    std::sort(seen.begin(), seen.end());
    std::sort(listed_.begin(), listed_.end());
    listed_.erase(std::unique(listed_.begin(), listed_.end()), listed_.end());
    for (const auto& [submit, tag] : listed_) {
        if (!std::binary_search(seen.begin(), seen.end(), std::pair{submit, tag})) {
            json.clear();
            json.begin_object().key("counters").null();
            json.field("counters_reason", why(Reason::not_ended)).end_object();
            annexes_.push_back(Annex{submit, tag, std::string(json.view())});
        }
    }
    instances_.clear();
    listed_.clear();
}

timeline::CompletionJob HandoverQueue::take_completion() {
    if (annexes_.empty()) {
        return {};
    }
    auto annexes = std::make_shared<std::vector<Annex>>(std::move(annexes_));
    annexes_.clear();
    return [annexes](uint64_t, timeline::CompletionSink& sink) {
        for (const Annex& a : *annexes) {
            sink.annex(a.submit, a.tag, a.fields);
        }
    };
}

void HandoverQueue::end_submission() {
    if (sampling_.owns_lock()) {
        sampling_.unlock();
    }
    parts_.clear();
    instances_.clear();
    listed_.clear();
    annexes_.clear();
    active_ = false;
}

} // namespace vkscope::samplers
