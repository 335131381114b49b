#include "instruments/pipeline_statistics/queue.hpp"

#include "core/log.hpp"
#include "core/query_copy.hpp"
#include "core/wire_format.hpp"
#include "instruments/pipeline_statistics/selection.hpp"
#include "timeline/interpreter.hpp"

#include <algorithm>
#include <bit>
#include <cstring>
#include <map>
#include <memory>

namespace vkscope::pipeline_statistics {
namespace {

struct Job {
    StatisticsResults* results = nullptr;
    VkQueryPipelineStatisticFlags statistics = 0;
    std::vector<StatisticsQueue::Resolved> entries;
    std::vector<uint64_t> regions;

    Job() = default;
    Job(const Job&) = delete;
    Job& operator=(const Job&) = delete;
    // Run or dropped (the device goes away first), the ring regions go back.
    ~Job() {
        for (uint64_t r : regions) {
            results->ring.release(r);
        }
    }

    void run(timeline::CompletionSink& sink) const {
        results->buffer.invalidate();
        const uint32_t values = value_count(statistics);
        JsonWriter json;
        for (const StatisticsQueue::Resolved& e : entries) {
            const char* reason = e.why;
            if (!reason && results->word(e.entry, values) == 0) {
                reason = why(Reason::not_available);
            }
            json.clear();
            json.begin_object();
            if (reason) {
                // Never a wrong number: an instance that could not be counted has none.
                json.key("counters").null().field("counters_reason", reason);
            } else {
                json.key("counters").begin_object();
                uint32_t index = 0;
                for (VkQueryPipelineStatisticFlags rest = statistics; rest; rest &= rest - 1) {
                    const uint32_t bit = rest & (~rest + 1);
                    json.field(statistic_name(bit), results->word(e.entry, index++));
                }
                json.end_object();
            }
            json.end_object();
            sink.annex(e.submit, e.tag, json.view());
        }
    }
};

} // namespace

bool StatisticsResults::ready() {
    if (!tried_) {
        tried_ = true;
        if (!buffer.create(device_.handle, device_.next, device_.memory, kEntryBytes * kEntries,
                           VK_BUFFER_USAGE_TRANSFER_DST_BIT)) {
            log_once(LogLevel::warn, "pipeline statistics: no host-visible memory for query "
                                     "results; workloads are not counted");
        }
    }
    return static_cast<bool>(buffer);
}

uint64_t StatisticsResults::word(uint32_t entry, uint32_t index) const {
    uint64_t v = 0;
    // The mapping is volatile (the GPU writes it); copy the bytes out once.
    const volatile uint8_t* p =
        buffer.mapped() + size_t{entry} * kEntryBytes + size_t{index} * sizeof v;
    uint8_t bytes[sizeof v];
    for (size_t i = 0; i < sizeof v; ++i) {
        bytes[i] = p[i];
    }
    std::memcpy(&v, bytes, sizeof v);
    return v;
}

void StatisticsQueue::begin_submission(const timeline::SubmissionStart& start) {
    // Results are read once the queue's semaphore says the GPU is done: without it, no counters.
    active_ = start.completes && start.frame_selected;
    pending_.clear();
    listed_.clear();
    done_.clear();
    regions_.clear();
}

void StatisticsQueue::after_command_buffer(const timeline::SubmitRecord& record,
                                           timeline::LayerCommandBuffers* layer,
                                           std::vector<VkCommandBuffer>& out) {
    if (!active_) {
        return;
    }
    using Ending = timeline::MarkedInstance::Ending;
    for (const timeline::SubmittedWorkload& w : record.workloads) {
        listed_.emplace_back(record.submit, w.tag);
    }
    for (const timeline::MarkedInstance& instance : record.instances) {
        const timeline::Mark& begin = instance.begin[slot_];
        const timeline::Mark& end = instance.end[slot_];
        Entry e{instance.submit, instance.tag, nullptr, 0, nullptr, false};
        if (begin && begin == end && instance.ending != Ending::never) {
            e.block = static_cast<QueryBlock*>(begin.object());
            e.slot = begin.index();
        } else {
            e.why = begin.why()                        ? begin.why()
                    : instance.ending == Ending::never ? why(Reason::not_ended)
                                                       : why(Reason::split_render_pass);
        }
        // The same query run twice before a copy (a secondary executed twice): only the last
        // run's values would be left, so no instance that used it gets any.
        bool repeat = false;
        for (Entry& earlier : pending_) {
            if (e.block && earlier.block == e.block && earlier.slot == e.slot) {
                earlier.twice = true;
                e.twice = true;
                repeat = repeat || (earlier.submit == e.submit && earlier.tag == e.tag);
            }
        }
        if (repeat) {
            continue; // one instance executed twice: one entry says it
        }
        pending_.push_back(e);
    }
    if (layer) {
        flush(*layer, out);
    }
}

void StatisticsQueue::drop_pending(const char* reason) {
    for (const Entry& e : pending_) {
        const char* why_not = e.twice ? why(Reason::secondary_twice) : e.why;
        done_.push_back(Resolved{e.submit, e.tag, why_not ? why_not : reason, 0});
    }
    pending_.clear();
}

void StatisticsQueue::flush(timeline::LayerCommandBuffers& layer,
                            std::vector<VkCommandBuffer>& out) {
    if (pending_.empty()) {
        return;
    }
    // Every block an entry uses is copied whole (its used slots), each once: every used slot was
    // begun and ended by the recording that holds the block, earlier on this queue.
    std::map<QueryBlock*, uint32_t> base;
    uint32_t total = 0;
    for (const Entry& e : pending_) {
        if (e.block && !e.twice && base.emplace(e.block, total).second) {
            total += e.block->used;
        }
    }
    if (total == 0) {
        drop_pending(why(Reason::not_available));
        return;
    }
    if (!results_.ready()) {
        drop_pending(why(Reason::no_result_buffer));
        return;
    }
    const auto region = results_.ring.allocate(total);
    if (!region) {
        drop_pending(why(Reason::results_full));
        return;
    }
    const VkCommandBuffer cb = layer.begin();
    if (!cb) {
        results_.ring.release(region->id);
        drop_pending(why(Reason::fixed_batch));
        return;
    }
    regions_.push_back(region->id);
    const DeviceDispatch& next = device_.next;
    record_query_copy(next, cb, base, region->first, results_.buffer.buffer(),
                      StatisticsResults::kEntryBytes);
    next.EndCommandBuffer(cb);
    out.push_back(cb);
    for (const Entry& e : pending_) {
        if (e.twice) {
            done_.push_back(Resolved{e.submit, e.tag, why(Reason::secondary_twice), 0});
        } else if (e.block) {
            done_.push_back(Resolved{e.submit, e.tag, nullptr, base[e.block] + e.slot});
        } else {
            done_.push_back(Resolved{e.submit, e.tag, e.why, 0});
        }
    }
    pending_.clear();
}

void StatisticsQueue::end_batch(timeline::LayerCommandBuffers* layer,
                                std::vector<VkCommandBuffer>& out) {
    if (!active_) {
        return;
    }
    if (layer) {
        flush(*layer, out);
    }
    drop_pending(why(Reason::fixed_batch));
    // An instance listed in a SUBMIT must say something, even when no end of it was seen.
    std::vector<std::pair<uint64_t, uint64_t>> seen;
    for (const Resolved& r : done_) {
        seen.emplace_back(r.submit, r.tag);
    }
    std::sort(seen.begin(), seen.end());
    std::sort(listed_.begin(), listed_.end());
    listed_.erase(std::unique(listed_.begin(), listed_.end()), listed_.end());
    for (const auto& [submit, tag] : listed_) {
        if (!std::binary_search(seen.begin(), seen.end(), std::pair{submit, tag})) {
            done_.push_back(Resolved{submit, tag, why(Reason::not_ended), 0});
        }
    }
    listed_.clear();
}

timeline::CompletionJob StatisticsQueue::take_completion() {
    if (!active_ || done_.empty()) {
        return {};
    }
    auto job = std::make_shared<Job>();
    job->results = &results_;
    job->statistics = statistics_;
    job->entries = std::move(done_);
    job->regions = std::move(regions_);
    done_.clear();
    regions_.clear();
    return [job](uint64_t, timeline::CompletionSink& sink) { job->run(sink); };
}

void StatisticsQueue::end_submission() {
    // Ring regions no job took go back (the submission failed).
    for (uint64_t r : regions_) {
        results_.ring.release(r);
    }
    regions_.clear();
    pending_.clear();
    done_.clear();
    active_ = false;
}

} // namespace vkscope::pipeline_statistics
