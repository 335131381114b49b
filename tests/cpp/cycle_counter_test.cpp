// The cycle counter a budgeted recording times its instruments' calls with
// (core/cycle_counter.hpp).

#include "core/cycle_counter.hpp"

#include <gtest/gtest.h>

#include <cstdint>

namespace vkscope {
namespace {

// A part counted in cycles is its share of a span the system clock timed, never more than it.
TEST(CycleCounter, APartIsItsShareOfTheSpan) {
    EXPECT_EQ(cycles_as_ns(250, 1000, 4000), 1000u);
    EXPECT_EQ(cycles_as_ns(0, 1000, 4000), 0u);
    EXPECT_EQ(cycles_as_ns(1500, 1000, 4000), 4000u) << "a part longer than its span is the span";
    EXPECT_EQ(cycles_as_ns(10, 0, 4000), 0u) << "a span the counter did not see pass";
}

TEST(CycleCounter, CountsOnAsTimePasses) {
    const uint64_t began = cycle_count();
    const uint64_t began_ns = monotonic_ns();
    while (monotonic_ns() - began_ns < 1'000'000) {
    }
    EXPECT_GT(cycle_count(), began);
}

} // namespace
} // namespace vkscope
