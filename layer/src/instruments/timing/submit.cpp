#include "instruments/timing/submit.hpp"

#include "core/query_copy.hpp"

#include <algorithm>
#include <memory>

namespace vkscope::timing {

namespace {

// 64-bit value and 64-bit availability per timestamp, as the ring holds them.
constexpr VkQueryResultFlags kResultFlags =
    VK_QUERY_RESULT_64_BIT | VK_QUERY_RESULT_WITH_AVAILABILITY_BIT;

// Gives the held pools back (QueryPoolCache::read_done), once.
void let_go(TimingDevice* device, std::vector<QueryBlock*>& held) {
    for (QueryBlock* block : held) {
        device->pools.read_done(block);
    }
    held.clear();
}

} // namespace

struct SubmitTiming::Job {
    TimingDevice* device = nullptr;
    QueueResults* results = nullptr;
    uint32_t family = 0;
    timeline::PairedInstances paired;
    std::vector<TimingEntry> entries;
    std::vector<Read> reads;
    std::vector<ReadBlock> blocks;
    std::vector<Batch> batches;
    std::vector<uint64_t> regions;
    std::vector<QueryBlock*> held;
    uint32_t in_place_entries = 0;
    std::vector<uint64_t> submits;

    Job() = default;
    Job(const Job&) = delete;
    Job& operator=(const Job&) = delete;
    // Run or dropped (the device goes away first), the ring regions and held pools go back.
    ~Job() {
        for (uint64_t r : regions) {
            results->release(r);
        }
        let_go(device, held);
    }

    // The held pools' used slots, read on the host now that the GPU is done with them.
    std::vector<uint64_t> read_in_place() {
        std::vector<uint64_t> words(2 * size_t{in_place_entries}, 0);
        uint32_t first = 0;
        for (const Read& r : reads) {
            for (uint32_t b = first; r.in_place && !r.dropped && b < r.blocks; ++b) {
                const QueryBlock* block = blocks[b].block;
                const size_t bytes = size_t{block->used} * QueueResults::kEntryBytes;
                // VK_NOT_READY leaves the availability words of what was not written at 0.
                device->next.GetQueryPoolResults(device->handle, block->pool, 0, block->used, bytes,
                                                 &words[2 * size_t{blocks[b].base}],
                                                 QueueResults::kEntryBytes, kResultFlags);
            }
            first = r.blocks;
        }
        let_go(device, held);
        return words;
    }

    // The entries of the paired instances, command buffer by command buffer in call order, and
    // the entries and listed instances each read and each batch ends at. Within a read, a begin
    // timestamp seen before is a query run twice (append_entry()).
    struct Entries {
        std::vector<TimingEntry>& list;
        QueryReads seen;
        size_t read_from = 0;

        void append(const InstanceMarks& instance) {
            append_entry(seen, list, read_from, entry_of(instance));
        }
        void read_closed() {
            read_from = list.size();
            seen.clear();
        }
        uint32_t size() const { return static_cast<uint32_t>(list.size()); }
    };
    void pair() {
        entries.reserve(paired.size());
        Entries appended{entries, {}, 0};
        paired.walk(reads, batches, appended);
    }

