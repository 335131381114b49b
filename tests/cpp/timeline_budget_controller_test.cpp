// The cost budget's controller: how it plans each frame's window from the frames' times, run on
// simulated frames (budget_simulated_frame.hpp) of a given cost, noise, drift and recording.

#include "budget_simulated_frame.hpp"
#include "timeline/budget_controller.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <vector>

namespace vkscope::timeline {
namespace {

using simulated::longest_gaps;
using simulated::Loop;
using simulated::spends;

TEST(BudgetController, StartsWithWarmupFramesThenBaselineFrames) {
    const Loop loop;
    const auto r = loop.run(16);
    const uint32_t warmup = BudgetController::kWarmupFrames;
    const uint32_t run = BudgetController::kFirstBaselineRun;
    for (uint32_t f = 0; f < warmup; ++f) {
        EXPECT_EQ(r.frames[f].state, BudgetState::warmup) << f;
        EXPECT_FALSE(r.frames[f].sample);
    }
    for (uint32_t f = warmup; f < warmup + run; ++f) {
        EXPECT_EQ(r.frames[f].state, BudgetState::baseline) << f;
        EXPECT_EQ(r.frames[f].measured, 0u);
    }
    EXPECT_FALSE(r.frames[warmup].sample) << "after a warmup frame: not alike";
    for (uint32_t f = warmup + 1; f < warmup + BudgetController::kSettleFrames; ++f) {
        EXPECT_FALSE(r.frames[f].sample) << f << ": a change may still show";
    }
    EXPECT_TRUE(r.frames[warmup + BudgetController::kSettleFrames].sample);
    ASSERT_TRUE(r.frames[warmup + run - 1].base_ns);
    EXPECT_EQ(*r.frames[warmup + run - 1].base_ns, 800'000u);
    EXPECT_EQ(r.frames[warmup + run].state, BudgetState::measured);
    EXPECT_EQ(r.frames[warmup + run].measured, 200u / 64)
        << "the ramp starts at a 64th of the frame";
}

TEST(BudgetController, ABaselineTheMeasuredFramesContradictIsTakenAgain) {
    // The baseline frames come while the application still warms up: twice as long as later.
    BudgetController c(0.05);
    const uint32_t warmup = BudgetController::kWarmupFrames;
    const uint32_t run = BudgetController::kFirstBaselineRun;
    for (uint32_t f = 0; f < warmup + run; ++f) {
        c.frame_ended(f ? 1'600'000 : 0, 200);
    }
    ASSERT_EQ(*c.base_ns(), 1'600'000u);
    uint32_t f = 0;
    for (; f < 100 && (!c.base_ns() || *c.base_ns() != 800'000); ++f) {
        const uint32_t measured = c.window().measured(200);
        c.frame_ended(800'000 + 1'500 * measured, 200);
    }
    EXPECT_LT(f, 40u) << "taken again within a few rotations";
    for (int g = 0; g < 40; ++g) {
        const uint32_t measured = c.window().measured(200);
        c.frame_ended(800'000 + 1'500 * measured, 200);
    }
    ASSERT_TRUE(c.unit_ns());
    // (a sample counts the mean of its frame's count and the one before, which may differ by a
    // workload where a share carries: off by a share of a workload's cost)
    EXPECT_NEAR(*c.unit_ns(), 1500.0, 30.0);
}

// A frame that gets much faster for good once the count is at the budget (a scene that got
// lighter): the measured frames read faster than the baseline, and once they do by more than the
// estimate's error the baseline is taken again. The measured frames' samples are kept, so the
// first frames after the new baseline run measure what the budget holds at the new frame time,
// not the ramp's first count again.
TEST(BudgetController, ABaselineTakenAgainKeepsWhatTheMeasuredFramesSaid) {
    Loop loop;
    loop.noise = 0.002;
    loop.step = -0.3;
    loop.step_at = 200;
    const auto r = loop.run(600);
    // The new baseline's first run: kFirstBaselineRun frames in a row with no baseline before.
    uint32_t after = 0;
    for (uint32_t f = loop.step_at; f + 1 < r.frames.size() && after == 0; ++f) {
        if (r.frames[f].state == BudgetState::baseline && !r.frames[f].base_ns) {
            after = f;
        }
    }
    ASSERT_GT(after, 0u) << "the baseline was taken again";
    while (r.frames[after].state != BudgetState::measured) {
        ++after;
    }
    // At 560 us, 5% holds 18 workloads of 1.5 us: a rotation of 12.
    const uint32_t first_count = r.frames[after].measured;
    EXPECT_GE(first_count, 14u) << "no ramp from a 64th of the frame";
    EXPECT_LE(first_count, 19u);
}

TEST(BudgetController, HoldsTheBudgetAndMeasuresEveryWorkloadWithinTheRotationItImplies) {
    for (const int lag : {0, 1}) {
        Loop loop;
        loop.lag = lag;
        const auto r = loop.run(400);
        const auto spent = spends(loop, r, 40);
        ASSERT_FALSE(spent.empty());
        for (const double s : spent) {
            ASSERT_LE(s, loop.budget + 1e-9) << "lag " << lag;
        }
        // 200 workloads of 1.5 us on 800 us: 37.5% in full, 7.5 budgets: a rotation of 8.
        auto measured = r.frames.rbegin();
        while (measured->rotation == 0) {
            ++measured; // (a baseline run is due)
        }
        const BudgetFrame& last = *measured;
        EXPECT_EQ(last.rotation, 8u) << "lag " << lag;
        ASSERT_TRUE(last.unit_ns);
        EXPECT_NEAR(*last.unit_ns, 1500.0, 1.0);
        const auto [rotation, any] = longest_gaps(r, 40);
        EXPECT_LE(rotation, loop.rotation_target()) << "lag " << lag;
        EXPECT_LE(any, loop.rotation_target() + BudgetController::kBaselineRun) << "lag " << lag;
    }
}

TEST(BudgetController, RefreshesItsBaselineAtTheEndOfARotation) {
    const Loop loop;
    const auto r = loop.run(400);
    std::vector<uint32_t> runs;
    for (uint32_t f = 40; f < r.frames.size(); ++f) {
        if (r.frames[f].state == BudgetState::baseline &&
            r.frames[f - 1].state == BudgetState::measured) {
            runs.push_back(f);
            EXPECT_EQ(r.frames[f + 1].state, BudgetState::baseline);
            EXPECT_EQ(r.frames[f].measured, 0u);
        }
    }
    ASSERT_GE(runs.size(), 3u);
    for (size_t i = 1; i < runs.size(); ++i) {
        EXPECT_GE(runs[i] - runs[i - 1], BudgetController::kRefreshFrames);
        EXPECT_LE(runs[i] - runs[i - 1], BudgetController::kRefreshFrames + 12);
    }
}

TEST(BudgetController, NoisyFramesStillHoldTheBudgetAtTheMedian) {
    Loop loop;
    loop.noise = 0.005;   // +-0.5% of the frame: a tenth of the budget
    loop.unit_ns = 1'450; // 36.25% in full: 7.25 budgets
    loop.lag = 1;
    for (uint32_t seed = 1; seed <= 5; ++seed) {
        loop.seed = seed;
        const auto r = loop.run(600);
        auto spent = spends(loop, r, 60);
        std::sort(spent.begin(), spent.end());
        EXPECT_LE(spent[spent.size() / 2], loop.budget) << "seed " << seed;
        // (a frame that rounds its share of a workload up measures one more, and a sample that
        // averages two frames' counts, of which the later frame's time shows one, is off by a
        // share of a workload where the count just changed)
        EXPECT_LE(spent[spent.size() * 95 / 100], loop.budget + 2 * loop.unit_ns / loop.base_ns)
            << "seed " << seed;
        const auto [rotation, any] = longest_gaps(r, 60);
        EXPECT_LE(rotation, loop.rotation_target()) << "seed " << seed;
        EXPECT_LE(any, loop.rotation_target() + BudgetController::kBaselineRun) << "seed " << seed;
    }
}

// The frames' noise hides what a few workloads cost: the count never grows past what the budget
// holds on the strength of a cost it cannot see (it once grew to every workload of the frame
// until the cost showed above the noise, several budgets later).
//
// A frame time this noisy makes each run a lottery: over 40 runs, none doubles the budget, and
// most hold it at the median, their 95th percentile within 1.3 budgets and a rotation within
// five times the budget's (the controller before samples waited for frames to settle missed the
// second in 6 runs of 40 and the third in 1).
TEST(BudgetController, ACostTheNoiseHidesIsNoLicenceToMeasureEverything) {
    Loop loop;
    loop.noise = 0.06; // +-6% of the frame: more than the budget
    loop.lag = 1;
    constexpr uint32_t kRuns = 40;
    uint32_t over_median = 0;
    uint32_t over_p95 = 0;
    uint32_t slow = 0;
    for (uint32_t seed = 1; seed <= kRuns; ++seed) {
        loop.seed = seed;
        const auto r = loop.run(600);
        auto spent = spends(loop, r, 60);
        std::sort(spent.begin(), spent.end());
        const auto [rotation, any] = longest_gaps(r, 60);
        EXPECT_LE(spent.back(), 2 * loop.budget) << "seed " << seed;
        over_median += spent[spent.size() / 2] > loop.budget ? 1 : 0;
        over_p95 += spent[spent.size() * 95 / 100] > 1.3 * loop.budget ? 1 : 0;
        slow += rotation > 5 * loop.rotation_target() ? 1 : 0;
    }
    EXPECT_LE(over_median, kRuns / 20);
    EXPECT_LE(over_p95, kRuns / 8);
    EXPECT_LE(slow, kRuns / 10) << "it still rotates";
}

// A frame of the size, cost and scatter measured on an H200 (docs/bench/device.md): 200
// workloads on 1.8 ms, pipeline statistics at 10.5 us a workload and 20 us a frame that measures
// any, a 10% budget, and what a frame's instruments cost showing over that frame and the next
// four (an application that runs ahead of the GPU: on the H200, what measuring added took three
// to four frames to show in full). A baseline frame right after measured ones still carries
// their cost; taken as a baseline, it made the cost look smaller than it was and the budget
// overspent (at the median of frames, in this model, before the samples waited for two frames
// alike: +9.5% to +12.3%, and +10.2% to +13.2% at the 95th percentile, over the first eight
// seeds below; since, +7.4% to +10.0%, and +8.3% to +11.2%). Over 32 seeds a few runs still end
// a little over the budget at the median: its plan counts one standard error of margin, which
// a run's noise now and then exceeds.
TEST(BudgetController, ACostThatShowsOverSeveralFramesIsNotTakenForTheBaseline) {
    Loop loop;
    loop.budget = 0.10;
    loop.base_ns = 1'800'000;
    loop.unit_ns = 10'500;
    loop.frame_ns = 20'000;
    loop.noise = 0.05;
    loop.spill = {0.3, 0.25, 0.2, 0.15, 0.1};
    constexpr uint32_t kRuns = 32;
    uint32_t over = 0;
    for (uint32_t seed = 1; seed <= kRuns; ++seed) {
        loop.seed = seed;
        const auto r = loop.run(600);
        // As the `budget` device check judges it: the median and the 95th percentile of the
        // frames' times against those of the same frames without instruments.
        std::vector<double> times(r.interval.begin() + 120, r.interval.end());
        std::vector<double> bare(r.bare.begin() + 120, r.bare.end());
        std::sort(times.begin(), times.end());
        std::sort(bare.begin(), bare.end());
        const size_t median = times.size() / 2;
        const size_t p95 = times.size() * 95 / 100;
        over += times[median] / bare[median] - 1 > loop.budget ? 1 : 0;
        EXPECT_LE(times[median] / bare[median] - 1, 1.1 * loop.budget) << "seed " << seed;
        // (the 95th percentile of frames is over by up to a point here: the frames whose count
        // a share of a workload rounds up, and the plan's error, which counts the mean's)
        EXPECT_LE(times[p95] / bare[p95] - 1, 1.15 * loop.budget) << "seed " << seed;
        // 200 workloads of 10.5 us: 117% of the frame, 11.7 budgets, and the cost per frame
        // takes a ninth of the budget: 14 frames at the least.
        const auto [rotation, any] = longest_gaps(r, 120);
        EXPECT_LE(rotation, 2 * 14u) << "seed " << seed;
    }
    EXPECT_LE(over, kRuns / 8);
}

// A frame of the H200's size and cost with timing (1.6 ms, 200 workloads of 2.3 us: 28.75% in
// full, a rotation of 6 at 5%) whose application's recording of 300 us swings by +-45 us in runs
// of frames.
Loop swinging_recording() {
    Loop loop;
    loop.base_ns = 1'600'000;
    loop.unit_ns = 2'300;
    loop.noise = 0.005;
    loop.recording_ns = 300'000;
    loop.recording_swing = 0.15;
    loop.lag = 1;
    return loop;
}

// The frame's time scatters with the application's own recording, in runs of frames (on an
// H200's host the recording of a 1.6 ms frame switches between a fast and a slow state, by some
// 100 us: more than a 5% budget). Told what the recording took in each frame, the controller
// fits how the frame's time moves with it and takes that out of every time it compares: its
// estimate's error, and the margin the plan keeps for it, shrink to what the rest of the frame
// scatters by. Over the seeds below, not told: rotations of 14 to 54 frames where the budget
// implies 7, and a median frame that spent 0.7% to 7.2%; told: 6 or 7 frames, 4.2% to 4.7%.
TEST(BudgetController, TakesTheApplicationsRecordingOutOfTheFramesTime) {
    Loop loop = swinging_recording();
    uint32_t missed_untold = 0;
    for (const bool told : {false, true}) {
        loop.report_recording = told;
        for (uint32_t seed = 1; seed <= 8; ++seed) {
            loop.seed = seed;
            const auto r = loop.run(600);
            auto spent = spends(loop, r, 120);
            std::sort(spent.begin(), spent.end());
            const auto [rotation, any] = longest_gaps(r, 120);
            if (!told) {
                missed_untold += rotation > loop.rotation_target() ? 1 : 0;
                continue;
            }
            EXPECT_NEAR(r.frames.back().recording_share, 1.0, 0.1) << "seed " << seed;
            EXPECT_LE(rotation, loop.rotation_target()) << "seed " << seed;
            EXPECT_LE(spent[spent.size() / 2], loop.budget) << "seed " << seed;
            EXPECT_LE(spent[spent.size() * 95 / 100], loop.budget) << "seed " << seed;
        }
    }
    EXPECT_GE(missed_untold, 6u) << "a scatter that the frame's time alone cannot see through";
}

// A recording that does not show in the frame's time (an application whose frame is the GPU's,
// recording the next frame while the GPU runs this one) explains none of it: the share fitted is
// about none, and the frame is planned from its time as it is.
TEST(BudgetController, ARecordingOutsideTheFramesTimeIsNotTakenOut) {
    Loop loop = swinging_recording();
    loop.recording_in_frame = 0;
    for (uint32_t seed = 1; seed <= 4; ++seed) {
        loop.seed = seed;
        const auto r = loop.run(600);
        auto spent = spends(loop, r, 120);
        std::sort(spent.begin(), spent.end());
        EXPECT_LT(r.frames.back().recording_share, 0.1) << "seed " << seed;
        EXPECT_LE(spent[spent.size() / 2], loop.budget) << "seed " << seed;
        const auto [rotation, any] = longest_gaps(r, 120);
        EXPECT_LE(rotation, loop.rotation_target()) << "seed " << seed;
    }
}

// A frame in which the machine stalled, early in the capture (on an H200: its recording 0.9 ms
// slower, its time 2.6 ms longer): one change of the recording larger than all the changes of
// its state together, and far steeper. A line fitted through the changes took its slope for
// as long as it stayed among the samples, the bound of the share, and compared with it every
// measured frame of a fast state against a baseline of a slow one looked dearer by half the
// recording's swing: at 5%, counts of a few workloads a frame for hundreds of frames. (Over the
// seeds below, with the line: a share at the bound in every frame checked, and two rotations of
// 8 and 10 frames where the budget implies 7.)
TEST(BudgetController, AStallOfTheMachineIsNotTakenForWhatTheRecordingMoves) {
    Loop loop = swinging_recording();
    loop.stall_at = 16;
    loop.stall_ns = 2'600'000;
    loop.stall_recording_ns = 900'000;
    loop.recording_jitter = 0.03;
    for (uint32_t seed = 1; seed <= 8; ++seed) {
        loop.seed = seed;
        const auto r = loop.run(600);
        // (the first hundred frames or so have too few changes of the state to outweigh it)
        for (uint32_t f = 160; f < 600; f += 20) {
            EXPECT_NEAR(r.frames[f].recording_share, 1.0, 0.2) << "seed " << seed << " frame " << f;
        }
        const auto [rotation, any] = longest_gaps(r, 120);
        EXPECT_LE(rotation, loop.rotation_target()) << "seed " << seed;
    }
}

// Where a slow recording state slows the rest of the frame with it, the frame moves by more than
// the recording: the share fitted says so, up to kMostRecordingShare.
TEST(BudgetController, ARecordingThatSlowsTheRestOfTheFrameCountsForMore) {
    Loop loop = swinging_recording();
    loop.recording_in_frame = 1.4;
    const auto r = loop.run(600);
    EXPECT_NEAR(r.frames.back().recording_share, 1.4, 0.15);
    loop.recording_in_frame = 3;
    EXPECT_EQ(loop.run(600).frames.back().recording_share, BudgetController::kMostRecordingShare);
}

// A frame time that drifts (a GPU's clocks settling, the machine's load changing): the baseline
// is taken often enough, and compared with measured frames of the same span, that the drift is
// not taken for what measuring costs, nor hides it.
TEST(BudgetController, AFrameTimeThatDriftsIsNotTakenForTheCost) {
    for (const double drift : {0.0001, -0.0001}) { // +-6% over the run
        Loop loop;
        loop.drift = drift;
        loop.noise = 0.005;
        loop.lag = 1;
        const auto r = loop.run(600);
        const auto spent = spends(loop, r, 60);
        size_t over = 0;
        for (const double s : spent) {
            // (a median of baseline frames over the last few hundred frames is the frame time of
            // a hundred frames ago: what the budget holds drifts with it, by a few percent)
            over += s > loop.budget * 1.05 + loop.unit_ns / loop.base_ns ? 1 : 0;
        }
        // (most of them early, while the first baseline, taken at the start, is the only one)
        EXPECT_LE(over, spent.size() / 10) << "drift " << drift;
        auto sorted = spent;
        std::sort(sorted.begin(), sorted.end());
        EXPECT_GE(sorted[sorted.size() / 2], 0.7 * loop.budget)
            << "drift " << drift << ": a drift read as cost would starve the rotation";
    }
}

// A first baseline that came out wrong by chance (its frames slow) is not planned by for long:
// while its error is large against the budget, baseline frames come every few frames.
TEST(BudgetController, AnUncertainBaselineIsTakenMoreOftenUntilItIsKnown) {
    Loop loop;
    loop.noise = 0.08;
    const auto r = loop.run(120);
    uint32_t runs = 0;
    for (uint32_t f = 20; f < 80; ++f) {
        runs += r.frames[f].state == BudgetState::baseline &&
                        r.frames[f - 1].state == BudgetState::measured
                    ? 1
                    : 0;
    }
    EXPECT_GE(runs, 60u / (2 * BudgetController::kRefreshFrames) + 3) << "more often than due";
    loop.noise = 0.001;
    const auto quiet = loop.run(120);
    runs = 0;
    for (uint32_t f = 20; f < 80; ++f) {
        runs += quiet.frames[f].state == BudgetState::baseline &&
                        quiet.frames[f - 1].state == BudgetState::measured
                    ? 1
                    : 0;
    }
    EXPECT_LE(runs, 60u / BudgetController::kRefreshFrames + 1) << "and only then";
}

// A frame time that scatters far more than the budget (a CPU device on a busy machine) never
// gets a baseline within a quarter of it: baseline frames come often while the samples fill, and
// then at their usual pace, not every few frames for good.
TEST(BudgetController, AFrameTimeTooNoisyForTheBudgetDoesNotTurnIntoBaselineFrames) {
    Loop loop;
    loop.noise = 0.5;
    const auto r = loop.run(600);
    uint32_t baseline = 0;
    for (uint32_t f = 300; f < 600; ++f) {
        baseline += r.frames[f].state == BudgetState::baseline ? 1 : 0;
    }
    EXPECT_LE(baseline, 300 * BudgetController::kBaselineRun / BudgetController::kRefreshFrames)
        << "about a run every " << BudgetController::kRefreshFrames << " frames";
}

TEST(BudgetController, ACostPerFrameIsHeldToo) {
    // Measuring anything costs the frame 20 us more (2.5% of it), each workload 1.5 us: a 5%
    // budget holds about ten workloads a frame; a 100% budget all of them.
    Loop loop;
    loop.frame_ns = 20'000;
    const auto r = loop.run(400);
    // (from frame 80: the first estimate waits for kFewestUnitSamples measured frames, and a
    // cost per frame counted per workload lets the count grow by steps)
    for (size_t f = 80; f < r.frames.size(); ++f) {
        const BudgetFrame& b = r.frames[f];
        if (b.state == BudgetState::measured) {
            const double spent = (loop.frame_ns + loop.unit_ns * b.measured) / loop.base_ns;
            // A frame that rounds its share of a workload up measures one more.
            ASSERT_LE(spent, loop.budget + loop.unit_ns / loop.base_ns + 1e-9) << f;
            ASSERT_GE(spent, 0.8 * loop.budget) << f << ": it grows until it nears the budget";
        }
    }
    // With a 100% budget and a cost per frame of half the frame, every frame measures, and at
    // least half the workloads: the cost per frame counted per workload makes the rest look
    // dearer than the budget (docs/budget.md).
    loop.budget = 1.0;
    loop.frame_ns = 400'000;
    const auto full = loop.run(400);
    for (size_t f = 300; f < full.frames.size(); ++f) {
        if (full.frames[f].state == BudgetState::measured) {
            EXPECT_GE(full.frames[f].measured, 100u) << f;
        }
    }
}

TEST(BudgetController, AHundredPercentMeasuresEveryWorkloadOnceTheCostIsKnown) {
    Loop loop;
    loop.budget = 1.0;
    const auto r = loop.run(60);
    EXPECT_EQ(r.frames.back().rotation, 1u);
    EXPECT_EQ(r.frames.back().measured, 200u);
}

TEST(BudgetController, ARotationMeetsEveryPassOfAPerformanceQuerySet) {
    // Two passes (a frame each): 7.5 budgets would make a rotation of 8 frames, which meets a
    // workload in frames of one pass only; 9 meets both.
    BudgetController c(0.05, 2);
    BudgetFrame last;
    for (int f = 0; f < 200 || last.rotation == 0; ++f) {
        const uint32_t measured = c.window().measured(200);
        last = c.frame_ended(f ? 800'000 + 1'500 * measured : 0, 200);
    }
    EXPECT_EQ(last.rotation, 9u);
}

TEST(BudgetController, ZeroMeasuresNothingAndEveryFrameIsABaseline) {
    Loop loop;
    loop.budget = 0;
    const auto r = loop.run(30);
    for (const BudgetFrame& f : r.frames) {
        EXPECT_EQ(f.state, BudgetState::baseline);
        EXPECT_EQ(f.measured, 0u);
        EXPECT_EQ(f.next, 0u);
        EXPECT_EQ(f.rotation, 0u);
    }
    EXPECT_TRUE(r.frames.back().base_ns) << "the frame's own time is still measured";
}

TEST(BudgetController, AFrameAfterOneNotCapturedIsNoSample) {
    BudgetController c(0.05);
    c.frame_ended(0, 100);
    for (uint32_t f = 0; f < BudgetController::kWarmupFrames; ++f) {
        c.frame_ended(1000, 100);
    }
    for (uint32_t f = 1; f < BudgetController::kSettleFrames; ++f) {
        c.frame_ended(1000, 100);
    }
    EXPECT_TRUE(c.frame_ended(1000, 100).sample);
    c.frame_skipped();
    EXPECT_FALSE(c.frame_ended(1000, 100).sample);
}

TEST(BudgetController, ACheapBudgetMeasuresAFewWorkloadsOverManyFrames) {
    Loop loop;
    loop.budget = 0.002; // 1.6 us of an 800 us frame: one workload a frame
    const auto r = loop.run(700);
    auto spent = spends(loop, r, 80);
    // One a frame, and now and then two (the budget holds 1.07): within the budget but for
    // those, which round a share of a workload up.
    std::sort(spent.begin(), spent.end());
    EXPECT_LE(spent[spent.size() / 2], loop.budget);
    EXPECT_LE(spent[spent.size() * 9 / 10], loop.budget);
    EXPECT_LE(spent.back(), 2 * loop.unit_ns / loop.base_ns + 1e-9);
    EXPECT_LE(r.frames.back().rotation, 200u);
    EXPECT_GE(r.frames.back().rotation, 180u);
}

} // namespace
} // namespace vkscope::timeline
