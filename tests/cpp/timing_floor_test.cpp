// The timer floor's samples: where each measurement's timestamps sit among the query results,
// in each serialization mode, and the wrap of a timestamp past its valid bits.

#include "instruments/timing/floor_samples.hpp"

#include <gtest/gtest.h>

#include <vector>

namespace vkscope::timing {
namespace {

TEST(TimingFloor, SlotsPerMode) {
    EXPECT_EQ(floor_slots(Mode::queue, 4), 8u + 5u); // a chain: one more than its workloads
    EXPECT_EQ(floor_slots(Mode::full, 4), 8u + 5u);
    EXPECT_EQ(floor_slots(Mode::none, 4), 8u + 8u); // a TOP/BOTTOM pair each
}

TEST(TimingFloor, SerializedWorkloadsShareTheirTimestamps) {
    // Back to back: 1, 3, 2 ticks; then a chain 100, 107, 113, 120.
    const std::vector<uint64_t> results{10, 11, 20, 23, 30, 32, 100, 107, 113, 120};
    const FloorSamples s = floor_samples(2, Mode::queue, results, 64, 3);
    EXPECT_EQ(s.family, 2u);
    EXPECT_EQ(s.back_to_back, (std::vector<uint64_t>{1, 3, 2}));
    EXPECT_EQ(s.empty, (std::vector<uint64_t>{7, 6, 7}));
    EXPECT_EQ(s.reason, nullptr);
}

TEST(TimingFloor, UnserializedWorkloadsArePairs) {
    const std::vector<uint64_t> results{10, 11, 20, 21, 100, 104, 200, 203};
    const FloorSamples s = floor_samples(0, Mode::none, results, 64, 2);
    EXPECT_EQ(s.back_to_back, (std::vector<uint64_t>{1, 1}));
    EXPECT_EQ(s.empty, (std::vector<uint64_t>{4, 3}));
}

TEST(TimingFloor, WrapsWithinTheValidBits) {
    // 32 valid bits: the second timestamp wrapped past zero; the bits above are garbage.
    const std::vector<uint64_t> results{0xfffffffeull, 0xabcd000000000001ull, 5, 9};
    const FloorSamples s = floor_samples(0, Mode::queue, results, 32, 1);
    EXPECT_EQ(s.back_to_back, (std::vector<uint64_t>{3}));
    EXPECT_EQ(s.empty, (std::vector<uint64_t>{4}));
}

TEST(TimingFloor, TooFewResultsSayWhy) {
    const std::vector<uint64_t> results{1, 2, 3};
    const FloorSamples s = floor_samples(0, Mode::queue, results, 64, 2);
    EXPECT_TRUE(s.back_to_back.empty() && s.empty.empty());
    ASSERT_NE(s.reason, nullptr);
}

} // namespace
} // namespace vkscope::timing
