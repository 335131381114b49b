#include "instruments/samplers/recording.hpp"

#include <algorithm>

namespace vkscope::samplers {

void HandoverRecording::begin(const timeline::RecordingStart& start) {
    release();
    finished_since_handover_ = false;
    suspended_ = false;
    application_events_ = false;
    crossed_.clear();
    if (!start.frame_selected) {
        why_ = why(Reason::outside_frame);
    } else if (!start.primary) {
        // A secondary may run inside a render pass instance, where no event may be waited on
        // for the host.
        why_ = why(Reason::secondary_command_buffer);
    } else if (start.family == UINT32_MAX) {
        why_ = why(Reason::unknown_pool);
    } else if (device_.granularity == Granularity::handover &&
               !device_.family_has_events(start.family)) {
        why_ = why(Reason::queue_family_without_events);
    } else {
        why_ = nullptr;
    }
}

HandoverRecording::~HandoverRecording() {
    device_.give_back(events_);
    device_.give_back(spare_);
}

void HandoverRecording::release() {
    // Kept for the next recording of this command buffer; the previous run is complete (it may
    // not be reset while pending), so no wait on it is needed any more.
    spare_.insert(spare_.end(), events_.begin(), events_.end());
    events_.clear();
    last_semaphore = VK_NULL_HANDLE;
    last_value = 0;
    fresh = false;
}

timeline::Mark HandoverRecording::handover() {
    waited_ = false;
    if (why_) {
        return timeline::Mark::none(why_);
    }
    if (device_.granularity != Granularity::handover) {
        return timeline::Mark::at(this, 0); // sampled around the whole command buffer
    }
    if (suspended_) {
        return timeline::Mark::none(why(Reason::split_render_pass));
    }
    EventPair pair;
    if (!spare_.empty()) {
        pair = spare_.back();
        spare_.pop_back();
    } else if (!device_.take(pair)) {
        return timeline::Mark::none(why(Reason::no_events));
    }
    const DeviceDispatch& next = device_.next;
    // vkCmdSetEvent alone may signal before earlier work is done (lavapipe's does): the barrier
    // makes A mean that everything before it has finished.
    next.CmdPipelineBarrier(handle_, VK_PIPELINE_STAGE_ALL_COMMANDS_BIT,
                            VK_PIPELINE_STAGE_ALL_COMMANDS_BIT, 0, 0, nullptr, 0, nullptr, 0,
                            nullptr);
    next.CmdSetEvent(handle_, pair.a, VK_PIPELINE_STAGE_ALL_COMMANDS_BIT);
    next.CmdWaitEvents(handle_, 1, &pair.b, VK_PIPELINE_STAGE_HOST_BIT,
                       VK_PIPELINE_STAGE_ALL_COMMANDS_BIT, 0, nullptr, 0, nullptr, 0, nullptr);
    events_.push_back(pair);
    finished_since_handover_ = false;
    waited_ = true;
    return timeline::Mark::at(this, static_cast<uint32_t>(events_.size() - 1));
}

timeline::Mark HandoverRecording::start() {
    return handover();
}

timeline::Mark HandoverRecording::start_render_pass(const timeline::RenderPassStart& how) {
    const timeline::Mark m = handover();
    // Between a suspended render pass and its resumption nothing may be recorded.
    suspended_ = suspended_ || how.suspending;
    return m;
}

timeline::Mark HandoverRecording::finish() {
    if (why_) {
        return timeline::Mark::none(why_);
    }
    if (device_.granularity != Granularity::handover) {
        return timeline::Mark::at(this, 0);
    }
    finished_since_handover_ = true;
    // Its sample is the next handover: before the next workload or at the end of the recording.
    return timeline::Mark::at(this, static_cast<uint32_t>(events_.size()));
}

void HandoverRecording::end() {
    if (finished_since_handover_ && !suspended_) {
        handover();
    }
    if (!spare_.empty()) {
        device_.give_back(spare_); // fewer handovers than last time: others may use them
    }
}

void HandoverRecording::interrupt(timeline::Interruption what) {
    if (what == timeline::Interruption::event_wait) {
        application_events_ = true;
    }
}

void HandoverRecording::execute(std::span<timeline::InstrumentRecording* const>,
                                bool in_render_pass) {
    if (!in_render_pass && !why_) {
        crossed_.push_back(static_cast<uint32_t>(events_.size()));
    }
}

bool HandoverRecording::crosses_other_work(uint32_t index) const {
    return std::find(crossed_.begin(), crossed_.end(), index) != crossed_.end();
}

} // namespace vkscope::samplers
