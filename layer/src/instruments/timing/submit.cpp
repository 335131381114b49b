#include "instruments/timing/submit.hpp"

#include "core/query_copy.hpp"

#include <algorithm>
#include <map>
#include <memory>

namespace vkscope::timing {

namespace {

// 64-bit value and 64-bit availability per timestamp, as the ring holds them.
constexpr VkQueryResultFlags kResultFlags =
    VK_QUERY_RESULT_64_BIT | VK_QUERY_RESULT_WITH_AVAILABILITY_BIT;

// Gives the held pools back (QueryPoolCache::read_done), once.
template <typename Reads> void let_go(TimingDevice* device, Reads& reads) {
    for (const auto& r : reads) {
        device->pools.read_done(r.block);
    }
    reads.clear();
}

} // namespace

struct SubmitTiming::Job {
    TimingDevice* device = nullptr;
    QueueResults* results = nullptr;
    uint32_t family = 0;
    std::vector<Resolved> entries;
    std::vector<uint64_t> regions;
    std::vector<InPlace> in_place;
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
        let_go(device, in_place);
    }

    // The held pools' used slots, read on the host now that the GPU is done with them.
    std::vector<uint64_t> read_in_place() {
        std::vector<uint64_t> words(2 * size_t{in_place_entries}, 0);
        for (const InPlace& r : in_place) {
            const size_t bytes = size_t{r.block->used} * QueueResults::kEntryBytes;
            // VK_NOT_READY leaves the availability words of what was not written at 0.
            device->next.GetQueryPoolResults(device->handle, r.block->pool, 0, r.block->used, bytes,
                                             &words[2 * size_t{r.first}], QueueResults::kEntryBytes,
                                             kResultFlags);
        }
        let_go(device, in_place);
        return words;
    }

    void run(uint64_t done_ns, timeline::CompletionSink& sink) {
        for (uint64_t s : submits) {
            sink.post(submit_done_frame(s, done_ns));
        }
        if (!regions.empty()) {
            results->invalidate();
        }
        const std::vector<uint64_t> words = read_in_place();
        const auto available = [&](const Resolved& e, uint32_t i) {
            return e.in_place ? words[2 * size_t{i} + 1] != 0 : results->available(i);
        };
        const auto value = [&](const Resolved& e, uint32_t i) {
            return e.in_place ? words[2 * size_t{i}] : results->value(i);
        };
        const std::optional<Calibration> calibration = device->calibration();
        const TickFormat format = device->format(family);
        for (const Resolved& e : entries) {
            InstanceTiming t;
            t.status = e.status;
            t.reason = e.reason;
            t.serialization = e.serialization;
            if (t.status == Outcome::ok) {
                std::optional<GpuInterval> interval;
                if (available(e, e.begin) && available(e, e.end)) {
                    interval =
                        timing::interval(value(e, e.begin), value(e, e.end), format, calibration);
                }
                if (interval) {
                    t.begin_ns = interval->begin_ns;
                    t.end_ns = interval->end_ns;
                } else {
                    t.status = Outcome::untimed;
                    t.reason = reason::kNotAvailable;
                }
            }
            sink.annex(e.submit, e.tag, timing_annex(t));
        }
    }
};

SubmitTiming::SubmitTiming(TimingDevice* device, QueueResults* results, uint32_t family,
                           bool frame_selected)
    : device_(device), results_(results), family_(family),
      active_(device != nullptr && results != nullptr && frame_selected) {}

SubmitTiming::~SubmitTiming() {
    for (uint64_t r : regions_) {
        results_->release(r);
    }
    let_go(device_, in_place_);
}

void SubmitTiming::add(const timeline::SubmitRecord& record, size_t slot) {
    if (!active_) {
        return;
    }
    submits_.push_back(record.submit);
    for (const timeline::SubmittedWorkload& w : record.workloads) {
        listed_.emplace_back(record.submit, w.tag);
    }
    std::vector<TimingEntry> entries;
    entries.reserve(record.instances.size());
    for (const timeline::MarkedInstance& instance : record.instances) {
        entries.push_back(entry_of(instance, slot));
    }
    mark_repeats(pending_, entries);
    pending_.insert(pending_.end(), entries.begin(), entries.end());
}

void SubmitTiming::settle(const TimingEntry& e, const char* why) {
    Resolved r;
    r.submit = e.submit;
    r.tag = e.tag;
    if (e.ambiguous) {
        r.status = Outcome::ambiguous;
        r.reason = reason::kSecondaryTwice;
    } else {
        r.status = Outcome::untimed;
        r.reason = e.untimed ? e.untimed : why;
    }
    batch_.push_back(r);
}

