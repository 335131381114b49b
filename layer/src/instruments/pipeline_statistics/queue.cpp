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

// Values and availability, 64-bit each, as the ring holds them.
constexpr VkQueryResultFlags kResultFlags =
    VK_QUERY_RESULT_64_BIT | VK_QUERY_RESULT_WITH_AVAILABILITY_BIT;

} // namespace

struct StatisticsQueue::Job {
    StatisticsResults* results = nullptr;
    QueryPoolCache* pools = nullptr;
    VkQueryPipelineStatisticFlags statistics = 0;
    timeline::PairedInstances paired;
    std::vector<Entry> entries;
    std::vector<Read> reads;
    std::vector<ReadBlock> blocks;
    std::vector<Batch> batches;
    std::vector<uint64_t> regions;
    std::vector<QueryBlock*> held;
    uint32_t in_place_entries = 0;

    Job() = default;
    Job(const Job&) = delete;
    Job& operator=(const Job&) = delete;
    // Run or dropped (the device goes away first), the ring regions and held pools go back.
    ~Job() {
        for (uint64_t r : regions) {
            results->ring.release(r);
        }
        let_go();
    }

    void let_go() {
        for (QueryBlock* block : held) {
            pools->read_done(block);
        }
        held.clear();
    }

    // The held pools' used queries, read on the host now that the GPU is done with them.
    std::vector<uint64_t> read_in_place() {
        constexpr uint32_t kWords = StatisticsResults::kWords;
        std::vector<uint64_t> words(size_t{in_place_entries} * kWords, 0);
        const StatisticsDevice& device = results->device_;
        uint32_t first = 0;
        for (const Read& r : reads) {
            for (uint32_t b = first; r.in_place && !r.dropped && b < r.blocks; ++b) {
                const QueryBlock* block = blocks[b].block;
                // VK_NOT_READY leaves the availability word of what was not written at 0.
                device.next.GetQueryPoolResults(device.handle, block->pool, 0, block->used,
                                                size_t{block->used} *
                                                    StatisticsResults::kEntryBytes,
                                                &words[size_t{blocks[b].base} * kWords],
                                                StatisticsResults::kEntryBytes, kResultFlags);
            }
            first = r.blocks;
        }
        let_go();
        return words;
    }

    // Each paired instance's entry: its query, or why it has none. The same query run twice
    // within a read (a secondary executed twice) keeps only the last run's values, so no
    // instance that used it gets any.
    struct Entries {
        std::vector<Entry>& list;
        QueryReads seen;
        size_t read_from = 0;

        void append(const timeline::InstanceMarks& instance) {
            using Ending = timeline::MarkedInstance::Ending;
            Entry e{instance.submit, instance.tag, nullptr, 0, nullptr, false};
            if (instance.begin && instance.begin == instance.end &&
                instance.ending != Ending::never) {
                e.block = static_cast<QueryBlock*>(instance.begin.object());
                e.slot = instance.begin.index();
            } else {
                e.why = instance.begin.why()               ? instance.begin.why()
                        : instance.ending == Ending::never ? why(Reason::not_ended)
                                                           : why(Reason::split_render_pass);
            }
            if (e.block && !seen.first_use(e.block, e.slot)) {
                bool repeat = false;
                for (size_t i = read_from; i < list.size(); ++i) {
                    Entry& earlier = list[i];
                    if (earlier.block == e.block && earlier.slot == e.slot) {
                        earlier.twice = true;
                        e.twice = true;
                        repeat = repeat || (earlier.submit == e.submit && earlier.tag == e.tag);
                    }
                }
                if (repeat) {
                    return; // one instance executed twice: one entry says it
                }
            }
            list.push_back(e);
        }
        void read_closed() {
            read_from = list.size();
            seen.clear();
        }
        uint32_t size() const { return static_cast<uint32_t>(list.size()); }
    };

    void run(timeline::CompletionSink& sink) {
        entries.reserve(paired.size());
        Entries appended{entries, {}, 0};
        paired.walk(reads, batches, appended);
        if (!regions.empty()) {
            results->buffer.invalidate();
        }
        const std::vector<uint64_t> in_place = read_in_place();
        const uint32_t values = value_count(statistics);
        JsonWriter json;
        const auto annex = [&](uint64_t submit, uint64_t tag, const char* reason, bool placed,
                               uint32_t entry) {
            const auto word = [&](uint32_t index) {
                return placed ? in_place[size_t{entry} * StatisticsResults::kWords + index]
                              : results->word(entry, index);
            };
            if (!reason && word(values) == 0) {
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
                    json.field(statistic_name(bit), word(index++));
                }
                json.end_object();
            }
            json.end_object();
            sink.annex(submit, tag, json.view());
        };
        size_t e = 0;
        size_t r = 0;
        uint32_t first_block = 0; // of read r
        uint32_t l = 0;
        std::vector<timeline::PairedInstances::Listed> seen;
        for (const Batch& batch : batches) {
            seen.clear();
            for (; e < batch.entries; ++e) {
                while (reads[r].end <= e) {
                    first_block = reads[r++].blocks;
                }
                const Read& read = reads[r];
                const Entry& x = entries[e];
                seen.emplace_back(x.submit, x.tag);
                if (x.twice) {
                    annex(x.submit, x.tag, why(Reason::secondary_twice), false, 0);
                } else if (!x.block || read.dropped) {
                    annex(x.submit, x.tag, x.why ? x.why : read.dropped, false, 0);
                } else {
                    // Its block is among its read's: the stream that ended it named it.
                    uint32_t b = first_block;
                    while (b < read.blocks && blocks[b].block != x.block) {
                        ++b;
                    }
                    if (b < read.blocks) {
                        annex(x.submit, x.tag, nullptr, read.in_place, blocks[b].base + x.slot);
                    } else {
                        annex(x.submit, x.tag, why(Reason::not_available), false, 0);
                    }
                }
            }
            paired.for_each_unsaid(l, batch.listed, seen, [&](uint64_t submit, uint64_t tag) {
                annex(submit, tag, why(Reason::not_ended), false, 0);
            });
            l = batch.listed;
        }
    }
};

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
    release();
}

