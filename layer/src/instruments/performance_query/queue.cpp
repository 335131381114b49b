#include "instruments/performance_query/queue.hpp"

#include "core/wire_format.hpp"
#include "instruments/performance_query/recording.hpp"
#include "instruments/performance_query/values.hpp"
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
    // Per entry: for one that completed a whole-selection set, the instances (submit, tag) that
    // its set's earlier submissions ran.
    std::vector<std::vector<std::pair<uint64_t, uint64_t>>> earlier;
    std::vector<CommandBufferEntry> cb_queries;

    void run(timeline::CompletionSink& sink) const {
        JsonWriter json;
        std::vector<VkPerformanceCounterResultKHR> results;
        for (size_t n = 0; n < entries.size(); ++n) {
            const PerfQueue::Entry& e = entries[n];
            const char* reason = e.why;
            const FamilyPlan* plan = device->plan(e.family);
            if (!reason && !plan) {
                reason = why(Reason::counter_not_offered);
            }
            const bool whole = !reason && e.set_submissions > 0;
            const std::vector<uint32_t>* positions = reason  ? nullptr
                                                     : whole ? &plan->whole
                                                             : &plan->passes[e.pass];
            if (positions) {
                results.assign(positions->size(), VkPerformanceCounterResultKHR{});
                if (!device->read(e.block, e.generation, e.slot, results)) {
                    reason = why(Reason::overwritten);
                }
            }
            json.clear();
            json.begin_object();
            if (reason) {
                json.key("counters").null().field("counters_reason", reason);
            } else {
                write_counters(json, *plan, *positions, results);
                if (whole) {
                    json.field("counters_submissions", e.set_submissions);
                    json.key("counters_reason").null();
                } else {
                    json.field("counters_pass", e.pass);
                }
            }
            json.end_object();
            sink.annex(e.submit, e.tag, json.view());
            if (whole && !reason) {
                json.clear();
                json.begin_object();
                json.key("counters")
                    .null()
                    .field("counters_reason", why(Reason::passes_on_later_submission));
                json.end_object();
                for (const auto& [submit, tag] : earlier[n]) {
                    sink.annex(submit, tag, json.view());
                }
            }
        }
        for (const CommandBufferEntry& e : cb_queries) {
            send(*device, e, sink, json, results);
        }
    }
};

} // namespace

void PerfQueue::begin_submission(const timeline::SubmissionStart& start) {
    active_ = start.completes && start.frame_selected;
    completes_ = start.completes;
    completes_set_ = false;
    batch_queries_ = false;
    batch_first_ = 0;
    reset_.clear();
    done_.clear();
    done_reset_.clear();
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
    recording->submitting();
    QueryBlock* block = recording->block();
    if (!recording->command_buffer_query().counted() && recording->command_buffer_query().why()) {
        cb_query_next_ = CommandBufferEntry{
            0, nullptr, 0, family_, recording->pass(), recording->command_buffer_query().why()};
        cb_query_reset_ = SIZE_MAX;
    }
    if (!block || block->used == 0) {
        return;
    }
    batch_queries_ = true;
    reset_.push_back(Reset{recording, block});
    if (recording->command_buffer_query().counted()) {
        // Its generation comes with the reset when the batch is patched.
        cb_query_next_ = CommandBufferEntry{
            0, block, 0, family_, recording->pass(), recording->command_buffer_query().why()};
        cb_query_reset_ = reset_.size() - 1;
    }
}

void PerfQueue::after_command_buffer(const timeline::SubmitRecord& record,
                                     timeline::LayerCommandBuffers*,
                                     std::vector<VkCommandBuffer>&) {
    if (cb_query_next_ && active_) {
        cb_query_next_->submit = record.submit;
        cb_queries_.push_back(*cb_query_next_);
        cb_queries_reset_.push_back(cb_query_reset_);
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
        size_t found = SIZE_MAX;
        if (begin && begin == end && instance.ending != Ending::never) {
            const auto* block = static_cast<const QueryBlock*>(begin.object());
            for (size_t i = reset_.size(); i-- > 0;) {
                if (reset_[i].block == block) {
                    found = i;
                    break;
                }
            }
            if (found == SIZE_MAX) {
                e.why = why(Reason::not_available);
            } else {
                e.block = block;
                e.slot = begin.index();
            }
        } else {
            e.why = begin.why()                        ? begin.why()
                    : instance.ending == Ending::never ? why(Reason::not_ended)
                                                       : why(Reason::split_render_pass);
        }
        done_.push_back(e);
        done_reset_.push_back(found);
    }
}

void PerfQueue::end_batch(timeline::LayerCommandBuffers*, std::vector<VkCommandBuffer>&) {}

void PerfQueue::run_batch(uint32_t index) {
    const FamilyPlan* plan = device_.plan(family_);
    for (size_t i = batch_first_; i < reset_.size(); ++i) {
        Reset& r = reset_[i];
        if (!r.recording->whole() || !plan) {
            r.pass = r.recording->pass();
            const auto counters = plan && r.pass < plan->passes.size()
                                      ? static_cast<uint32_t>(plan->passes[r.pass].size())
                                      : 0;
            r.generation = device_.reset(r.block, counters);
            continue;
        }
        const PerfRecording::PassRun run = r.recording->run_pass(index);
        if (run.starts) {
            r.recording->set_generation =
                device_.reset(r.block, static_cast<uint32_t>(plan->whole.size()), false);
        }
        if (run.completes) {
            device_.complete(r.block);
        }
        r.generation = r.recording->set_generation;
        r.pass = index;
        r.whole = true;
        r.completes = run.completes;
        // Its set's earlier instances are read with this submission's.
        completes_set_ =
            completes_set_ || (run.completes && completes_ && !r.recording->set_waiting.empty());
    }
    batch_first_ = reset_.size();
}

