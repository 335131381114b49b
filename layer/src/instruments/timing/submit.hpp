#pragma once
// The timing side of one vkQueueSubmit* call (with the queue's lock held): after each application
// command buffer the interpreter has paired its workloads' timer queries; here they are turned
// into the job the readback thread runs once the GPU is done: SUBMIT_DONE for every submitted
// command buffer, then one timing annex per workload instance.
//
// Where the values are read: when every query pool the pending instances use belongs to a
// recording that runs once (ONE_TIME_SUBMIT), straight from the pools, on the host, once the GPU
// is done (the pools are held until then: QueryPoolCache::hold). Otherwise a recording may run
// again before anyone reads, so a layer command buffer placed after the application's (at the
// first boundary where no render pass instance is suspended) copies the values into the queue's
// result ring first. On a real GPU that command buffer is a measurable share of a short frame
// (docs/timing.md).

#include "instruments/timing/annex.hpp"
#include "instruments/timing/device.hpp"
#include "instruments/timing/entries.hpp"
#include "instruments/timing/results.hpp"
#include "timeline/instrument.hpp"
#include "timeline/interpreter.hpp"

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <utility>
#include <vector>

namespace vkscope::timing {

class SubmitTiming {
public:
    // Inactive (does nothing) unless `device` is set and the frame is captured.
    SubmitTiming(TimingDevice* device, QueueResults* results, uint32_t family, bool frame_selected);
    SubmitTiming(const SubmitTiming&) = delete;
    SubmitTiming& operator=(const SubmitTiming&) = delete;
    // Gives back ring regions no job took (the submission failed).
    ~SubmitTiming();

    bool active() const { return active_; }

    // One application command buffer has run (its marks paired); timing's marks are at `slot`.
    void add(const timeline::SubmitRecord& record, size_t slot);
    // Copies what is pending into a layer command buffer appended to `out`.
    void flush(timeline::LayerCommandBuffers& layer, std::vector<VkCommandBuffer>& out);
    // The batch cannot take layer command buffers: what is pending is untimed.
    void drop_pending(const char* why);
    // End of a batch, flushed: the serialization its instances had, and a caveat for all of them
    // (full mode: a batch left out of the cross-queue chain).
    void end_batch(const char* serialization, const char* caveat);

    // After the application's submission succeeded: the readback thread's work, run with the
    // CLOCK_MONOTONIC time it saw the submission complete.
    timeline::CompletionJob take_job();

private:
    struct Resolved {
        uint64_t submit = 0;
        uint64_t tag = 0;
        Outcome status = Outcome::untimed;
        const char* reason = nullptr;
        const char* serialization = "none";
        // Ok only: result ring entries, or with `in_place` entries of the job's in-place reads.
        uint32_t begin = 0;
        uint32_t end = 0;
        bool in_place = false;
    };
    // A query pool read in place: its used slots are entries first.. of the job's reads.
    struct InPlace {
        QueryBlock* block = nullptr;
        uint32_t first = 0;
    };
    struct Job;

    void settle(const TimingEntry& e, const char* why);
    // Pending entries with both timestamps resolved to entries (pool -> its first entry).
    void resolve(const std::map<QueryBlock*, uint32_t>& first, bool in_place);
    // Holds the pools in `base` for the job and resolves against them (offsets moved).
    void read_in_place(std::map<QueryBlock*, uint32_t>& base, uint32_t total);

    TimingDevice* device_;
    QueueResults* results_;
    uint32_t family_;
    bool active_;
    std::vector<TimingEntry> pending_;
    std::vector<std::pair<uint64_t, uint64_t>> listed_; // instances of the batch
    std::vector<Resolved> batch_;
    std::vector<Resolved> done_;
    std::vector<uint64_t> regions_;
    std::vector<InPlace> in_place_; // held pools (QueryPoolCache::hold)
    uint32_t in_place_entries_ = 0;
    std::vector<uint64_t> submits_;
};

} // namespace vkscope::timing