void SubmitTiming::drop_pending(const char* why) {
    for (const TimingEntry& e : pending_) {
        settle(TimingEntry{e.submit, e.tag, {}, {}, e.untimed ? e.untimed : why, e.ambiguous}, why);
    }
    pending_.clear();
}

void SubmitTiming::flush(timeline::LayerCommandBuffers& layer, std::vector<VkCommandBuffer>& out) {
    if (!active_ || pending_.empty()) {
        return;
    }
    // Every pool a timed entry uses is read whole (its used slots), each once. Every used slot
    // was written by the recording that holds the pool, earlier on this queue.
    std::map<QueryBlock*, uint32_t> base;
    uint32_t total = 0;
    bool one_run = true;
    for (const TimingEntry& e : pending_) {
        if (e.ambiguous || !e.begin || !e.end) {
            continue;
        }
        for (QueryBlock* b : {e.begin.block, e.end.block}) {
            if (base.emplace(b, total).second) {
                total += b->used;
                one_run = one_run && b->one_run;
            }
        }
    }
    if (total == 0) {
        drop_pending(reason::kNotAvailable);
        return;
    }
    if (one_run) {
        read_in_place(base, total);
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
    const DeviceDispatch& next = device_->next;
    record_query_copy(next, cb, base, region->first, results_->buffer(), QueueResults::kEntryBytes);
    next.EndCommandBuffer(cb);
    out.push_back(cb);
    resolve(base, false);
}

void SubmitTiming::read_in_place(std::map<QueryBlock*, uint32_t>& base, uint32_t total) {
    // The offsets move past the job's earlier reads, as record_query_copy moves them to the
    // ring region.
    for (auto& [block, offset] : base) {
        offset += in_place_entries_;
        device_->pools.hold(block);
        in_place_.push_back(InPlace{block, offset});
    }
    in_place_entries_ += total;
    resolve(base, true);
}

void SubmitTiming::resolve(const std::map<QueryBlock*, uint32_t>& first, bool in_place) {
    for (const TimingEntry& e : pending_) {
        if (e.ambiguous || !e.begin || !e.end) {
            settle(e, reason::kNotAvailable);
            continue;
        }
        Resolved r;
        r.submit = e.submit;
        r.tag = e.tag;
        r.status = Outcome::ok;
        r.begin = first.at(e.begin.block) + e.begin.slot;
        r.end = first.at(e.end.block) + e.end.slot;
        r.in_place = in_place;
        batch_.push_back(r);
    }
    pending_.clear();
}

void SubmitTiming::end_batch(const char* serialization, const char* caveat) {
    if (!active_) {
        return;
    }
    drop_pending(reason::kNotEnded);
    // An instance listed in a SUBMIT must say something, even when no end of it was seen.
    std::vector<std::pair<uint64_t, uint64_t>> seen;
    for (const Resolved& r : batch_) {
        seen.emplace_back(r.submit, r.tag);
    }
    std::sort(seen.begin(), seen.end());
    std::sort(listed_.begin(), listed_.end());
    listed_.erase(std::unique(listed_.begin(), listed_.end()), listed_.end());
    for (const auto& [submit, tag] : listed_) {
        if (!std::binary_search(seen.begin(), seen.end(), std::pair{submit, tag})) {
            settle(TimingEntry{submit, tag, {}, {}, reason::kNotEnded, false}, reason::kNotEnded);
        }
    }
    listed_.clear();
    for (Resolved& r : batch_) {
        const bool injected = r.reason != reason::kOutsideFrame;
        r.serialization = injected ? serialization : "none";
        if (r.status == Outcome::ok && caveat) {
            r.reason = caveat;
        }
        done_.push_back(r);
    }
    batch_.clear();
}

timeline::CompletionJob SubmitTiming::take_job() {
    if (!active_ || (done_.empty() && submits_.empty())) {
        return {};
    }
    auto job = std::make_shared<Job>();
    job->device = device_;
    job->results = results_;
    job->family = family_;
    job->entries = std::move(done_);
    job->regions = std::move(regions_);
    job->in_place = std::move(in_place_);
    job->in_place_entries = in_place_entries_;
    job->submits = std::move(submits_);
    done_.clear();
    regions_.clear();
    in_place_.clear();
    in_place_entries_ = 0;
    submits_.clear();
    return [job](uint64_t done_ns, timeline::CompletionSink& sink) { job->run(done_ns, sink); };
}

} // namespace vkscope::timing
