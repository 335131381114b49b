#pragma once
// The timing side of one vkQueueSubmit* call (with the queue's lock held): after each application
// command buffer the interpreter has paired its workloads' timer queries; here they become the job
// the readback thread runs once the GPU is done: SUBMIT_DONE for every submitted command buffer,
// then one timing annex per workload instance.
//
// Only what must happen before the driver's call is done then: per command buffer which query
// pools are read and how, found in its command stream's timer queries (a few instructions per
// workload). The instances the timeline paired, and the workloads its SUBMITs list, are copied
// whole as each command buffer is paired (InstrumentQueue::paired()); reads and batches are
// closed by command buffer. Everything per instance is the job's work, on the readback thread:
// taking each instance's two timestamps (and flagging a query run twice before a read), finding
// which entries each read and batch ends at, resolving each instance against its read, settling
// those that cannot be timed and checking that every listed instance says something. On a CPU
// device the timeline pairs inside the application's call, so doing it there cost the call about
// a fifth of what timing added to it.
//
// Where the values are read: when every query pool a read covers belongs to a recording that
// runs once (ONE_TIME_SUBMIT), straight from the pools, on the host, once the GPU is done (the
// pools are held until then: QueryPoolCache::hold). Otherwise a recording may run again before
// anyone reads, so a layer command buffer placed after the application's (at the first boundary
// where no render pass instance is suspended) copies the values into the queue's result ring
// first. On a real GPU that command buffer is a measurable share of a short frame
// (docs/timing.md).

#include "core/query_reads.hpp"
#include "instruments/timing/annex.hpp"
#include "instruments/timing/device.hpp"
#include "instruments/timing/entries.hpp"
#include "instruments/timing/results.hpp"
#include "timeline/instrument.hpp"
#include "timeline/interpreter.hpp"
#include "timeline/paired_instances.hpp"

#include <cstdint>
#include <utility>
#include <vector>

namespace vkscope::timing {

class SubmitTiming {
public:
    // One per queue, serving its submissions one after the other (begin() to end()), so that
    // the lists only this side of the job uses keep their storage.
    SubmitTiming(QueueResults* results, uint32_t family, size_t slot);
    SubmitTiming(const SubmitTiming&) = delete;
    SubmitTiming& operator=(const SubmitTiming&) = delete;
    ~SubmitTiming() { end(); }

    // A submission begins: inactive (does nothing) unless `device` is set and the frame is
    // captured.
    void begin(TimingDevice* device, bool frame_selected);
    // It is over: gives back ring regions and held pools no job took (the submission failed),
    // and forgets the rest.
    void end();

    bool active() const { return active_; }

    // One application command buffer is in the call; timing's marks are at `slot` of its
    // stream's (and of its paired instances', when they are paired already).
    void add(const timeline::SubmitRecord& record);
    // The same command buffer's workloads and paired instances, in call order, before or after
    // add().
    void paired(const timeline::SubmitRecord& record);
    // Reads what is pending: in place, or copied by a layer command buffer appended to `out`.
    void flush(timeline::LayerCommandBuffers& layer, std::vector<VkCommandBuffer>& out);
    // The batch cannot take layer command buffers: what is pending is untimed.
    void drop_pending(const char* why);
    // End of a batch, flushed: the serialization its instances had, and a caveat for all of them
    // (full mode: a batch left out of the cross-queue chain).
    void end_batch(const char* serialization, const char* caveat);

    // Whether there is anything for a job to read or say: a timestamp in a command buffer, or an
    // instance to settle. Not when the cost budget left every workload out (their annexes are
    // the timeline's to send): then the submission costs timing no job, no SUBMIT_DONE and no
    // signal. Known for the timestamps before the driver's call, for the instances after it.
    bool needs_job() const;
    // After the application's submission succeeded: the readback thread's work, run with the
    // CLOCK_MONOTONIC time it saw the submission complete (empty without needs_job()).
    timeline::CompletionJob take_job();
    // Right after take_job(): what pairs the command buffers interpreted on the timeline's
    // worker into that job (InstrumentQueue::take_pairing()); empty without a job.
    timeline::DeferredPairing take_pairing();

    using Read = ClosedReads::Read;
    // The instances of one batch: entries and listed instances up to these ends (the job's).
    struct Batch {
        uint32_t entries = 0;
        uint32_t listed = 0;
        const char* serialization = "none";
        const char* caveat = nullptr;
    };
    using ReadBlock = ClosedReads::Block;
    struct Job;

private:
    void close_read(const char* dropped, bool in_place, const QueryReads* reads);
    // Empties everything of the submission (what a job took is empty already).
    void clear();

    TimingDevice* device_ = nullptr;
    QueueResults* results_;
    uint32_t family_;
    size_t slot_;
    bool active_ = false;
    bool pending() const { return added_ > closed_at_; }

    // reads_ holds the blocks of the command buffers added since the last read closed (at
    // closed_at_ command buffers).
    QueryReads reads_;
    uint32_t added_ = 0;     // command buffers add()ed
    uint32_t closed_at_ = 0; // added_ when the last read closed
    ClosedReads closed_;
    std::vector<Batch> batches_;
    // Every paired command buffer's instances, with timing's marks only, and the workloads its
    // SUBMIT lists: the job makes the entries.
    timeline::PairedInstances paired_;
    std::vector<uint64_t> regions_;
    std::vector<QueryBlock*> held_; // pools read in place (QueryPoolCache::hold)
    uint32_t in_place_entries_ = 0;
    std::vector<uint64_t> submits_;
    bool timed_ = false; // a command buffer added has a timestamp of timing's
    bool lists_ = false; // a command buffer added lists workloads later (SubmitRecord::lists_later)
    // The job take_job() made last in this submission, for take_pairing().
    std::shared_ptr<Job> last_job_;
    // The last job's block list had this many: the next submission's starts as large, rather
    // than growing block by block (the lists a job takes start empty every time).
    size_t blocks_hint_ = 0;
};

} // namespace vkscope::timing