    void run(uint64_t done_ns, timeline::CompletionSink& sink) {
        for (uint64_t s : submits) {
            sink.post(submit_done_frame(s, done_ns));
        }
        pair();
        if (!regions.empty()) {
            results->invalidate();
        }
        const std::vector<uint64_t> words = read_in_place();
        const std::optional<Calibration> calibration = device->calibration();
        const TickFormat format = device->format(family);
        const auto value = [&](bool in_place, uint32_t i, uint64_t& out) {
            if (in_place) {
                out = words[2 * size_t{i}];
                return words[2 * size_t{i} + 1] != 0;
            }
            out = results->value(i);
            return results->available(i);
        };
        size_t e = 0;
        size_t r = 0;
        uint32_t first_block = 0; // of read r
        uint32_t l = 0;
        std::vector<timeline::PairedInstances::Listed> seen;
        for (const Batch& batch : batches) {
            seen.clear();
            const auto settle = [&](InstanceTiming& t) {
                // Instances recorded outside captured frames, and those the cost budget left out
                // of theirs, had nothing injected around them.
                const bool injected =
                    t.reason != reason::kOutsideFrame && t.reason != reason::kBudget;
                t.serialization = injected ? batch.serialization : "none";
                if (t.status == Outcome::ok && batch.caveat) {
                    t.reason = batch.caveat;
                }
            };
            for (; e < batch.entries; ++e) {
                while (reads[r].end <= e) {
                    first_block = reads[r++].blocks;
                }
                const Read& read = reads[r];
                const TimingEntry& te = entries[e];
                InstanceTiming t;
                if (te.ambiguous) {
                    t.status = Outcome::ambiguous;
                    t.reason = reason::kSecondaryTwice;
                } else if (read.dropped || !te.begin || !te.end) {
                    t.status = Outcome::untimed;
                    t.reason = te.untimed ? te.untimed
                                          : (read.dropped ? read.dropped : reason::kNotAvailable);
                } else {
                    t.status = Outcome::ok;
                }
                settle(t);
                seen.emplace_back(te.submit, te.tag);
                if (t.status == Outcome::ok) {
                    const auto base = [&](const QueryBlock* block) {
                        for (uint32_t b = first_block; b < read.blocks; ++b) {
                            if (blocks[b].block == block) {
                                return blocks[b].base;
                            }
                        }
                        return uint32_t{0};
                    };
                    uint64_t begin = 0;
                    uint64_t end = 0;
                    std::optional<GpuInterval> interval;
                    if (value(read.in_place, base(te.begin.block) + te.begin.slot, begin) &&
                        value(read.in_place, base(te.end.block) + te.end.slot, end)) {
                        interval = timing::interval(begin, end, format, calibration);
                    }
                    if (interval) {
                        t.begin_ns = interval->begin_ns;
                        t.end_ns = interval->end_ns;
                    } else {
                        t.status = Outcome::untimed;
                        t.reason = reason::kNotAvailable;
                    }
                }
                sink.annex(te.submit, te.tag, timing_annex(t));
            }
            paired.for_each_unsaid(l, batch.listed, seen, [&](uint64_t submit, uint64_t tag) {
                InstanceTiming t;
                t.status = Outcome::untimed;
                t.reason = reason::kNotEnded;
                settle(t);
                sink.annex(submit, tag, timing_annex(t));
            });
            l = batch.listed;
        }
    }
};

SubmitTiming::SubmitTiming(QueueResults* results, uint32_t family, size_t slot)
    : results_(results), family_(family), slot_(slot) {}

void SubmitTiming::begin(TimingDevice* device, bool frame_selected) {
    device_ = device;
    active_ = device != nullptr && results_ != nullptr && frame_selected;
    if (active_) {
        closed_.blocks.reserve(blocks_hint_);
    }
}

void SubmitTiming::end() {
    for (uint64_t r : regions_) {
        results_->release(r);
    }
    if (device_) {
        let_go(device_, held_);
    }
    clear();
    device_ = nullptr;
    active_ = false;
}

void SubmitTiming::clear() {
    reads_.clear();
    added_ = closed_at_ = 0;
    closed_.clear();
    batches_.clear();
    paired_.clear();
    regions_.clear();
    held_.clear();
    in_place_entries_ = 0;
    submits_.clear();
    timed_ = false;
    lists_ = false;
    last_job_.reset();
}

void SubmitTiming::add(const timeline::SubmitRecord& record) {
    const size_t slot = slot_;
    if (!active_) {
        return;
    }
    ++added_;
    // Every block a timestamp of the stream is in: those the read copies (or holds).
    const QueryBlock* last = nullptr;
    for (const timeline::MarkObject& o : record.stream.objects) {
        if (o.slot == slot) {
            auto* block = static_cast<QueryBlock*>(o.object);
            reads_.add(block);
            last = block;
        }
    }
    // An instance paired already may have begun in an earlier command buffer's stream: only a
    // render pass instance can (any other workload begins and ends in one stream, whose marks
    // were just looked through).
    for (const timeline::MarkedInstance& instance : record.instances) {
        if (instance.ending == timeline::MarkedInstance::Ending::workload) {
            continue;
        }
        const Timestamp begin = timestamp_of(instance.begin[slot]);
        if (begin && begin.block != last && timestamp_of(instance.end[slot])) {
            reads_.add(begin.block);
            last = begin.block;
        }
    }
    submits_.push_back(record.submit);
    timed_ = timed_ || last != nullptr;
    lists_ = lists_ || record.lists_later;
}

void SubmitTiming::paired(const timeline::SubmitRecord& record) {
    if (active_) {
        paired_.paired(record, slot_);
    }
}

void SubmitTiming::close_read(const char* dropped, bool in_place, const QueryReads* reads) {
    closed_.close(0, dropped, in_place, reads);
    paired_.read_closed(added_);
    closed_at_ = added_;
    reads_.clear();
}

void SubmitTiming::drop_pending(const char* why) {
    if (pending()) {
        close_read(why, false, nullptr);
    }
}

void SubmitTiming::flush(timeline::LayerCommandBuffers& layer, std::vector<VkCommandBuffer>& out) {
    if (!active_ || !pending()) {
        return;
    }
    // Every pool an entry with both timestamps uses is read whole (its used slots), each once.
    // Every used slot was written by the recording that holds the pool, earlier on this queue.
    const uint32_t total = reads_.lay_out(0);
    if (total == 0) {
        drop_pending(reason::kNotAvailable);
        return;
    }
    if (reads_.one_run()) {
        // Read on the host by the job, after the reads before it in this submission.
        reads_.lay_out(in_place_entries_);
        in_place_entries_ += total;
        for (const QueryReads::Block& b : reads_.blocks()) {
            if (b.counted) {
                device_->pools.hold(b.block);
                held_.push_back(b.block);
            }
        }
        close_read(nullptr, true, &reads_);
        return;
    }
    // Copied out: the copy may wait for availability (without the wait some drivers copy before
    // the timestamps land, a pipeline barrier notwithstanding).
    if (!results_->ready()) {
        drop_pending(reason::kNoResultBuffer);
        return;
    }
    const auto region = results_->allocate(total);
    if (!region) {
        drop_pending(reason::kResultsFull);
        return;
    }
    const VkCommandBuffer cb = layer.begin();
    if (!cb) {
        results_->release(region->id);
        drop_pending(reason::kFixedBatch);
        return;
    }
    regions_.push_back(region->id);
    reads_.lay_out(region->first);
    const DeviceDispatch& next = device_->next;
    record_query_copy(next, cb, reads_, results_->buffer(), QueueResults::kEntryBytes);
    next.EndCommandBuffer(cb);
    out.push_back(cb);
    close_read(nullptr, false, &reads_);
}

void SubmitTiming::end_batch(const char* serialization, const char* caveat) {
    if (!active_) {
        return;
    }
    drop_pending(reason::kNotEnded);
    batches_.push_back(Batch{0, 0, serialization, caveat});
    paired_.batch_closed(added_);
}

bool SubmitTiming::needs_job() const {
    // An instance paired makes an entry; a workload listed and not left out, a listed one.
    return active_ && (timed_ || lists_ || !paired_.empty());
}

timeline::CompletionJob SubmitTiming::take_job() {
    if (!needs_job()) {
        return {};
    }
    auto job = std::make_shared<Job>();
    job->device = device_;
    job->results = results_;
    job->family = family_;
    job->paired = std::move(paired_);
    job->reads = std::move(closed_.reads);
    job->blocks = std::move(closed_.blocks);
    job->batches = std::move(batches_);
    job->regions = std::move(regions_);
    job->held = std::move(held_);
    job->in_place_entries = in_place_entries_;
    job->submits = std::move(submits_);
    blocks_hint_ = job->blocks.size();
    clear();
    last_job_ = job;
    return [job](uint64_t done_ns, timeline::CompletionSink& sink) { job->run(done_ns, sink); };
}

timeline::DeferredPairing SubmitTiming::take_pairing() {
    return timeline::pairing_into(last_job_, slot_);
}

} // namespace vkscope::timing
