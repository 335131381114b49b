#pragma once
// What an instrument that pairs after the driver's call (InstrumentQueue::pairs_before_submit()
// false) keeps of one submission for its completion job: every paired instance with the
// instrument's own marks, the (submit, tag) of every workload the SUBMITs list, and where its
// reads and batches closed. It closes those before the driver's call, when only the command
// buffers' streams are known, so it counts them in command buffers; the job walks the command
// buffers again in call order, appending each one's entries, and settles each read and batch at
// the entries and listed workloads of the command buffers it closed after.

#include "core/query_reads.hpp"
#include "timeline/instrument.hpp"
#include "timeline/interpreter.hpp"

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <utility>
#include <vector>

namespace vkscope::timeline {

// A paired instance with one instrument's marks only.
struct InstanceMarks {
    uint64_t submit = 0; // the instance is submit.tag
    uint64_t tag = 0;
    Mark begin;
    Mark end;
    MarkedInstance::Ending ending = MarkedInstance::Ending::workload;
};

inline InstanceMarks marks_of(const MarkedInstance& instance, size_t slot) {
    return InstanceMarks{instance.submit, instance.tag, instance.begin[slot], instance.end[slot],
                         instance.ending};
}

class PairedInstances {
public:
    using Listed = std::pair<uint64_t, uint64_t>;

    // One command buffer's workloads and paired instances, in call order (InstrumentQueue::
    // paired()); those the timeline annexes itself (left out by the budget) are not listed.
    void paired(const SubmitRecord& record, size_t slot) {
        const uint64_t submit = record.submit;
        listed_.reserve(listed_.size() + record.workloads.size() - record.left_out);
        for (const SubmittedWorkload& w : record.workloads) {
            if (!w.left_out) {
                listed_.emplace_back(submit, w.tag);
            }
        }
        instances_.reserve(instances_.size() + record.instances.size());
        for (const MarkedInstance& m : record.instances) {
            instances_.push_back(marks_of(m, slot));
        }
        ends_.push_back(CommandBufferEnd{static_cast<uint32_t>(instances_.size()),
                                         static_cast<uint32_t>(listed_.size())});
    }
    // A read, or a batch, closed after the first `command_buffers` of the call.
    void read_closed(uint32_t command_buffers) { read_ends_.push_back(command_buffers); }
    void batch_closed(uint32_t command_buffers) { batch_ends_.push_back(command_buffers); }

    bool empty() const { return instances_.empty() && listed_.empty(); }
    size_t size() const { return instances_.size(); }
    const std::vector<Listed>& listed() const { return listed_; }

    // The job's walk: `entries.append(instance)` for every instance, command buffer by command
    // buffer; after each, every read closed there ends at `entries.size()` (then
    // `entries.read_closed()`: the next read's entries begin) and every batch closed there at that
    // and at the workloads listed so far.
    template <typename Batch, typename Entries>
    void walk(std::vector<ClosedReads::Read>& reads, std::vector<Batch>& batches,
              Entries& entries) const {
        size_t settled_reads = 0;
        size_t settled_batches = 0;
        uint32_t listed = 0;
        const auto settle = [&](uint32_t command_buffers) {
            for (;
                 settled_reads < read_ends_.size() && read_ends_[settled_reads] <= command_buffers;
                 ++settled_reads) {
                reads[settled_reads].end = entries.size();
                entries.read_closed();
            }
            for (; settled_batches < batch_ends_.size() &&
                   batch_ends_[settled_batches] <= command_buffers;
                 ++settled_batches) {
                batches[settled_batches].entries = entries.size();
                batches[settled_batches].listed = listed;
            }
        };
        settle(0);
        size_t i = 0;
        for (size_t cb = 0; cb < ends_.size(); ++cb) {
            for (; i < ends_[cb].instances; ++i) {
                entries.append(instances_[i]);
            }
            listed = ends_[cb].listed;
            settle(static_cast<uint32_t>(cb + 1));
        }
    }

    // An instance listed in a SUBMIT must say something, even when no end of it was seen in its
    // batch: `unsaid(submit, tag)` once for each workload listed in the batch that ended at
    // `from` (the batch before's `listed`, as walk() set it) and ends at `to`, unless `seen`
    // holds it (the instances the batch's entries spoke for; sorted here).
    template <typename Unsaid>
    void for_each_unsaid(uint32_t from, uint32_t to, std::vector<Listed>& seen, Unsaid unsaid) {
        std::sort(seen.begin(), seen.end());
        const auto first = listed_.begin() + from;
        const auto last = listed_.begin() + to;
        std::sort(first, last);
        for (auto it = first; it != last; ++it) {
            if ((it == first || *it != *(it - 1)) &&
                !std::binary_search(seen.begin(), seen.end(), *it)) {
                unsaid(it->first, it->second);
            }
        }
    }

    void clear() {
        instances_.clear();
        listed_.clear();
        ends_.clear();
        read_ends_.clear();
        batch_ends_.clear();
    }

private:
    // Where one paired command buffer's instances and listed workloads end in the submission's.
    struct CommandBufferEnd {
        uint32_t instances = 0;
        uint32_t listed = 0;
    };

    std::vector<InstanceMarks> instances_;
    std::vector<Listed> listed_;
    std::vector<CommandBufferEnd> ends_;
    std::vector<uint32_t> read_ends_;
    std::vector<uint32_t> batch_ends_;
};

// InstrumentQueue::take_pairing() of an instrument whose jobs keep a PairedInstances `paired`:
// what pairs the command buffers handed to the interpretation worker into the job last taken
// (`last`, left empty), with the instrument's marks (`slot`); empty without a job.
template <typename Job> DeferredPairing pairing_into(std::shared_ptr<Job>& last, size_t slot) {
    std::shared_ptr<Job> job = std::move(last);
    if (!job) {
        return {};
    }
    return [job = std::move(job), slot](const SubmitRecord& record) {
        job->paired.paired(record, slot);
    };
}

} // namespace vkscope::timeline
