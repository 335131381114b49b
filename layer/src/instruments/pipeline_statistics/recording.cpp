#include "instruments/pipeline_statistics/recording.hpp"

namespace vkscope::pipeline_statistics {

void StatisticsRecording::inherit(uint32_t family, VkCommandBufferInheritanceInfo& info) {
    if (device_.inherited_queries && family != UINT32_MAX) {
        info.pipelineStatistics |= device_.statistics(family);
    }
}

void StatisticsRecording::begin(const timeline::RecordingStart& start) {
    release();
    open_ = {};
    application_active_ = 0;
    one_run_ = start.one_time_submit && device_.read_in_place;
    if (!start.frame_selected) {
        why_ = why(Reason::outside_frame);
    } else if (start.family == UINT32_MAX) {
        why_ = why(Reason::unknown_pool);
    } else if (!(pools_ = device_.pools(start.family))) {
        why_ = why(Reason::queue_family_without_statistics);
    } else {
        why_ = nullptr;
    }
}

void StatisticsRecording::release() {
    if (pools_) {
        arena_.release(*pools_);
    }
    pools_ = nullptr;
    open_ = {};
}

timeline::Mark StatisticsRecording::begin_query() {
    wrote_ = false;
    if (why_) {
        return timeline::Mark::none(why_);
    }
    if (application_active_ > 0) {
        return timeline::Mark::none(why(Reason::application_query_active));
    }
    const auto slots = arena_.take(*pools_);
    if (!slots) {
        return timeline::Mark::none(why(Reason::no_query_pool));
    }
    const VkQueryPool pool = slots->block->pool;
    if (slots->fresh) {
        slots->block->one_run = one_run_;
        // Reset in the command buffer, not on the host: a recording submitted again must find its
        // queries reset each time it runs. One that runs once may have a block reset on the host
        // (QueryPoolCache).
        if (!(one_run_ && slots->clean)) {
            device_.next.CmdResetQueryPool(handle_, pool, 0, QueryBlock::kSlots);
        }
    }
    device_.next.CmdBeginQuery(handle_, pool, slots->first, 0);
    wrote_ = true;
    open_ = timeline::Mark::at(slots->block, slots->first);
    return open_;
}

timeline::Mark StatisticsRecording::start() {
    return begin_query();
}

timeline::Mark StatisticsRecording::start_render_pass(const timeline::RenderPassStart& how) {
    wrote_ = false;
    if (why_) {
        return timeline::Mark::none(why_);
    }
    if (how.suspending) {
        return timeline::Mark::none(why(Reason::split_render_pass));
    }
    if (how.secondaries && !device_.inherited_queries) {
        return timeline::Mark::none(why(Reason::secondary_without_inherited_queries));
    }
    // The application may begin one of its own inside the instance, where the layer's query,
    // begun outside, could not end first.
    if (device_.has_application_pools()) {
        return timeline::Mark::none(why(Reason::application_query_active));
    }
    return begin_query();
}

timeline::Mark StatisticsRecording::finish() {
    if (!open_) {
        return timeline::Mark::none(why_ ? why_ : why(Reason::split_render_pass));
    }
    const timeline::Mark done = open_;
    device_.next.CmdEndQuery(handle_, static_cast<QueryBlock*>(done.object())->pool, done.index());
    open_ = {};
    return done;
}

void StatisticsRecording::application_query(bool begins) {
    if (begins) {
        ++application_active_;
    } else if (application_active_ > 0) {
        --application_active_;
    }
}

} // namespace vkscope::pipeline_statistics
