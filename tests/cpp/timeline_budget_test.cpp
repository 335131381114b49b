// The cost budget: the window a frame's workloads are chosen by, the device-side epochs that
// recordings take their window from, and the budget setting's values. The controller that plans
// the window: timeline_budget_controller_test.cpp.

#include "core/settings_parse.hpp"
#include "timeline/budget.hpp"
#include "timeline/budget_controller.hpp"
#include "timeline/command_stream.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <optional>
#include <random>
#include <string>
#include <thread>
#include <vector>

namespace vkscope::timeline {
namespace {

TEST(BudgetWindow, MeasuredCountsWhatMeasuresChooses) {
    std::mt19937 rng(7);
    for (int i = 0; i < 2000; ++i) {
        const uint32_t period = 1 + rng() % 300;
        const BudgetWindow w{static_cast<uint32_t>(rng() % period),
                             static_cast<uint32_t>(rng() % (period + 1)), period};
        const uint32_t positions = static_cast<uint32_t>(rng() % (2 * period + 2));
        uint32_t chosen = 0;
        for (uint32_t p = 0; p < positions; ++p) {
            chosen += w.measures(p) ? 1 : 0;
        }
        ASSERT_EQ(w.measured(positions), chosen)
            << "begin " << w.begin << " count " << w.count << " period " << period;
        const BudgetWindow back = BudgetWindow::unpack(w.pack());
        ASSERT_EQ(back.begin, w.begin);
        ASSERT_EQ(back.count, w.count);
        ASSERT_EQ(back.period, w.period);
    }
}

TEST(BudgetWindow, WrapsAroundTheFrame) {
    const BudgetWindow w{190, 20, 200};
    EXPECT_TRUE(w.measures(195));
    EXPECT_TRUE(w.measures(5));
    EXPECT_FALSE(w.measures(10));
    EXPECT_FALSE(w.measures(100));
    EXPECT_EQ(w.measured(200), 20u);
}

TEST(Budget, ARecordingKeepsTheWindowOfTheFrameItBeganIn) {
    Budget budget(100);
    const Workload w;
    uint64_t now = 1'000'000;
    for (uint32_t f = 0; f < BudgetController::kWarmupFrames + BudgetController::kFirstBaselineRun;
         ++f) {
        void* recording = budget.recording_began();
        for (int i = 0; i < 10; ++i) {
            // Warmup and baseline frames measure nothing.
            EXPECT_EQ(Budget::choose(w, recording).measured, 0);
        }
        const auto frame = budget.frame_ended(now += 1'000'000, true);
        ASSERT_TRUE(frame);
        EXPECT_EQ(frame->workloads, 10u);
    }
    // The next frame measures (a 64th of 10, at least one); a recording begun in it keeps its
    // window after the frame has ended.
    void* recording = budget.recording_began();
    EXPECT_EQ(Budget::choose(w, recording).measured, InstrumentChoice::kAll);
    const InstrumentChoice second = Budget::choose(w, recording);
    EXPECT_EQ(second.measured, 0);
    EXPECT_FALSE(second.precedes_measured) << "the window is the first position only";
    const auto frame = budget.frame_ended(now += 1'000'000, true);
    ASSERT_TRUE(frame);
    EXPECT_EQ(frame->state, BudgetState::measured);
    EXPECT_EQ(frame->measured, 1u);
    EXPECT_EQ(Budget::choose(w, recording).measured, 0)
        << "its third position, not the next frame's first";
    EXPECT_FALSE(budget.frame_ended(now += 1'000'000, false)) << "not captured: nothing to say";
}

TEST(Budget, TheWorkloadBeforeAWindowSaysSo) {
    Budget budget(100);
    const Workload w;
    uint64_t now = 1'000'000;
    // Warmup, the first baseline, and one measured frame of 10 workloads: the next window
    // begins where that frame's ended, after position 0.
    for (uint32_t f = 0;
         f < BudgetController::kWarmupFrames + BudgetController::kFirstBaselineRun + 1; ++f) {
        void* recording = budget.recording_began();
        for (int i = 0; i < 10; ++i) {
            Budget::choose(w, recording);
        }
        ASSERT_TRUE(budget.frame_ended(now += 1'000'000, true));
    }
    void* recording = budget.recording_began();
    std::vector<InstrumentChoice> chosen;
    for (int i = 0; i < 10; ++i) {
        chosen.push_back(Budget::choose(w, recording));
    }
    const auto first = std::find_if(chosen.begin(), chosen.end(), [](const InstrumentChoice& c) {
        return c.measured == InstrumentChoice::kAll;
    });
    ASSERT_NE(first, chosen.end());
    ASSERT_NE(first, chosen.begin()) << "the window begins after position 0";
    for (auto c = chosen.begin(); c != chosen.end(); ++c) {
        EXPECT_EQ(c->precedes_measured, c == first - 1) << c - chosen.begin();
    }
}

// The device's budget runs the controller's estimates on a thread of its own: every frame end
// plans from the estimates of the samples up to the frame before, whether the thread ran them
// (given time between frame ends) or the frame end had to (frame ends back to back). So what it
// plans is what the controller plans when each estimate runs just after the frame end that
// took its sample, frame for frame, however the thread is scheduled.
TEST(Budget, PlansFromTheEstimatesOfTheFrameBefore) {
    constexpr uint32_t kPositions = 200;
    Budget budget(5);
    BudgetController reference(0.05);
    const Workload w;
    std::mt19937 rng(11);
    std::uniform_real_distribution<double> jitter(-20'000, 20'000);
    uint64_t now = 1'000'000'000;
    uint64_t last = 0;
    uint32_t measured_frames = 0;
    for (uint32_t f = 0; f < 400; ++f) {
        void* recording = budget.recording_began();
        uint32_t chosen = 0;
        for (uint32_t p = 0; p < kPositions; ++p) {
            chosen += Budget::choose(w, recording).measured == InstrumentChoice::kAll ? 1 : 0;
        }
        const auto recording_ns = static_cast<uint64_t>(400'000 + jitter(rng));
        Budget::recorded(recording, recording_ns);
        // A frame of 1.7 ms, 1.5 us a workload measured and 10 us once for measuring any.
        now += static_cast<uint64_t>(1'700'000 + jitter(rng) + 1'500.0 * chosen +
                                     (chosen ? 10'000 : 0));
        const auto got = budget.frame_ended(now, true);
        const BudgetFrame want = reference.frame_ended(
            last ? now - last : 0, kPositions, recording_ns, BudgetController::Estimate::later);
        reference.estimate();
        last = now;
        ASSERT_TRUE(got);
        ASSERT_EQ(got->state, want.state) << "frame " << f;
        ASSERT_EQ(got->measured, want.measured) << "frame " << f;
        ASSERT_EQ(got->next, want.next) << "frame " << f;
        ASSERT_EQ(got->base_ns, want.base_ns) << "frame " << f;
        ASSERT_EQ(got->unit_ns, want.unit_ns) << "frame " << f;
        measured_frames += got->measured > 0 ? 1 : 0;
        if (f % 3 == 0) {
            // Time for the thread, now and then: the others end back to back.
            std::this_thread::sleep_for(std::chrono::microseconds(200));
        }
    }
    EXPECT_GT(measured_frames, 200u) << "the plan measured something, so the estimates ran";
}

TEST(SettingsParse, PercentagesAsTheHostReadsThem) {
    std::optional<double> v;
    std::string why;
    for (const char* ok : {"5", "5%", " 2.5 % ", "0", "100%", "0.25", ".5", "5."}) {
        EXPECT_EQ(parse_percent(ok, 0, 100, v, why), AssignResult::kOk) << ok;
        EXPECT_TRUE(v) << ok;
    }
    EXPECT_EQ(parse_percent("", 0, 100, v, why), AssignResult::kOk);
    EXPECT_FALSE(v) << "empty: off";
    for (const char* bad : {"-1", "101", "abc", "5%%", "1e2", "nan", "inf", "%", "5 5"}) {
        EXPECT_EQ(parse_percent(bad, 0, 100, v, why), AssignResult::kBadValue) << bad;
    }
}

} // namespace
} // namespace vkscope::timeline
