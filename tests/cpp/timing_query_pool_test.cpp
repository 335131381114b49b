// Query pools: created on demand, 64 slots, handed out in order, back on the free list when a
// recording is reset or freed, bounded however many recordings come and go.

#include "core/query_pool.hpp"
#include "instruments/timing/recording.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <condition_variable>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

namespace vkscope::timing {
namespace {

struct FakeBackend {
    uint64_t next = 0x100;
    std::set<uint64_t> live;
    size_t created = 0;
    bool refuse = false;
    std::vector<uint64_t> host_resets; // pools reset on the host, in order

    // A device that resets queries on the host (hostQueryReset).
    QueryPoolCache::Backend resetting_backend() {
        QueryPoolCache::Backend b = backend();
        b.reset = [this](VkQueryPool p) { host_resets.push_back(reinterpret_cast<uint64_t>(p)); };
        return b;
    }

    QueryPoolCache::Backend backend() {
        QueryPoolCache::Backend b;
        b.create = [this]() -> VkQueryPool {
            if (refuse) {
                return VK_NULL_HANDLE;
            }
            ++created;
            live.insert(next);
            return reinterpret_cast<VkQueryPool>(next++);
        };
        b.destroy = [this](VkQueryPool p) { live.erase(reinterpret_cast<uint64_t>(p)); };
        return b;
    }
};

TEST(TimingQueryPool, SlotsComeInOrderAndANewBlockIsFresh) {
    FakeBackend fake;
    QueryPoolCache cache(fake.backend(), 16);
    QueryArena arena;
    for (uint32_t i = 0; i < QueryBlock::kSlots; ++i) {
        auto s = arena.take(cache);
        ASSERT_TRUE(s);
        EXPECT_EQ(s->first, i);
        EXPECT_EQ(s->fresh, i == 0);
    }
    auto next = arena.take(cache);
    ASSERT_TRUE(next);
    EXPECT_TRUE(next->fresh);
    EXPECT_EQ(next->first, 0u);
    EXPECT_EQ(arena.blocks(), 2u);
    EXPECT_EQ(fake.created, 2u);
}

TEST(TimingQueryPool, ConsecutiveSlotsStayInOneBlock) {
    FakeBackend fake;
    QueryPoolCache cache(fake.backend(), 16);
    QueryArena arena;
    ASSERT_TRUE(arena.take(cache, 60));
    // Four views fit in the last four slots; four more need a block of their own, as a range of
    // slots is never split across blocks.
    auto views = arena.take(cache, 4);
    ASSERT_TRUE(views);
    EXPECT_EQ(views->first, 60u);
    auto more = arena.take(cache, 4);
    ASSERT_TRUE(more);
    EXPECT_TRUE(more->fresh);
    EXPECT_FALSE(arena.take(cache, QueryBlock::kSlots + 1));
    EXPECT_FALSE(arena.take(cache, 0));
}

TEST(TimingQueryPool, ResetAndFreeReturnBlocksForReuse) {
    FakeBackend fake;
    QueryPoolCache cache(fake.backend(), 16);
    std::vector<QueryArena> arenas(3);
    for (QueryArena& a : arenas) {
        for (int i = 0; i < 100; ++i) { // two blocks each
            ASSERT_TRUE(a.take(cache));
        }
    }
    EXPECT_EQ(cache.created(), 6u);
    EXPECT_EQ(cache.free_blocks(), 0u);
    arenas[0].release(cache); // vkResetCommandBuffer
    arenas[1].release(cache); // vkFreeCommandBuffers
    EXPECT_EQ(cache.free_blocks(), 4u);
    EXPECT_EQ(arenas[0].blocks(), 0u);
    // A new recording takes them back instead of creating pools, each fresh (reset on first use).
    QueryArena next;
    auto s = next.take(cache);
    ASSERT_TRUE(s);
    EXPECT_TRUE(s->fresh);
    EXPECT_EQ(s->block->used, 1u);
    EXPECT_EQ(cache.created(), 6u);
}

TEST(TimingQueryPool, ABlockWithAReadToComeWaitsForIt) {
    FakeBackend fake;
    QueryPoolCache cache(fake.backend(), 16);
    QueryArena arena;
    auto first = arena.take(cache);
    ASSERT_TRUE(first);
    QueryBlock* held = first->block;
    cache.hold(held);     // submitted: its slots are read once the GPU is done
    cache.hold(held);     // and submitted again (an application error for a one-run recording)
    arena.release(cache); // re-recorded before the reads
    EXPECT_EQ(cache.free_blocks(), 0u);
    EXPECT_EQ(cache.parked_blocks(), 1u);
    // The next recording gets another pool: the held one still has values to give.
    QueryArena next;
    auto other = next.take(cache);
    ASSERT_TRUE(other);
    EXPECT_NE(other->block, held);
    cache.read_done(held);
    EXPECT_EQ(cache.parked_blocks(), 1u);
    cache.read_done(held);
    EXPECT_EQ(cache.parked_blocks(), 0u);
    EXPECT_EQ(cache.free_blocks(), 1u);
    // Read before its recording lets go: back on the free list at the release, as before.
    cache.hold(other->block);
    cache.read_done(other->block);
    next.release(cache);
    EXPECT_EQ(cache.free_blocks(), 2u);
    EXPECT_EQ(cache.parked_blocks(), 0u);
    QueryArena last;
    auto again = last.take(cache);
    ASSERT_TRUE(again);
    EXPECT_FALSE(again->block->one_run); // a block starts every recording as a copied one
    EXPECT_EQ(cache.created(), 2u);
}

TEST(TimingQueryPool, AOneRunBlockComesBackResetOnTheHost) {
    FakeBackend fake;
    QueryPoolCache cache(fake.resetting_backend(), 16);
    QueryArena once;
    auto first = once.take(cache);
    ASSERT_TRUE(first);
    // A new pool is reset as it is made: its queries start undefined.
    EXPECT_TRUE(first->clean);
    ASSERT_EQ(fake.host_resets.size(), 1u);
    QueryBlock* block = first->block;
    block->one_run = true;
    EXPECT_FALSE(block->clean);             // written from now on
    cache.hold(block);                      // submitted, its read to come
    once.release(cache);                    // the application records it again before the read
    EXPECT_EQ(fake.host_resets.size(), 1u); // still in use until the read
    cache.read_done(block);
    ASSERT_EQ(fake.host_resets.size(), 2u);
    EXPECT_EQ(fake.host_resets.back(), reinterpret_cast<uint64_t>(block->pool));
    QueryArena next;
    auto again = next.take(cache);
    ASSERT_TRUE(again);
    EXPECT_EQ(again->block, block);
    EXPECT_TRUE(again->clean);
    EXPECT_FALSE(again->block->clean);
    // A recording that may run again resets its blocks in its command buffer: its block is not
    // reset on the host when it goes back, and comes out of the cache as it went in.
    next.release(cache);
    EXPECT_EQ(fake.host_resets.size(), 2u);
    QueryArena last;
    auto used = last.take(cache);
    ASSERT_TRUE(used);
    EXPECT_FALSE(used->clean);
}

// A block a one-time recording read in place took (such a recording marks its blocks one_run).
QueryBlock* one_run_block(QueryArena& arena, QueryPoolCache& cache) {
    const auto slots = arena.take(cache);
    if (!slots) {
        ADD_FAILURE() << "no block";
        return nullptr;
    }
    slots->block->one_run = true;
    return slots->block;
}

// The next recording to take a block gets `block`, reset on the host.
void expect_taken_clean(QueryPoolCache& cache, const QueryBlock* block) {
    QueryArena next;
    const auto again = next.take(cache);
    ASSERT_TRUE(again);
    EXPECT_EQ(again->block, block);
    EXPECT_TRUE(again->clean);
}

// Read in place before its recording lets go of it (the application waits for its frame and
// the read comes first): the block is reset by the thread that read it, and its recording's
// release (the application's next vkBeginCommandBuffer) resets nothing.
TEST(TimingQueryPool, AOneRunBlockIsResetAfterItsLastReadNotWhereItIsGivenBack) {
    FakeBackend fake;
    QueryPoolCache cache(fake.resetting_backend(), 16);
    QueryArena once;
    QueryBlock* block = one_run_block(once, cache);
    ASSERT_NE(block, nullptr);
    cache.hold(block);
    cache.hold(block); // submitted twice (an application error): reset after the last read only
    cache.read_done(block);
    EXPECT_EQ(fake.host_resets.size(), 1u) << "only the new pool's reset so far";
    cache.read_done(block);
    ASSERT_EQ(fake.host_resets.size(), 2u);
    EXPECT_EQ(cache.free_blocks(), 0u) << "still its recording's";
    // Submitted again after that read: its run writes the queries the reset cleared, so they
    // are reset again after its read.
    cache.hold(block);
    cache.read_done(block);
    ASSERT_EQ(fake.host_resets.size(), 3u);
    once.release(cache);
    EXPECT_EQ(fake.host_resets.size(), 3u);
    EXPECT_EQ(cache.free_blocks(), 1u);
    expect_taken_clean(cache, block);
}

// A recording that lets go of its block while the thread of the block's last read resets it
// (outside the cache's mutex) parks it: no other recording gets it before the reset is done.
TEST(TimingQueryPool, ABlockLetGoOfDuringItsResetWaitsForIt) {
    FakeBackend fake;
    std::mutex m;
    std::condition_variable cv;
    VkQueryPool held = VK_NULL_HANDLE; // the pool whose reset waits to be let finish
    bool resetting = false;
    bool may_finish = false;
    QueryPoolCache::Backend backend = fake.backend();
    backend.reset = [&](VkQueryPool pool) {
        std::unique_lock lock(m);
        if (pool != held) {
            return; // a new pool's own reset, at its creation
        }
        resetting = true;
        cv.notify_all();
        cv.wait(lock, [&] { return may_finish; });
    };
    QueryPoolCache cache(backend, 16);
    QueryArena once;
    QueryBlock* block = one_run_block(once, cache);
    ASSERT_NE(block, nullptr);
    {
        std::lock_guard lock(m);
        held = block->pool;
    }
    cache.hold(block);
    std::thread reader([&] { cache.read_done(block); });
    {
        std::unique_lock lock(m);
        cv.wait(lock, [&] { return resetting; });
    }
    once.release(cache);
    EXPECT_EQ(cache.parked_blocks(), 1u);
    EXPECT_EQ(cache.free_blocks(), 0u);
    QueryArena other;
    auto taken = other.take(cache); // a new pool, not the one being reset
    ASSERT_TRUE(taken);
    EXPECT_NE(taken->block, block);
    {
        std::lock_guard lock(m);
        may_finish = true;
    }
    cv.notify_all();
    reader.join();
    EXPECT_EQ(cache.parked_blocks(), 0u);
    EXPECT_EQ(cache.free_blocks(), 1u);
    expect_taken_clean(cache, block);
}

TEST(TimingQueryPool, NoHostResetWhereTheDeviceCannot) {
    FakeBackend fake;
    QueryPoolCache cache(fake.backend(), 16);
    // Made, then given back by a one-time recording: reset on the host neither time.
    for (int round = 0; round < 2; ++round) {
        QueryArena arena;
        const auto slots = arena.take(cache);
        ASSERT_TRUE(slots);
        EXPECT_FALSE(slots->clean) << "round " << round;
        slots->block->one_run = true;
        arena.release(cache);
    }
    EXPECT_EQ(cache.created(), 1u);
}

TEST(TimingQueryPool, AThousandFramesUseTheSamePools) {
    FakeBackend fake;
    QueryPoolCache cache(fake.backend(), 4096);
    // Three command buffers re-recorded every frame, 150 workloads each (N+1 = 151 slots).
    std::vector<QueryArena> arenas(3);
    for (int frame = 0; frame < 1000; ++frame) {
        for (QueryArena& a : arenas) {
            a.release(cache); // vkBeginCommandBuffer resets
            for (int w = 0; w < 151; ++w) {
                ASSERT_TRUE(a.take(cache));
            }
        }
    }
    EXPECT_EQ(cache.created(), 9u); // 3 x ceil(151 / 64)
    EXPECT_EQ(fake.live.size(), 9u);
}

TEST(TimingQueryPool, BoundedAndGoneWithTheDevice) {
    FakeBackend fake;
    {
        QueryPoolCache cache(fake.backend(), 2);
        QueryArena arena;
        ASSERT_TRUE(arena.take(cache, 64));
        ASSERT_TRUE(arena.take(cache, 64));
        EXPECT_FALSE(arena.take(cache)); // at the limit: untimed, never growth
        EXPECT_EQ(fake.live.size(), 2u);
    }
    EXPECT_TRUE(fake.live.empty());
}

TEST(TimingQueryPool, ARefusedPoolIsNotAskedForAgain) {
    FakeBackend fake;
    fake.refuse = true;
    QueryPoolCache cache(fake.backend(), 16);
    QueryArena arena;
    EXPECT_FALSE(arena.take(cache));
    fake.refuse = false;
    EXPECT_FALSE(arena.take(cache));
}

// What a recording writes, as text.
class FakeWriter : public TimestampWriter {
public:
    void reset(VkQueryPool, uint32_t first, uint32_t count) override {
        events.push_back("reset " + std::to_string(first) + "+" + std::to_string(count));
    }
    void write(VkQueryPool, uint32_t slot, bool top) override {
        events.push_back(std::string(top ? "top " : "bottom ") + std::to_string(slot));
    }
    void barrier() override { events.push_back("barrier"); }
    std::vector<std::string> events;
};

using Events = std::vector<std::string>;

TEST(TimingRecording, ConsecutiveWorkloadsShareATimestamp) {
    FakeBackend fake;
    QueryPoolCache cache(fake.backend(), 16);
    RecordingTiming r;
    r.begin(&cache, Mode::queue, nullptr);
    FakeWriter w;
    const Timestamp a0 = r.start(w);
    const Timestamp a1 = r.finish(w);
    const Timestamp b0 = r.start(w);
    const Timestamp b1 = r.finish(w);
    EXPECT_EQ(a1, b0);
    // N+1: three slots for two workloads, after the block's first, which takes the write right
    // after its reset.
    EXPECT_EQ(a0.slot, 1u);
    EXPECT_EQ(b1.slot, 3u);
    EXPECT_EQ(w.events, (Events{"reset 0+64", "bottom 0", "bottom 1", "barrier", "bottom 2",
                                "barrier", "bottom 3", "barrier"}));
}

// What the writer saw, with each workload's start and end marked where the recording gave them.
class MarkingWriter : public FakeWriter {
public:
    void mark(const char* what) { events.push_back(what); }
};

TEST(TimingRecording, NoResetRunsInsideAWorkloadsTime) {
    for (const Mode mode : {Mode::none, Mode::queue}) {
        FakeBackend fake;
        QueryPoolCache cache(fake.backend(), 16);
        RecordingTiming r;
        r.begin(&cache, mode, nullptr);
        MarkingWriter w;
        // Three blocks' worth of consecutive workloads, and one interrupted at a block's end.
        for (uint32_t i = 0; i < 3 * QueryBlock::kSlots; ++i) {
            if (i == QueryBlock::kSlots * 2 + QueryBlock::kSlots / 2) {
                r.interrupt();
            }
            ASSERT_TRUE(r.start(w));
            w.mark("workload");
            ASSERT_TRUE(r.finish(w));
            w.mark("done");
        }
        // Between a workload's start timestamp (the last one written before it) and its end
        // (the first one after it) the GPU counts everything as the workload's: no reset there.
        bool open = false;
        size_t resets = 0;
        for (const std::string& e : w.events) {
            if (e == "workload") {
                open = true;
            } else if (e.starts_with("bottom") || e.starts_with("top")) {
                open = false;
            } else if (e.starts_with("reset")) {
                ++resets;
                EXPECT_FALSE(open) << "a reset inside a workload, mode " << mode_name(mode);
            }
        }
        EXPECT_GE(resets, 3u);
        // The shared ends still save a timestamp per workload: a block holds 63 workloads.
        EXPECT_LE(fake.created, 4u);
    }
}

TEST(TimingRecording, ASharedStartIsNeverABlocksLastSlot) {
    FakeBackend fake;
    QueryPoolCache cache(fake.backend(), 16);
    RecordingTiming r;
    r.begin(&cache, Mode::queue, nullptr);
    FakeWriter w;
    Timestamp last_end;
    for (uint32_t i = 0; i < QueryBlock::kSlots; ++i) {
        const Timestamp start = r.start(w);
        if (i > 0 && last_end.slot + 1 < QueryBlock::kSlots) {
            EXPECT_EQ(start, last_end) << i;
        }
        last_end = r.finish(w);
        EXPECT_EQ(start.block, last_end.block) << i;
        EXPECT_EQ(last_end.slot, start.slot + 1) << i;
    }
    // The 62nd workload ended in the block's last slot; the 63rd started in a block of its own
    // (whose first slot took the write after its reset), and the 64th followed it.
    EXPECT_NE(last_end.block, nullptr);
    EXPECT_EQ(last_end.slot, 3u);
}

TEST(TimingRecording, ANewBlocksStartIsWrittenRightAfterTheEndThatFilledTheLast) {
    FakeBackend fake;
    QueryPoolCache cache(fake.backend(), 16);
    RecordingTiming r;
    r.begin(&cache, Mode::queue, nullptr);
    MarkingWriter w;
    for (uint32_t i = 0; i < QueryBlock::kSlots; ++i) {
        ASSERT_TRUE(r.start(w));
        w.mark("workload");
        ASSERT_TRUE(r.finish(w));
        w.mark("application");
    }
    // The 64th workload's start follows the 63rd's end, before what the application recorded
    // between them, as a start shared with the end would: the new block's reset falls in no
    // workload's time, and the application's commands in the 64th's, like every other's.
    const auto end = std::find(w.events.begin(), w.events.end(), "bottom 63");
    ASSERT_NE(end, w.events.end());
    EXPECT_EQ((Events(end, end + 8)), (Events{"bottom 63", "barrier", "reset 0+64", "bottom 0",
                                              "bottom 1", "barrier", "application", "workload"}));
}

TEST(TimingRecording, EverySlotABlockGaveIsWritten) {
    FakeBackend fake;
    QueryPoolCache cache(fake.backend(), 16);
    RecordingTiming r;
    r.begin(&cache, Mode::queue, nullptr);
    FakeWriter w;
    // 61 workloads in a row end in slot 62 (slot 0 took the write after the reset); the next,
    // after something in between, would start in the block's last slot and end in a new block,
    // across its reset.
    for (uint32_t i = 0; i < QueryBlock::kSlots - 3; ++i) {
        r.start(w);
        r.finish(w);
    }
    r.interrupt();
    const Timestamp start = r.start(w);
    const Timestamp end = r.finish(w);
    EXPECT_EQ(start.slot, 1u);
    EXPECT_EQ(end.slot, 2u);
    EXPECT_EQ(start.block, end.block);
    // The last slot of the first block was written all the same (its copy waits for every slot
    // taken), before the new block's reset.
    const auto reset = std::find(w.events.begin() + 1, w.events.end(), "reset 0+64");
    ASSERT_NE(reset, w.events.end());
    EXPECT_EQ(*(reset - 1), "bottom 63");
}

TEST(TimingRecording, SomethingInBetweenGetsAFreshStart) {
    FakeBackend fake;
    QueryPoolCache cache(fake.backend(), 16);
    RecordingTiming r;
    r.begin(&cache, Mode::none, nullptr);
    FakeWriter w;
    r.start(w);
    const Timestamp end = r.finish(w);
    r.interrupt(); // a parameter copy, an executed secondary, an event wait
    const Timestamp start = r.start(w);
    EXPECT_NE(end, start);
    r.finish(w);
    // No barriers without serialization; a fresh start is top of pipe, an end bottom (and the
    // write right after the reset, never read).
    EXPECT_EQ(w.events,
              (Events{"reset 0+64", "bottom 0", "top 1", "bottom 2", "top 3", "bottom 4"}));
}

TEST(TimingRecording, AStartAheadIsTheNextWorkloadsStart) {
    FakeBackend fake;
    QueryPoolCache cache(fake.backend(), 16);
    RecordingTiming r;
    r.begin(&cache, Mode::queue, nullptr);
    MarkingWriter w;
    // A workload left out (interrupt), its end, the start ahead; then what the application
    // records, and the next workload, which shares that start.
    r.interrupt();
    w.mark("left out");
    r.start_ahead(w);
    w.mark("application");
    const Timestamp start = r.start(w);
    w.mark("workload");
    const Timestamp end = r.finish(w);
    EXPECT_EQ(start.slot, 1u);
    EXPECT_EQ(end.slot, 2u);
    EXPECT_EQ(w.events, (Events{"left out", "reset 0+64", "bottom 0", "bottom 1", "barrier",
                                "application", "workload", "bottom 2", "barrier"}));
    // Unused when something comes in between: the next start is its own.
    r.start_ahead(w);
    r.interrupt();
    const Timestamp fresh = r.start(w);
    EXPECT_EQ(fresh.slot, 4u);
}

TEST(TimingRecording, UntimedRecordingsWriteNothing) {
    FakeBackend fake;
    QueryPoolCache cache(fake.backend(), 16);
    RecordingTiming r;
    r.begin(&cache, Mode::full, reason::kOutsideFrame);
    FakeWriter w;
    EXPECT_FALSE(r.start(w));
    EXPECT_FALSE(r.finish(w));
    EXPECT_TRUE(w.events.empty());
    EXPECT_STREQ(r.untimed(), reason::kOutsideFrame);
    EXPECT_EQ(fake.created, 0u);
}

TEST(TimingRecording, AOneRunRecordingMarksItsBlocks) {
    FakeBackend fake;
    QueryPoolCache cache(fake.backend(), 16);
    RecordingTiming once;
    FakeWriter w;
    once.begin(&cache, Mode::none, nullptr, true);
    const Timestamp a = once.start(w);
    ASSERT_TRUE(a);
    EXPECT_TRUE(a.block->one_run);
    once.release();
    RecordingTiming again;
    again.begin(&cache, Mode::none, nullptr);
    const Timestamp b = again.start(w);
    ASSERT_TRUE(b);
    EXPECT_EQ(b.block, a.block); // the same pool, now for a recording that may run again
    EXPECT_FALSE(b.block->one_run);
}

TEST(TimingRecording, AOneRunRecordingSkipsTheResetOfABlockResetOnTheHost) {
    FakeBackend fake;
    QueryPoolCache cache(fake.resetting_backend(), 16);
    // Frame after frame, one recording that runs once: its block comes reset on the host (when
    // made, and each time the recording gives it back), so no frame resets it in the command
    // buffer.
    RecordingTiming once;
    for (int frame = 0; frame < 3; ++frame) {
        FakeWriter w;
        once.begin(&cache, Mode::queue, nullptr, true);
        ASSERT_TRUE(once.start(w));
        ASSERT_TRUE(once.finish(w));
        // The block's first slot still takes the first write after the reset.
        EXPECT_EQ(w.events, (Events{"bottom 0", "bottom 1", "barrier", "bottom 2", "barrier"}))
            << "frame " << frame;
        once.release();
    }
    EXPECT_EQ(cache.created(), 1u);
    EXPECT_EQ(fake.host_resets.size(), 4u); // made, then given back after each of three frames
    // A recording that may run again resets in its command buffer, clean block or not.
    RecordingTiming again;
    FakeWriter w;
    again.begin(&cache, Mode::queue, nullptr);
    ASSERT_TRUE(again.start(w));
    EXPECT_EQ(w.events.front(), "reset 0+64");
}

TEST(TimingRecording, ANewRecordingGivesItsBlocksBack) {
    FakeBackend fake;
    QueryPoolCache cache(fake.backend(), 16);
    RecordingTiming r;
    FakeWriter w;
    for (int i = 0; i < 10; ++i) {
        r.begin(&cache, Mode::queue, nullptr);
        for (int k = 0; k < 100; ++k) {
            r.start(w);
            r.finish(w);
        }
    }
    EXPECT_EQ(cache.created(), 2u);
    r.release();
    EXPECT_EQ(cache.free_blocks(), 2u);
}

} // namespace
} // namespace vkscope::timing
