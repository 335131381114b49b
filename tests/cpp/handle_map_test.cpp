#include "core/handle_map.hpp"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <deque>
#include <map>
#include <thread>
#include <vector>

namespace vkscope {
namespace {

// Handles look like aligned pointers: low bits clear, high bits shared.
uint64_t handle(uint64_t n) {
    return 0x7f0000001000ull + n * 64;
}

// Scattered handle values (a splitmix64 step), non-zero and aligned: tombstones left inside
// clusters by such keys are what forces the in-place re-layouts.
uint64_t scattered(uint64_t n) {
    uint64_t z = n + 0x9e3779b97f4a7c15ull;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return ((z ^ (z >> 31)) & ~uint64_t{63}) | 64;
}

struct Payload {
    uint64_t key = 0;
};

TEST(HandleMap, BasicOperations) {
    HandleMap<Payload> map;
    Payload a{handle(1)}, b{handle(2)};
    EXPECT_EQ(map.find(handle(1)), nullptr);
    EXPECT_TRUE(map.insert(handle(1), &a));
    EXPECT_FALSE(map.insert(handle(1), &b)); // already present: the first value stays
    EXPECT_TRUE(map.insert(handle(2), &b));
    EXPECT_EQ(map.find(handle(1)), &a);
    EXPECT_EQ(map.find(handle(2)), &b);
    EXPECT_EQ(map.size(), 2u);
    EXPECT_EQ(map.erase(handle(1)), &a);
    EXPECT_EQ(map.erase(handle(1)), nullptr);
    EXPECT_EQ(map.find(handle(1)), nullptr);
    EXPECT_EQ(map.find(handle(2)), &b);
    EXPECT_EQ(map.size(), 1u);
    EXPECT_TRUE(map.insert(handle(1), &b)); // reinsertion after erase
    EXPECT_EQ(map.find(handle(1)), &b);
}

TEST(HandleMap, ReservedKeysAndNullValues) {
    HandleMap<Payload> map;
    Payload a;
    EXPECT_FALSE(map.insert(0, &a));
    EXPECT_FALSE(map.insert(~uint64_t{0}, &a));
    EXPECT_FALSE(map.insert(5, nullptr));
    EXPECT_EQ(map.find(0), nullptr);
    EXPECT_EQ(map.find(~uint64_t{0}), nullptr);
    EXPECT_EQ(map.erase(0), nullptr);
    EXPECT_EQ(map.size(), 0u);
}

TEST(HandleMap, GrowsTo100kEntries) {
    constexpr uint64_t kCount = 100'000;
    std::vector<Payload> values(kCount);
    HandleMap<Payload> map;
    for (uint64_t i = 0; i < kCount; ++i) {
        values[i].key = handle(i);
        ASSERT_TRUE(map.insert(handle(i), &values[i]));
    }
    EXPECT_EQ(map.size(), kCount);
    for (uint64_t i = 0; i < kCount; ++i) {
        ASSERT_EQ(map.find(handle(i)), &values[i]) << i;
    }
    EXPECT_EQ(map.find(handle(kCount)), nullptr);
    // At most half full after growth, and the retired tables (kept for concurrent readers)
    // together are smaller than the current one.
    EXPECT_GE(map.capacity(), 2 * kCount);
    EXPECT_LE(map.capacity(), 8 * kCount);
    EXPECT_LT(map.total_capacity(), 2 * map.capacity());
    // Small sequential integers (some drivers' handles) work as well as pointers.
    HandleMap<Payload> small;
    for (uint64_t i = 1; i <= 1000; ++i) {
        ASSERT_TRUE(small.insert(i, &values[i]));
    }
    for (uint64_t i = 1; i <= 1000; ++i) {
        ASSERT_EQ(small.find(i), &values[i]);
    }
}

TEST(HandleMap, ChurnDoesNotGrowMemory) {
    // Objects created and destroyed all the time (new handle values each time) while about a
    // thousand stay alive, like per-frame image views.
    constexpr size_t kLive = 1000;
    std::vector<Payload> values(kLive);
    HandleMap<Payload> map;
    std::deque<uint64_t> live;
    uint64_t next = 0;
    for (; next < kLive; ++next) {
        ASSERT_TRUE(map.insert(handle(next), &values[next % kLive]));
        live.push_back(next);
    }
    const size_t capacity = map.capacity();
    const size_t total = map.total_capacity();
    for (int cycle = 0; cycle < 200'000; ++cycle, ++next) {
        ASSERT_EQ(map.erase(handle(live.front())), &values[live.front() % kLive]);
        live.pop_front();
        ASSERT_TRUE(map.insert(handle(next), &values[next % kLive]));
        live.push_back(next);
    }
    EXPECT_EQ(map.size(), kLive);
    EXPECT_EQ(map.capacity(), capacity);
    EXPECT_EQ(map.total_capacity(), total);
    for (uint64_t n : live) {
        ASSERT_EQ(map.find(handle(n)), &values[n % kLive]);
    }
    EXPECT_EQ(map.find(handle(live.front() - 1)), nullptr);
}

TEST(HandleMap, EraseReinsertSameKeys) {
    std::vector<Payload> values(300);
    HandleMap<Payload> map;
    for (size_t i = 0; i < values.size(); ++i) {
        ASSERT_TRUE(map.insert(handle(i), &values[i]));
    }
    const size_t total = map.total_capacity();
    for (int cycle = 0; cycle < 1000; ++cycle) {
        for (size_t i = cycle % 2; i < values.size(); i += 2) {
            ASSERT_EQ(map.erase(handle(i)), &values[i]);
        }
        for (size_t i = cycle % 2; i < values.size(); i += 2) {
            ASSERT_TRUE(map.insert(handle(i), &values[i]));
        }
    }
    EXPECT_EQ(map.total_capacity(), total);
    for (size_t i = 0; i < values.size(); ++i) {
        ASSERT_EQ(map.find(handle(i)), &values[i]);
    }
}

TEST(HandleMap, ForEachVisitsLiveEntries) {
    std::vector<Payload> values(100);
    HandleMap<Payload> map;
    for (size_t i = 0; i < values.size(); ++i) {
        map.insert(handle(i), &values[i]);
    }
    for (size_t i = 0; i < values.size(); i += 3) {
        map.erase(handle(i));
    }
    std::map<uint64_t, Payload*> seen;
    map.for_each([&](uint64_t key, Payload* value) { seen.emplace(key, value); });
    EXPECT_EQ(seen.size(), map.size());
    for (size_t i = 0; i < values.size(); ++i) {
        if (i % 3 == 0) {
            EXPECT_FALSE(seen.contains(handle(i)));
        } else {
            EXPECT_EQ(seen.at(handle(i)), &values[i]);
        }
    }
}

// Readers look up stable keys without pause while a writer churns other keys through growth and
// in-place re-layouts (a sliding window of live keys, with new handle values all the time). A
// stable key must never be missed or mapped to another value, and a churned key may only ever
// map to its own value.
TEST(HandleMap, ConcurrentReadersSeeStableKeys) {
    constexpr uint64_t kStable = 256;
    constexpr uint64_t kValues = 4096;
    std::vector<Payload> stable(kStable), churn(kValues);
    HandleMap<Payload> map;
    for (uint64_t i = 0; i < kStable; ++i) {
        ASSERT_TRUE(map.insert(handle(i), &stable[i]));
    }
    const auto churn_key = [](uint64_t n) { return scattered(n); };
    std::atomic<uint64_t> inserted{1}; // churn keys below this have been inserted at some point
    std::atomic<bool> done{false};
    std::atomic<uint64_t> misses{0}, wrong{0}, lookups{0};
    std::atomic<int> started{0};
    std::atomic<uint64_t> progress{0}; // batches of lookups, so the writer can wait for readers
    const auto reader = [&](uint64_t seed) {
        uint64_t x = seed, count = 0;
        ++started;
        while (!done.load(std::memory_order_acquire)) {
            if (count % 256 == 0) {
                ++progress;
            }
            x = x * 6364136223846793005ull + 1442695040888963407ull;
            const uint64_t s = (x >> 33) % kStable;
            Payload* p = map.find(handle(s));
            misses += p == nullptr ? 1 : 0;
            wrong += p != nullptr && p != &stable[s] ? 1 : 0;
            const uint64_t n = (x >> 17) % inserted.load(std::memory_order_relaxed);
            Payload* q = map.find(churn_key(n));
            wrong += q != nullptr && q != &churn[n % kValues] ? 1 : 0;
            ++count;
        }
        lookups += count;
    };
    std::thread r1(reader, 1), r2(reader, 2);
    struct Stop { // joins the readers on every exit, a failed ASSERT included
        std::atomic<bool>& done;
        std::thread& a;
        std::thread& b;
        ~Stop() {
            done.store(true, std::memory_order_release);
            a.join();
            b.join();
        }
    };
    {
        Stop stop{done, r1, r2};
        // On a loaded machine the writer could otherwise finish before a reader ever ran: start
        // together, and let the readers make progress all along.
        const auto wait_for_readers = [&] {
            const uint64_t from = progress.load();
            while (progress.load() < from + 4) {
                std::this_thread::yield();
            }
        };
        while (started.load() < 2) {
            std::this_thread::yield();
        }
        std::deque<uint64_t> live;
        uint64_t next = 0;
        for (const size_t window : {500, 3000, 100, 3800, 0}) {
            for (int cycle = 0; cycle < 15'000; ++cycle, ++next) {
                if (cycle % 1000 == 0) {
                    wait_for_readers();
                }
                while (live.size() >= window && !live.empty()) {
                    ASSERT_EQ(map.erase(churn_key(live.front())), &churn[live.front() % kValues]);
                    live.pop_front();
                }
                if (window == 0) {
                    break;
                }
                ASSERT_TRUE(map.insert(churn_key(next), &churn[next % kValues]));
                live.push_back(next);
                inserted.store(next + 1, std::memory_order_relaxed);
            }
        }
    }
    EXPECT_EQ(misses.load(), 0u);
    EXPECT_EQ(wrong.load(), 0u);
    EXPECT_GT(lookups.load(), 0u);
    EXPECT_EQ(map.size(), kStable);
}

// A small table where a few stable keys share clusters with a fast-churning window, so that
// in-place re-layouts (which move stable keys) happen thousands of times while two readers look
// the stable keys up. Time-bounded; VKSCOPE_STRESS_MS makes it run longer (dropping the
// not-found re-check in find() shows up as misses within seconds).
TEST(HandleMap, StableKeysSurviveInPlaceRelayouts) {
    const char* env = std::getenv("VKSCOPE_STRESS_MS");
    const auto budget = std::chrono::milliseconds(env != nullptr ? std::atoll(env) : 300);
    constexpr uint64_t kStable = 64;
    constexpr size_t kWindow = 40;
    std::vector<Payload> stable(kStable);
    Payload churned;
    HandleMap<Payload> map;
    const auto stable_key = [](uint64_t i) { return scattered(i + (uint64_t{1} << 40)); };
    for (uint64_t i = 0; i < kStable; ++i) {
        ASSERT_TRUE(map.insert(stable_key(i), &stable[i]));
    }
    std::atomic<bool> done{false};
    std::atomic<uint64_t> misses{0}, wrong{0}, lookups{0};
    const auto reader = [&](uint64_t x) {
        uint64_t count = 0;
        while (!done.load(std::memory_order_relaxed)) {
            x = x * 6364136223846793005ull + 1442695040888963407ull;
            const uint64_t s = (x >> 33) % kStable;
            Payload* p = map.find(stable_key(s));
            misses += p == nullptr ? 1 : 0;
            wrong += p != nullptr && p != &stable[s] ? 1 : 0;
            ++count;
        }
        lookups += count;
    };
    std::thread r1(reader, 1), r2(reader, 2);
    std::deque<uint64_t> live;
    uint64_t next = 0;
    const auto end = std::chrono::steady_clock::now() + budget;
    while (std::chrono::steady_clock::now() < end) {
        for (int i = 0; i < 1000; ++i, ++next) {
            if (live.size() >= kWindow) {
                map.erase(scattered(live.front()));
                live.pop_front();
            }
            map.insert(scattered(next), &churned);
            live.push_back(next);
        }
    }
    done.store(true, std::memory_order_relaxed);
    r1.join();
    r2.join();
    EXPECT_EQ(misses.load(), 0u);
    EXPECT_EQ(wrong.load(), 0u);
    EXPECT_EQ(map.size(), kStable + kWindow);
    EXPECT_LE(map.capacity(), 256u);
}

} // namespace
} // namespace vkscope
