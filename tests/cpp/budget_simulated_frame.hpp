#pragma once
// A simulated frame loop for the budget controller's tests: frames of a given base time, cost per
// measured workload and per measured frame, noise, drift, spill over later frames, the
// application's own recording in runs of slow and fast frames, and a stall of the machine; with
// what each frame spent and how long each position waited between two frames that measured it.

#include "budget_gaps.hpp"
#include "timeline/budget_controller.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <random>
#include <utility>
#include <vector>

namespace vkscope::timeline::simulated {

// A frame loop: each frame costs `base` plus `unit` per workload measured, of this frame
// (lag 0) or of the one before it (lag 1: the GPU's share shows when the application waits
// for the frame later), with uniform noise of `noise` of the base, and a base that drifts by
// `drift` of itself every frame (a GPU's clocks, the machine's load).
struct Loop {
    double budget = 0.05;
    double base_ns = 800'000;
    double unit_ns = 1'500;
    double frame_ns = 0; // added to a frame that measures anything (reading results back)
    uint32_t workloads = 200;
    int lag = 0;
    double noise = 0.0;
    double drift = 0.0;
    // From frame `step_at` on (0: never), the base moves by `step` of itself at once (a scene
    // that got lighter, a GPU's clocks that went up).
    double step = 0.0;
    uint32_t step_at = 0;
    uint32_t seed = 1;
    // Where set, instead of `lag`: the share of a frame's cost that shows in its own time and in
    // each of the next frames' (an application that runs frames ahead of the GPU: its backlog
    // fills over a few frames and drains over a few).
    std::vector<double> spill;
    // The application's own recording, part of base_ns: `recording_ns` on average, in runs of
    // frames `recording_swing` of it slower or faster (a run ends with probability
    // `recording_switch` a frame), of which `recording_in_frame` shows in the frame's time; the
    // controller is told of it where `report_recording` is set.
    double recording_ns = 0;
    double recording_swing = 0;
    double recording_switch = 0.15;
    double recording_in_frame = 1;
    bool report_recording = true;
    // And from frame to frame, uniformly within `recording_jitter` of it either way.
    double recording_jitter = 0;
    // In frame `stall_at` (0: never) the machine stalls: the frame takes `stall_ns` longer, its
    // recording `stall_recording_ns` of that.
    uint32_t stall_at = 0;
    double stall_ns = 0;
    double stall_recording_ns = 0;

    struct Result {
        std::vector<BudgetFrame> frames;
        // Frame numbers that measured each position.
        std::vector<std::vector<uint32_t>> measured_in;
        // Each frame's time, and what it would have been without instruments.
        std::vector<double> interval;
        std::vector<double> bare;
    };

    Result run(uint32_t frames) const {
        BudgetController c(budget);
        std::mt19937 rng(seed);
        std::uniform_real_distribution<double> jitter(-noise, noise);
        std::bernoulli_distribution switches(recording_switch);
        bool slow = false;
        Result out;
        out.measured_in.resize(workloads);
        uint32_t last = 0;
        std::vector<double> pending(frames + spill.size(), 0.0);
        for (uint32_t f = 0; f < frames; ++f) {
            const BudgetWindow w = c.window();
            const uint32_t measured = w.measured(workloads);
            for (uint32_t p = 0; p < workloads; ++p) {
                if (w.measures(p)) {
                    out.measured_in[p].push_back(f);
                }
            }
            const uint32_t shown = lag ? last : measured;
            last = measured;
            double added = unit_ns * shown + (shown ? frame_ns : 0);
            if (!spill.empty()) {
                for (size_t i = 0; i < spill.size(); ++i) {
                    pending[f + i] += (unit_ns * measured + (measured ? frame_ns : 0)) * spill[i];
                }
                added = pending[f];
            }
            // (drawn only with a recording: the other cases keep the noise of their seeds)
            slow = recording_ns > 0 && switches(rng) ? !slow : slow;
            const bool stalled = stall_at && f == stall_at;
            const double recording =
                recording_ns * (1 + (slow ? recording_swing : -recording_swing)) +
                (stalled ? stall_recording_ns : 0) +
                (recording_jitter > 0 ? recording_ns * recording_jitter *
                                            std::uniform_real_distribution<double>(-1, 1)(rng)
                                      : 0);
            const double bare = base_at(f) * (1 + jitter(rng)) +
                                recording_in_frame * (recording - recording_ns) +
                                (stalled ? stall_ns - stall_recording_ns : 0);
            const double ns = bare + added;
            out.interval.push_back(ns);
            out.bare.push_back(bare);
            const uint64_t interval = f == 0 ? 0 : static_cast<uint64_t>(ns);
            const uint64_t reported = report_recording ? static_cast<uint64_t>(recording) : 0;
            out.frames.push_back(c.frame_ended(interval, workloads, reported));
            EXPECT_EQ(out.frames.back().measured, measured) << "frame " << f;
        }
        return out;
    }

    double base_at(uint32_t frame) const {
        return base_ns * (1 + drift * frame) * (step_at && frame >= step_at ? 1 + step : 1);
    }

    // The full cost over the budget, rounded up, plus one: the frames a rotation may take.
    uint32_t rotation_target() const {
        return static_cast<uint32_t>(std::ceil(workloads * unit_ns / base_ns / budget)) + 1;
    }
};

// Frames from `first` on whose `state` is measured: the share of the base each added.
inline std::vector<double> spends(const Loop& loop, const Loop::Result& r, size_t first) {
    std::vector<double> out;
    for (size_t f = first; f < r.frames.size(); ++f) {
        if (r.frames[f].state == BudgetState::measured) {
            const uint32_t measured = r.frames[f].measured;
            out.push_back((measured * loop.unit_ns + (measured ? loop.frame_ns : 0)) /
                          loop.base_at(static_cast<uint32_t>(f)));
        }
    }
    return out;
}

// The most frames between two measurements of one position, after frame `first`, in frames
// that were not baseline frames, and over all frames.
inline std::pair<uint32_t, uint32_t> longest_gaps(const Loop::Result& r, uint32_t first) {
    std::vector<BudgetState> states;
    for (const BudgetFrame& f : r.frames) {
        states.push_back(f.state);
    }
    const BudgetGaps gaps = timeline::longest_gaps(r.measured_in, states, first);
    EXPECT_EQ(gaps.never, 0u) << "a position never measured";
    return {gaps.rotation, gaps.any};
}

} // namespace vkscope::timeline::simulated