void PerfQueue::patch(timeline::BatchPatch& batch) {
    if (!batch_queries_) {
        return;
    }
    batch_queries_ = false;
    // One pass index for the whole batch: a pool of one pass accepts only 0, so a recording of
    // the whole selection that shares a batch with one runs pass 0 there.
    uint32_t index = 0;
    const PerfRecording* first_whole = nullptr;
    bool one_pass = false;
    for (size_t i = batch_first_; i < reset_.size(); ++i) {
        if (!reset_[i].recording->whole()) {
            one_pass = true;
        } else if (!first_whole) {
            first_whole = reset_[i].recording;
        }
    }
    if (first_whole && !one_pass) {
        index = first_whole->next_pass();
    }
    run_batch(index);
    VkPerformanceQuerySubmitInfoKHR& info = pass_infos_.emplace_back();
    info.sType = VK_STRUCTURE_TYPE_PERFORMANCE_QUERY_SUBMIT_INFO_KHR;
    info.counterPassIndex = index;
    if (batch.info && !chained(batch.info->pNext)) {
        info.pNext = batch.info->pNext;
        batch.info->pNext = &info;
    } else if (batch.info2 && !chained(batch.info2->pNext)) {
        info.pNext = batch.info2->pNext;
        batch.info2->pNext = &info;
    }
}

timeline::CompletionJob PerfQueue::take_completion() {
    // A set completed in this batch always makes a job (its values are read even after the
    // frame ended); otherwise only an active frame with something to read does.
    if (!completes_set_ && (!active_ || (done_.empty() && cb_queries_.empty()))) {
        return {};
    }
    auto job = std::make_shared<Job>();
    job->device = &device_;
    for (size_t n = 0; n < done_.size(); ++n) {
        Entry e = done_[n];
        if (done_reset_[n] != SIZE_MAX) {
            const Reset& r = reset_[done_reset_[n]];
            e.generation = r.generation;
            e.pass = r.pass;
            if (r.whole && !r.completes) {
                // Read once its set's last pass ran; until then it says so.
                e.why = why(Reason::pass_cycle_incomplete);
                r.recording->set_waiting.push_back(done_[n]);
                r.recording->set_waiting.back().generation = r.generation;
            } else if (r.whole) {
                e.set_submissions = r.recording->set_submissions;
            }
        }
        job->entries.push_back(e);
        job->earlier.push_back({});
    }
    // Sets completed here: each workload's (query slot's) waiting instances come with its
    // completing instance, or, where this submission's frame is not captured, the latest of them
    // takes the values.
    for (size_t ri = 0; ri < reset_.size(); ++ri) {
        const Reset& r = reset_[ri];
        if (!r.whole || !r.completes) {
            continue;
        }
        std::vector<Entry>& waiting = r.recording->set_waiting;
        std::vector<uint32_t> slots_here;
        for (size_t n = 0; n < done_.size(); ++n) {
            if (done_reset_[n] != ri) {
                continue;
            }
            slots_here.push_back(job->entries[n].slot);
            for (const Entry& w : waiting) {
                if (w.slot == job->entries[n].slot) {
                    job->earlier[n].emplace_back(w.submit, w.tag);
                }
            }
        }
        for (size_t k = waiting.size(); k-- > 0;) {
            const Entry& last = waiting[k];
            if (std::find(slots_here.begin(), slots_here.end(), last.slot) != slots_here.end()) {
                continue;
            }
            slots_here.push_back(last.slot);
            Entry e = last;
            e.why = nullptr;
            e.generation = r.generation;
            e.set_submissions = r.recording->set_submissions;
            std::vector<std::pair<uint64_t, uint64_t>> earlier;
            for (size_t j = 0; j < k; ++j) {
                if (waiting[j].slot == last.slot) {
                    earlier.emplace_back(waiting[j].submit, waiting[j].tag);
                }
            }
            job->entries.push_back(e);
            job->earlier.push_back(std::move(earlier));
        }
        waiting.clear();
    }
    done_.clear();
    done_reset_.clear();
    for (size_t k = 0; k < cb_queries_.size(); ++k) {
        if (cb_queries_reset_[k] != SIZE_MAX) {
            cb_queries_[k].generation = reset_[cb_queries_reset_[k]].generation;
        }
    }
    job->cb_queries = std::move(cb_queries_);
    cb_queries_.clear();
    cb_queries_reset_.clear();
    return [job](uint64_t, timeline::CompletionSink& sink) { job->run(sink); };
}

void PerfQueue::end_submission() {
    done_.clear();
    done_reset_.clear();
    cb_queries_.clear();
    cb_query_next_.reset();
    cb_queries_reset_.clear();
    reset_.clear();
    pass_infos_.clear();
    active_ = false;
    completes_set_ = false;
}

} // namespace vkscope::performance_query