void StatisticsQueue::after_command_buffer(const timeline::SubmitRecord& record,
                                           timeline::LayerCommandBuffers* layer,
                                           std::vector<VkCommandBuffer>& out) {
    if (!active_) {
        return;
    }
    ++added_;
    // Every block a query of the stream is in: those the read copies (or holds). A render pass
    // instance begun in an earlier command buffer has no query (one cannot span command buffers).
    for (const timeline::MarkObject& o : record.stream.objects) {
        if (o.slot == slot_) {
            reads_.add(static_cast<QueryBlock*>(o.object));
            counted_ = true;
        }
    }
    lists_ = lists_ || record.lists_later;
    if (layer) {
        flush(*layer, out);
    }
}

void StatisticsQueue::paired(const timeline::SubmitRecord& record) {
    if (active_) {
        paired_.paired(record, slot_);
    }
}

void StatisticsQueue::close_read(const char* dropped, bool in_place, const QueryReads* reads) {
    closed_.close(0, dropped, in_place, reads);
    paired_.read_closed(added_);
    closed_at_ = added_;
    reads_.clear();
}

void StatisticsQueue::drop_pending(const char* reason) {
    if (pending()) {
        close_read(reason, false, nullptr);
    }
}

void StatisticsQueue::flush(timeline::LayerCommandBuffers& layer,
                            std::vector<VkCommandBuffer>& out) {
    if (!pending()) {
        return;
    }
    // Every block is read whole (its used slots), each once: every used slot was begun and ended
    // by the recording that holds the block, earlier on this queue.
    const uint32_t total = reads_.lay_out(0);
    if (total == 0) {
        drop_pending(why(Reason::not_available));
        return;
    }
    if (pools_ && reads_.one_run()) {
        // Read on the host by the job, after the reads before it in this submission.
        reads_.lay_out(in_place_entries_);
        in_place_entries_ += total;
        for (const QueryReads::Block& b : reads_.blocks()) {
            if (b.counted) {
                pools_->hold(b.block);
                held_.push_back(b.block);
            }
        }
        close_read(nullptr, true, &reads_);
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
    reads_.lay_out(region->first);
    const DeviceDispatch& next = device_.next;
    record_query_copy(next, cb, reads_, results_.buffer.buffer(), StatisticsResults::kEntryBytes);
    next.EndCommandBuffer(cb);
    out.push_back(cb);
    close_read(nullptr, false, &reads_);
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
    batches_.push_back(Batch{});
    paired_.batch_closed(added_);
}

std::string StatisticsQueue::left_out_annex() const {
    // What the job says of an instance that could not be counted.
    JsonWriter json;
    json.begin_object().key("counters").null().field("counters_reason", why(Reason::budget));
    json.end_object();
    return json.take();
}

timeline::CompletionJob StatisticsQueue::take_completion() {
    if (!needs_completion()) {
        return {};
    }
    auto job = std::make_shared<Job>();
    job->results = &results_;
    job->pools = pools_;
    job->statistics = statistics_;
    job->paired = std::move(paired_);
    job->reads = std::move(closed_.reads);
    job->blocks = std::move(closed_.blocks);
    job->batches = std::move(batches_);
    job->regions = std::move(regions_);
    job->held = std::move(held_);
    job->in_place_entries = in_place_entries_;
    in_place_entries_ = 0;
    release();
    last_job_ = job;
    return [job](uint64_t, timeline::CompletionSink& sink) { job->run(sink); };
}

timeline::DeferredPairing StatisticsQueue::take_pairing() {
    return timeline::pairing_into(last_job_, slot_);
}

void StatisticsQueue::end_submission() {
    // Ring regions and held pools no job took go back (the submission failed).
    release();
    active_ = false;
}

void StatisticsQueue::release() {
    for (uint64_t r : regions_) {
        results_.ring.release(r);
    }
    for (QueryBlock* block : held_) {
        pools_->read_done(block);
    }
    regions_.clear();
    held_.clear();
    reads_.clear();
    added_ = closed_at_ = 0;
    counted_ = false;
    lists_ = false;
    last_job_.reset();
    closed_.clear();
    batches_.clear();
    paired_.clear();
    in_place_entries_ = 0;
}

} // namespace vkscope::pipeline_statistics
