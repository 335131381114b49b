// The result ring: contiguous regions, first in first out, wrapping, never growing.

#include "core/ring.hpp"

#include <gtest/gtest.h>

namespace vkscope::timing {
namespace {

TEST(TimingRing, RegionsFollowEachOtherAndWrap) {
    RingAllocator ring(100);
    auto a = ring.allocate(40);
    auto b = ring.allocate(40);
    ASSERT_TRUE(a && b);
    EXPECT_EQ(a->first, 0u);
    EXPECT_EQ(b->first, 40u);
    EXPECT_FALSE(ring.allocate(30)); // 20 left at the end, nothing at the start
    ring.release(a->id);
    auto c = ring.allocate(30); // wraps to the start
    ASSERT_TRUE(c);
    EXPECT_EQ(c->first, 0u);
    EXPECT_FALSE(ring.allocate(11)); // only [30, 40) is free
    auto d = ring.allocate(10);
    ASSERT_TRUE(d);
    EXPECT_EQ(d->first, 30u);
    EXPECT_EQ(ring.in_use(), 80u);
}

TEST(TimingRing, AnEarlyReleaseWaitsForTheOlderOnes) {
    RingAllocator ring(100);
    auto a = ring.allocate(50);
    auto b = ring.allocate(50);
    ring.release(b->id);
    EXPECT_FALSE(ring.allocate(10)); // a still holds the start
    ring.release(a->id);
    EXPECT_EQ(ring.in_use(), 0u);
    auto c = ring.allocate(100);
    ASSERT_TRUE(c);
    EXPECT_EQ(c->first, 0u);
}

TEST(TimingRing, ALongRunStaysInside) {
    RingAllocator ring(1000);
    for (int i = 0; i < 100000; ++i) {
        auto r = ring.allocate(static_cast<uint32_t>(1 + i % 97));
        ASSERT_TRUE(r);
        EXPECT_LE(r->first + r->count, 1000u);
        ring.release(r->id);
    }
    EXPECT_EQ(ring.in_use(), 0u);
    EXPECT_FALSE(ring.allocate(1001));
    EXPECT_FALSE(ring.allocate(0));
}

} // namespace
} // namespace vkscope::timing
