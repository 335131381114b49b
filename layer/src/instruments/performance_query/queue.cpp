#include "instruments/performance_query/queue.hpp"

#include "core/wire_format.hpp"
#include "instruments/performance_query/recording.hpp"
#include "protocol.gen.hpp"
#include "timeline/device.hpp"
#include "timeline/interpreter.hpp"

#include <algorithm>
#include <memory>

namespace vkscope::performance_query {
namespace {

using Reason = protocol::CountersReason;

const char* why(Reason r) {
    return protocol::name(r);
}

bool chained(const void* chain) {
    for (auto* s = static_cast<const VkBaseInStructure*>(chain); s; s = s->pNext) {
        if (s->sType == VK_STRUCTURE_TYPE_PERFORMANCE_QUERY_SUBMIT_INFO_KHR) {
            return true;
        }
    }
    return false;
}

struct Job {
    PerfDevice* device = nullptr;
    std::vector<PerfQueue::Entry> entries;
    std::vector<CommandBufferEntry> cb_queries;

    void run(timeline::CompletionSink& sink) const {
        JsonWriter json;
        std::vector<VkPerformanceCounterResultKHR> results;
        for (const PerfQueue::Entry& e : entries) {
            const char* reason = e.why;
            const FamilyPlan* plan = device->plan(e.family);
            if (!reason && !plan) {
                reason = why(Reason::counter_not_offered);
            }
            if (!reason) {
                const auto& positions = plan->passes[e.pass];
                results.assign(positions.size(), VkPerformanceCounterResultKHR{});
                if (!device->read(e.block, e.generation, e.slot, results)) {
                    reason = why(Reason::overwritten);
                }
            }
            json.clear();
            json.begin_object();
            if (reason) {
                json.key("counters").null().field("counters_reason", reason);
            } else {
                json.key("counters").begin_object();
                const auto& positions = plan->passes[e.pass];
                for (size_t i = 0; i < positions.size(); ++i) {
                    const PlannedCounter& c = plan->counters[positions[i]];
                    write_value(json, c.name.c_str(), c.storage, results[i]);
                }
                json.end_object();
                json.field("counters_pass", e.pass);
            }
            json.end_object();
            sink.annex(e.submit, e.tag, json.view());
        }
        for (const CommandBufferEntry& e : cb_queries) {
            send(*device, e, sink, json, results);
        }
    }
};

} // namespace

void PerfQueue::begin_submission(const timeline::SubmissionStart& start) {
    active_ = start.completes && start.frame_selected;
    batch_queries_ = false;
    reset_.clear();
    done_.clear();
    cb_queries_.clear();
}

void PerfQueue::before_command_buffer(VkCommandBuffer cb, timeline::LayerCommandBuffers*,
                                      std::vector<VkCommandBuffer>&) {
    // Outside captured frames too: a command buffer recorded in one and submitted again later
    // still runs its queries, which must be reset and carry the pass.
    timeline::CommandBufferState* state = timeline::find_command_buffer(cb);
    if (!state || slot_ >= state->instruments.size() || !state->instruments[slot_]) {
        return;
    }
    auto* recording = static_cast<PerfRecording*>(state->instruments[slot_].get());
    QueryBlock* block = recording->block();
    if (!recording->command_buffer_query().counted() && recording->command_buffer_query().why()) {
        cb_query_next_ = CommandBufferEntry{
            0, nullptr, 0, family_, recording->pass(), recording->command_buffer_query().why()};
    }
    if (!block || block->used == 0) {
        return;
    }
    batch_queries_ = true;
    const FamilyPlan* plan = device_.plan(family_);
    const uint32_t pass = recording->pass();
    const auto counters =
        plan && pass < plan->passes.size() ? static_cast<uint32_t>(plan->passes[pass].size()) : 0;
    reset_.push_back(Reset{block, device_.reset(block, counters), pass});
    if (recording->command_buffer_query().counted()) {
        cb_query_next_ =
            CommandBufferEntry{0,       block, reset_.back().generation,
                               family_, pass,  recording->command_buffer_query().why()};
    }
}

void PerfQueue::after_command_buffer(const timeline::SubmitRecord& record,
                                     timeline::LayerCommandBuffers*,
                                     std::vector<VkCommandBuffer>&) {
    if (cb_query_next_ && active_) {
        cb_query_next_->submit = record.submit;
        cb_queries_.push_back(*cb_query_next_);
    }
    cb_query_next_.reset();
    if (!active_) {
        return;
    }
    using Ending = timeline::MarkedInstance::Ending;
    for (const timeline::MarkedInstance& instance : record.instances) {
        const timeline::Mark& begin = instance.begin[slot_];
        const timeline::Mark& end = instance.end[slot_];
        Entry e;
        e.submit = instance.submit;
        e.tag = instance.tag;
        e.family = family_;
        if (begin && begin == end && instance.ending != Ending::never) {
            const auto* block = static_cast<const QueryBlock*>(begin.object());
            const auto found = std::find_if(reset_.begin(), reset_.end(),
                                            [&](const Reset& r) { return r.block == block; });
            if (found == reset_.end()) {
                e.why = why(Reason::not_available);
            } else {
                e.block = block;
                e.slot = begin.index();
                e.generation = found->generation;
                e.pass = found->pass;
            }
        } else {
            e.why = begin.why()                        ? begin.why()
                    : instance.ending == Ending::never ? why(Reason::not_ended)
                                                       : why(Reason::split_render_pass);
        }
        done_.push_back(e);
    }
}

void PerfQueue::end_batch(timeline::LayerCommandBuffers*, std::vector<VkCommandBuffer>&) {}

void PerfQueue::patch(timeline::BatchPatch& batch) {
    if (!batch_queries_) {
        return;
    }
    batch_queries_ = false;
    VkPerformanceQuerySubmitInfoKHR& info = pass_infos_.emplace_back();
    info.sType = VK_STRUCTURE_TYPE_PERFORMANCE_QUERY_SUBMIT_INFO_KHR;
    info.counterPassIndex = 0;
    if (batch.info && !chained(batch.info->pNext)) {
        info.pNext = batch.info->pNext;
        batch.info->pNext = &info;
    } else if (batch.info2 && !chained(batch.info2->pNext)) {
        info.pNext = batch.info2->pNext;
        batch.info2->pNext = &info;
    }
}

timeline::CompletionJob PerfQueue::take_completion() {
    if (!active_ || (done_.empty() && cb_queries_.empty())) {
        return {};
    }
    auto job = std::make_shared<Job>();
    job->device = &device_;
    job->entries = std::move(done_);
    job->cb_queries = std::move(cb_queries_);
    done_.clear();
    cb_queries_.clear();
    return [job](uint64_t, timeline::CompletionSink& sink) { job->run(sink); };
}

void PerfQueue::end_submission() {
    done_.clear();
    cb_queries_.clear();
    cb_query_next_.reset();
    reset_.clear();
    pass_infos_.clear();
    active_ = false;
}

} // namespace vkscope::performance_query
