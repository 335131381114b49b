// What an instrument that pairs after the driver's call keeps of a submission: its reads and
// batches close in command buffers before their instances are known, and the job's walk settles
// them in entries and listed workloads, whichever order the submission saw pairing and closing in.

#include "timeline/paired_instances.hpp"

#include <gtest/gtest.h>

#include <vector>

namespace vkscope::timeline {
namespace {

struct Batch {
    uint32_t entries = 0;
    uint32_t listed = 0;
};

// Appends every instance; an instance whose tag is odd makes no entry (as a repeat would not).
struct Entries {
    std::vector<uint64_t> tags;
    std::vector<uint32_t> reads_began_at{0};
    void append(const InstanceMarks& instance) {
        if (instance.tag % 2 == 0) {
            tags.push_back(instance.tag);
        }
    }
    void read_closed() { reads_began_at.push_back(size()); }
    uint32_t size() const { return static_cast<uint32_t>(tags.size()); }
};

// A command buffer with `workloads` workloads (tags from `first`), `left_out` of them the
// timeline's to annex, and an instance paired for every other one.
SubmitRecord command_buffer(uint64_t submit, uint64_t first, uint32_t workloads, uint32_t left_out,
                            size_t slot, int object) {
    SubmitRecord r;
    r.submit = submit;
    for (uint32_t i = 0; i < workloads; ++i) {
        const bool out = i < left_out;
        r.workloads.push_back(SubmittedWorkload{first + i, 0, out});
        r.left_out += out ? 1 : 0;
        if (!out) {
            MarkedInstance m;
            m.submit = submit;
            m.tag = first + i;
            m.begin[slot] = Mark::at(&object, static_cast<uint32_t>(i));
            m.end[slot] = m.begin[slot];
            r.instances.push_back(m);
        }
    }
    return r;
}

TEST(PairedInstances, ReadsAndBatchesEndWhereTheirCommandBuffersDid) {
    constexpr size_t kSlot = 2;
    int object = 0;
    PairedInstances paired;
    // Call: batch 0 = cb 1 (4 workloads, 1 left out), cb 2 (2); batch 1 = cb 3 (3).
    // Reads close after cb 1 and after cb 3 (cb 2 shares cb 3's read, as when a render pass
    // instance stays suspended across the boundary); batches after cb 2 and cb 3.
    paired.read_closed(0); // a read closed before any command buffer: it holds nothing
    paired.paired(command_buffer(1, 10, 4, 1, kSlot, object), kSlot);
    paired.read_closed(1);
    paired.paired(command_buffer(2, 20, 2, 0, kSlot, object), kSlot);
    paired.batch_closed(2);
    paired.paired(command_buffer(3, 30, 3, 0, kSlot, object), kSlot);
    paired.read_closed(3);
    paired.batch_closed(3);

    EXPECT_EQ(paired.size(), 8u);
    ASSERT_EQ(paired.listed().size(), 8u) << "the left-out workload is the timeline's to annex";
    EXPECT_EQ(paired.listed().front(), (PairedInstances::Listed{1, 11}));

    std::vector<ClosedReads::Read> reads(3);
    std::vector<Batch> batches(2);
    Entries entries;
    paired.walk(reads, batches, entries);
    // Entries (even tags): cb 1: 12; cb 2: 20; cb 3: 30, 32.
    EXPECT_EQ(entries.tags, (std::vector<uint64_t>{12, 20, 30, 32}));
    EXPECT_EQ(reads[0].end, 0u);
    EXPECT_EQ(reads[1].end, 1u);
    EXPECT_EQ(reads[2].end, 4u);
    EXPECT_EQ(entries.reads_began_at, (std::vector<uint32_t>{0, 0, 1, 4}));
    EXPECT_EQ(batches[0].entries, 2u);
    EXPECT_EQ(batches[0].listed, 5u);
    EXPECT_EQ(batches[1].entries, 4u);
    EXPECT_EQ(batches[1].listed, 8u);
}

TEST(PairedInstances, ClosingBeforePairingEndsTheSame) {
    // After the driver's call: every read and batch closed first, the command buffers paired
    // afterwards.
    constexpr size_t kSlot = 0;
    int object = 0;
    PairedInstances paired;
    paired.read_closed(1);
    paired.read_closed(2);
    paired.batch_closed(2);
    EXPECT_TRUE(paired.empty());
    paired.paired(command_buffer(1, 0, 2, 0, kSlot, object), kSlot);
    paired.paired(command_buffer(2, 4, 2, 2, kSlot, object), kSlot);
    EXPECT_FALSE(paired.empty());

    std::vector<ClosedReads::Read> reads(2);
    std::vector<Batch> batches(1);
    Entries entries;
    paired.walk(reads, batches, entries);
    EXPECT_EQ(entries.tags, (std::vector<uint64_t>{0}));
    EXPECT_EQ(reads[0].end, 1u);
    EXPECT_EQ(reads[1].end, 1u) << "a command buffer left out whole adds no entry";
    EXPECT_EQ(batches[0].listed, 2u);

    paired.clear();
    EXPECT_TRUE(paired.empty());
    EXPECT_TRUE(paired.listed().empty());
}

TEST(PairedInstances, EveryListedWorkloadNoEntrySpokeForIsSaidOnce) {
    constexpr size_t kSlot = 1;
    int object = 0;
    PairedInstances paired;
    // One batch of two command buffers, one workload listed twice (a secondary executed twice),
    // then a batch of one.
    SubmitRecord first = command_buffer(1, 0, 3, 0, kSlot, object);
    first.workloads.push_back(first.workloads.front());
    paired.paired(first, kSlot);
    paired.paired(command_buffer(2, 0, 2, 0, kSlot, object), kSlot);
    paired.batch_closed(2);
    paired.paired(command_buffer(3, 0, 2, 0, kSlot, object), kSlot);
    paired.batch_closed(3);
    std::vector<ClosedReads::Read> reads;
    std::vector<Batch> batches(2);
    Entries entries;
    paired.walk(reads, batches, entries);
    ASSERT_EQ(batches[0].listed, 6u);

    // The first batch's entries spoke for 1.2 and 2.0 (in no order), and for 3.0, which it does
    // not list.
    std::vector<PairedInstances::Listed> seen{{2, 0}, {3, 0}, {1, 2}};
    std::vector<PairedInstances::Listed> unsaid;
    const auto note = [&](uint64_t submit, uint64_t tag) { unsaid.emplace_back(submit, tag); };
    paired.for_each_unsaid(0, batches[0].listed, seen, note);
    EXPECT_EQ(unsaid, (std::vector<PairedInstances::Listed>{{1, 0}, {1, 1}, {2, 1}}))
        << "1.0, listed twice, is said once";
    unsaid.clear();
    seen.clear();
    paired.for_each_unsaid(batches[0].listed, batches[1].listed, seen, note);
    EXPECT_EQ(unsaid, (std::vector<PairedInstances::Listed>{{3, 0}, {3, 1}}));
}

} // namespace
} // namespace vkscope::timeline
