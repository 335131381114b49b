// Ticks to nanoseconds: valid bits, wraps, periods, calibration onto CLOCK_MONOTONIC.

#include "instruments/timing/clock.hpp"

#include <gtest/gtest.h>

namespace vkscope::timing {
namespace {

TEST(TimingClock, MasksAndWraps) {
    EXPECT_EQ(tick_mask(64), ~uint64_t{0});
    EXPECT_EQ(tick_mask(32), 0xffffffffull);
    // 32 valid bits: the end wrapped past zero; bits above the valid ones are garbage.
    EXPECT_EQ(elapsed_ticks(0xfffffff0ull, 0xabcd000000000010ull, 32), 0x20u);
    EXPECT_EQ(signed_ticks(0x10, 0xfffffff0ull, 32), -0x20);
    EXPECT_EQ(signed_ticks(0xfffffff0ull, 0x10, 32), 0x20);
    EXPECT_EQ(signed_ticks(5, 3, 64), -2);
}

TEST(TimingClock, DeviceClockUsesThePeriod) {
    const auto i = interval(1000, 1600, TickFormat{64, 2.5}, std::nullopt);
    ASSERT_TRUE(i);
    EXPECT_EQ(i->begin_ns, 2500u);
    EXPECT_EQ(i->end_ns, 4000u);
}

TEST(TimingClock, LargeTickCountsKeepNanosecondPrecision) {
    // An H200's device clock reads about 1.8e18 ns: a double would round to 256 ns.
    const uint64_t t = 1'800'000'000'000'000'123ull;
    const auto i = interval(t, t + 7, TickFormat{64, 1.0}, std::nullopt);
    ASSERT_TRUE(i);
    EXPECT_EQ(i->begin_ns, t);
    EXPECT_EQ(i->end_ns, t + 7);
}

TEST(TimingClock, CalibratedTimesAreOnTheHostClock) {
    const Calibration c{1'800'000'000'000'000'000ull, 26'000'000'000ull, 3000};
    const auto later = interval(c.device_ticks + 500, c.device_ticks + 800, TickFormat{64, 1.0}, c);
    ASSERT_TRUE(later);
    EXPECT_EQ(later->begin_ns, 26'000'000'500ull);
    EXPECT_EQ(later->end_ns, 26'000'000'800ull);
    // Before the calibration point too.
    const auto earlier = interval(c.device_ticks - 100, c.device_ticks, TickFormat{64, 1.0}, c);
    ASSERT_TRUE(earlier);
    EXPECT_EQ(earlier->begin_ns, 25'999'999'900ull);
}

TEST(TimingClock, CalibrationAcrossAWrapOfFewValidBits) {
    // 36 valid bits wrap every 68.7 s at 1 ns: calibrated just before, measured just after.
    const uint64_t wrap = uint64_t{1} << 36;
    const Calibration c{wrap - 10, 1'000'000'000ull, 0};
    const auto i = interval(5, 25, TickFormat{36, 1.0}, c);
    ASSERT_TRUE(i);
    EXPECT_EQ(i->begin_ns, 1'000'000'015ull);
    EXPECT_EQ(i->end_ns, 1'000'000'035ull);
}

TEST(TimingClock, GarbageBeforeTheHostClockBeganIsRefused) {
    const Calibration c{1'000'000'000ull, 100, 0};
    EXPECT_FALSE(interval(1000, 2000, TickFormat{64, 1.0}, c));
}

} // namespace
} // namespace vkscope::timing
