// Cross-queue serialization: chained batches wait for the previous ID and take the next, and a
// batch waiting for something nobody has promised yet is left out so nothing can deadlock.

#include "instruments/timing/chain.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <vector>

namespace vkscope::timing {
namespace {

using Uses = std::vector<SemaphoreUse>;

struct Chain {
    SubmissionChain chain;
    std::map<uint64_t, uint64_t> counters; // what the device has reached

    std::map<uint64_t, uint64_t> queues; // how far each queue's layer semaphore got
    uint64_t completions = 0;

    SubmissionChain::Decision batch(Uses waits, Uses signals, bool serialize = true,
                                    uint64_t queue = 0) {
        auto lock = chain.lock();
        SubmissionChain::Batch b;
        b.queue = queue;
        b.completion = ++completions;
        b.waits = waits;
        b.signals = signals;
        b.serialize = serialize;
        SubmissionChain::Probe probe;
        probe.counter = [this](uint64_t s) { return counters[s]; };
        probe.queue_reached = [this](uint64_t q) { return queues[q]; };
        return chain.batch(b, probe);
    }
};

constexpr uint64_t kTimeline = 1;
constexpr uint64_t kBinary = 2;
constexpr uint64_t kUnknown = 3;

TEST(TimingChain, BatchesWithoutWaitsFormOneChain) {
    Chain c;
    auto a = c.batch({}, {});
    auto b = c.batch({}, {});
    EXPECT_TRUE(a.chained && b.chained);
    EXPECT_EQ(a.wait, 0u);
    EXPECT_EQ(a.signal, 1u);
    EXPECT_EQ(b.wait, 1u);
    EXPECT_EQ(b.signal, 2u);
}

TEST(TimingChain, WaitBeforeSignalIsLeftOutOfTheChain) {
    Chain c;
    c.chain.created(kTimeline, SemaphoreKind::timeline, 0);
    // The consumer (queue 1) is submitted first and waits for value 1 ...
    auto consumer = c.batch({{kTimeline, 1}}, {}, true, 1);
    EXPECT_FALSE(consumer.chained);
    EXPECT_TRUE(consumer.unserialized);
    EXPECT_TRUE(consumer.blocks_queue);
    EXPECT_EQ(consumer.signal, 0u); // nobody will wait for it
    // ... which the producer (queue 0), submitted later, signals: it must not wait for the
    // consumer.
    auto producer = c.batch({}, {{kTimeline, 1}}, true, 0);
    EXPECT_TRUE(producer.chained);
    EXPECT_EQ(producer.wait, consumer.wait);
    // Once signalled by a chained batch the value is covered: the next consumer on the
    // producer's queue is chained ...
    auto next = c.batch({{kTimeline, 1}}, {}, true, 0);
    EXPECT_TRUE(next.chained);
    EXPECT_EQ(next.wait, producer.signal);
    // ... but on the consumer's queue everything waits behind the consumer, until the device
    // is seen past it.
    EXPECT_FALSE(c.batch({}, {}, true, 1).chained);
    c.queues[1] = c.completions;
    EXPECT_TRUE(c.batch({}, {}, true, 1).chained);
}

TEST(TimingChain, ValuesTheDeviceOrHostReachedAreCovered) {
    Chain c;
    c.chain.created(kTimeline, SemaphoreKind::timeline, 5);
    EXPECT_TRUE(c.batch({{kTimeline, 5}}, {}).chained); // initial value
    EXPECT_FALSE(c.batch({{kTimeline, 7}}, {}).chained);
    c.counters[kTimeline] = 7; // reached since, and the queue ran past that batch
    c.queues[0] = c.completions;
    EXPECT_TRUE(c.batch({{kTimeline, 7}}, {}).chained);
    c.chain.host_signalled(kTimeline, 9); // vkSignalSemaphore
    EXPECT_TRUE(c.batch({{kTimeline, 9}}, {}).chained);
}

TEST(TimingChain, SignalsOfAnUnchainedBatchCoverNothing) {
    Chain c;
    c.chain.created(kTimeline, SemaphoreKind::timeline, 0);
    c.chain.created(kBinary, SemaphoreKind::binary, 0);
    // Waits for a future value, and signals value 5 and a binary semaphore.
    auto waiting = c.batch({{kTimeline, 1}}, {{kTimeline, 5}, {kBinary, 0}}, true, 1);
    EXPECT_FALSE(waiting.chained);
    // Both depend on the future: batches waiting on them stay out too.
    EXPECT_FALSE(c.batch({{kTimeline, 5}}, {}, true, 2).chained);
    EXPECT_FALSE(c.batch({{kBinary, 0}}, {}, true, 3).chained);
    // The binary signal was consumed; a fresh signal from a chained batch is fine again.
    EXPECT_TRUE(c.batch({}, {{kBinary, 0}}).chained);
    EXPECT_TRUE(c.batch({{kBinary, 0}}, {}).chained);
}

TEST(TimingChain, UnknownSemaphoresAreNeverCovered) {
    Chain c;
    EXPECT_FALSE(c.batch({{kUnknown, 0}}, {}).chained);
    c.chain.created(kUnknown, SemaphoreKind::binary, 0);
    c.chain.destroyed(kUnknown);
    EXPECT_FALSE(c.batch({{kUnknown, 0}}, {}, true, 1).chained);
}

TEST(TimingChain, BookkeepingWithoutSerializingTakesNoIds) {
    Chain c;
    c.chain.created(kTimeline, SemaphoreKind::timeline, 0);
    // Outside captured frames: no wait, no signal, but what it signals still counts.
    auto d = c.batch({}, {{kTimeline, 3}}, false);
    EXPECT_FALSE(d.chained);
    EXPECT_EQ(d.wait, 0u);
    EXPECT_EQ(d.signal, 0u);
    EXPECT_EQ(c.chain.last_id(), 0u);
    EXPECT_TRUE(c.batch({{kTimeline, 3}}, {}).chained);
}

// Two queues that run their batches in order, as devices do, and every interleaving of a
// wait-before-signal pattern with more work on both queues: the device can always run everything
// (no cycle between the application's waits, the chain and the queues' own order).
TEST(TimingChain, NoDeadlockWhateverTheSubmissionOrder) {
    struct Batch {
        uint64_t queue;
        Uses waits, signals;
        SubmissionChain::Decision d{};
        bool done = false;
    };
    const std::vector<Batch> pattern = {
        {1, {{kTimeline, 1}}, {}},  // consumer, waits before ...
        {1, {}, {}},                // ... more work behind it on its queue
        {1, {}, {{kTimeline, 2}}},  // and a signal behind that
        {0, {}, {}},                // work on the producer's queue
        {0, {}, {{kTimeline, 1}}},  // the producer
        {0, {{kTimeline, 2}}, {}}}; // a consumer of the signal behind the first consumer
    std::vector<size_t> order(pattern.size());
    for (size_t i = 0; i < order.size(); ++i) {
        order[i] = i;
    }
    int interleavings = 0;
    do {
        // Each queue keeps its own batches in order; only the interleaving varies.
        bool kept = true;
        for (size_t i = 0; i < order.size(); ++i) {
            for (size_t j = i + 1; j < order.size(); ++j) {
                kept = kept &&
                       !(pattern[order[i]].queue == pattern[order[j]].queue && order[i] > order[j]);
            }
        }
        if (!kept) {
            continue;
        }
        ++interleavings;
        Chain c;
        c.chain.created(kTimeline, SemaphoreKind::timeline, 0);
        std::vector<Batch> submitted;
        for (size_t i : order) {
            Batch b = pattern[i];
            b.d = c.batch(b.waits, b.signals, true, b.queue);
            submitted.push_back(b);
        }
        // Run the head of each queue whenever it can run, until nothing can.
        uint64_t layer = 0;
        uint64_t app = 0;
        for (bool progress = true; progress;) {
            progress = false;
            for (uint64_t q : {0, 1}) {
                for (Batch& b : submitted) {
                    if (b.queue != q || b.done) {
                        continue;
                    }
                    bool ready = layer >= b.d.wait;
                    for (const SemaphoreUse& w : b.waits) {
                        ready = ready && app >= w.value;
                    }
                    if (ready) {
                        b.done = progress = true;
                        layer = std::max(layer, b.d.signal);
                        for (const SemaphoreUse& s : b.signals) {
                            app = std::max(app, s.value);
                        }
                    }
                    break; // only the head of a queue can start
                }
            }
        }
        for (const Batch& b : submitted) {
            EXPECT_TRUE(b.done) << "interleaving " << interleavings << " deadlocked";
        }
    } while (std::next_permutation(order.begin(), order.end()));
    EXPECT_EQ(interleavings, 20); // 6! / (3! 3!)
}

} // namespace
} // namespace vkscope::timing
