#pragma once
// The cost budget's controller (the `budget` setting, docs/budget.md): from each captured frame's
// time it estimates what the frame costs without instruments and what one measured workload adds
// to it, and plans how many workloads the next frame measures and which (a window over the
// frame's workloads in the order their recordings begin them, that moves on by its size every
// frame, so a repeating frame has every workload measured once per rotation).
//
// Estimates come from the frames' own times: the time between two frame ends, taken only where
// the frame and the one before it were alike (both measured, or both not), since what a frame's
// instruments cost the GPU may show in the next frame's time. What the application's own
// recording took in each frame (its command buffers' recording time, without what the
// instruments' calls took in it) is what no instrument changes, and where it scatters with the
// frame's time it is taken out of both: each time counts as its interval less the recording
// times the share of it that the baseline frames say the interval moves with. The frame without
// instruments is the median of the last *baseline* frames (runs of frames measured by nothing: at
// the start, then every ~24 frames at the end of a rotation, more often while the baseline is
// uncertain); what measuring adds is what the measured frames of the same span of frames took over
// it, trimmed of outliers, with its standard error (theirs and the baseline's).
//
// The plan holds that cost plus its error within the budget, counted per workload measured, so
// that a cost the frames' noise hides never licenses measuring more; the rotation is the fewest
// frames that measure every workload within what the budget holds, each frame its even share.
//
// Pure: no clock, no atomics, no Vulkan. One caller at a time (the device's Budget, under its
// lock), at each captured frame's end.

#include "protocol.gen.hpp"

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>

namespace vkscope::timeline {

using BudgetState = protocol::BudgetState; // warmup, baseline, measured

// The workloads a frame measures: positions [begin, begin + count) of the frame, modulo `period`
// (the workloads a frame had when it was planned). Packed into 64 bits, so that recording threads
// read it with one atomic load.
struct BudgetWindow {
    static constexpr uint32_t kMaxPositions = (1u << 21) - 1;
    uint32_t begin = 0;  // < period
    uint32_t count = 0;  // <= period
    uint32_t period = 0; // 0: nothing is measured

    bool measures(uint32_t position) const {
        if (count == 0) {
            return false;
        }
        if (count >= period) {
            return true;
        }
        // Positions past the period (a frame that grew) count on from its end, unwrapped.
        const uint32_t from = position >= begin ? position - begin : position + period - begin;
        return from < count;
    }
    // How many of `positions` workloads it measures.
    uint32_t measured(uint32_t positions) const;

    uint64_t pack() const {
        return uint64_t{begin} | (uint64_t{count} << 21) | (uint64_t{period} << 42);
    }
    static BudgetWindow unpack(uint64_t v) {
        return {static_cast<uint32_t>(v & kMaxPositions),
                static_cast<uint32_t>((v >> 21) & kMaxPositions),
                static_cast<uint32_t>((v >> 42) & kMaxPositions)};
    }
};

// What the controller saw in one frame and decided for the next: the FRAME message's `budget`.
struct BudgetFrame {
    BudgetState state = BudgetState::warmup;
    uint32_t workloads = 0;
    uint32_t measured = 0;
    uint64_t interval_ns = 0;
    uint64_t recording_ns = 0;
    bool sample = false;
    std::optional<uint64_t> base_ns;
    std::optional<double> unit_ns;
    std::optional<double> frame_ns;
    uint32_t rotation = 0;
    uint32_t next = 0;
    double recording_share = 0;
};

class BudgetController {
public:
    // Frames at the start that are no sample of anything (pipelines compile, caches fill).
    static constexpr uint32_t kWarmupFrames = 2;
    // Baseline frames in a row: at the start, and later each time the baseline is refreshed.
    static constexpr uint32_t kFirstBaselineRun = 10;
    static constexpr uint32_t kBaselineRun = 5;
    // Frames after a baseline run before the next one is due (at the end of a rotation).
    static constexpr uint32_t kRefreshFrames = 24;
    // ... and while the baseline's error is more than a quarter of the budget (too few samples
    // to plan by, or a frame time that scatters widely).
    static constexpr uint32_t kUncertainRefreshFrames = 4;
    // Frames after a baseline run before a baseline that the measured frames contradict (they
    // are faster) is taken again.
    static constexpr uint32_t kSuspectFrames = 16;
    static constexpr size_t kBaseSamples = 24;
    // Frames alike in a row before a frame's time is a sample: what a frame's instruments cost
    // the GPU shows over the next frames where the application runs ahead of it (on an H200,
    // what measuring added took three to four frames to show in full, and a frame to leave).
    static constexpr uint32_t kSettleFrames = 2;
    static constexpr size_t kUnitSamples = 256;
    // Samples of measured frames before the first estimate (the first and the last, by how far
    // they lie from it, are left out).
    static constexpr size_t kFewestUnitSamples = 5;
    // Standard errors of the estimated cost the plan adds to it.
    static constexpr double kErrors = 1.0;
    // Pairs of samples of consecutive frames before the frame's time is fitted against the
    // application's recording time, and the most of that time one frame's time may be taken to
    // move with: a slow recording state that slows the submit and the wait with it moves the
    // frame by more than the recording alone, but a share fitted far above that is the fit's
    // noise (on an H200 the runs that planned well fitted shares up to about one and a half; the
    // ones that planned worst sat at or above it).
    static constexpr size_t kRecordingFitPairs = 8;
    static constexpr double kMostRecordingShare = 1.5;

    // `budget`: the share of the frame without instruments that they may add (0.05 for 5%).
    // `frames_per_set`: frames one full measurement of a workload spans (performance queries'
    // passes, one a frame): a rotation of a length that shares a factor with it would measure a
    // workload in frames of the same passes only, so the rotation is lengthened to be coprime.
    explicit BudgetController(double budget, uint32_t frames_per_set = 1);

    // A captured frame ended `interval_ns` after the previous frame's end (0: the previous frame
    // was not captured, or there was none), having begun `positions` workloads, whose recordings
    // took the application `recording_ns` beside the instruments' own calls (0: not known).
    // Returns what the frame was and plans the next (window()). With `later`, the plan is made
    // from the estimates as they were before this frame's time, and estimate() is the caller's to
    // run before the next frame ends (off the application's thread: budget.hpp).
    enum class Estimate : uint8_t { now, later };
    BudgetFrame frame_ended(uint64_t interval_ns, uint32_t positions, uint64_t recording_ns = 0,
                            Estimate when = Estimate::now);
    // The estimates from every sample so far (frame_ended() runs it itself, unless told `later`).
    void estimate();
    // The estimates of `copy`, a copy of this controller that ran estimate() since, with no
    // frame_ended() here in between: what estimate() here would have made.
    void take_estimates(const BudgetController& copy);
    // The frame that ended was not captured: the next captured frame's time is no sample.
    void frame_skipped() {
        previous_ = BudgetState::warmup;
        alike_run_ = 0;
    }

    // The current frame's window.
    BudgetWindow window() const { return window_; }
    std::optional<uint64_t> base_ns() const { return e_.base_ns; }
    std::optional<double> unit_ns() const { return e_.unit_ns; }
    double frame_ns() const { return e_.frame_ns; }
    // The share of the application's recording time the frame's time is taken to move with.
    double recording_share() const { return e_.recording_share; }

private:
    struct BaseSample {
        uint64_t interval_ns = 0;
        uint64_t recording_ns = 0;
        uint64_t frame = 0; // frames_ when it was taken
    };
    struct UnitSample {
        uint64_t interval_ns = 0;
        uint64_t recording_ns = 0;
        double measured = 0; // workloads measured, averaged over the frame and the one before
        uint64_t frame = 0;
    };

    // e_.recording_share: how far the samples' times move with their recording times (the median
    // of the slopes between consecutive samples, each weighted by its recording's change up to
    // the median change), within [0, kMostRecordingShare]; 0 while they are too few or do not
    // vary.
    void fit_recording_share();
    // Workloads a frame may measure within the budget, from the estimates (0 without).
    double allowed() const;
    BudgetState plan(uint32_t positions, bool rotated);

    const double budget_;
    const uint32_t frames_per_set_;
    BudgetWindow window_;
    BudgetState state_ = BudgetState::warmup;    // of the current frame
    BudgetState previous_ = BudgetState::warmup; // of the frame before it
    uint32_t previous_count_ = 0;                // workloads the frame before it measured
    uint32_t alike_run_ = 0;      // frames in a row, up to the last, each alike to the one before
    uint64_t frames_ = 0;         // captured frames ended
    uint32_t baseline_left_ = 0;  // frames of the current baseline run after this
    uint64_t since_baseline_ = 0; // frames since the last baseline run
    double established_ = 0; // workloads a measured frame measures, on average (a share carries)
    double credit_ = 0;      // of a workload, carried to the next frame
    uint32_t held_ = kSettleFrames; // measured frames since the count last grew
    uint32_t rotation_ = 0;

    std::array<BaseSample, kBaseSamples> base_samples_{};
    size_t base_count_ = 0;
    std::array<UnitSample, kUnitSamples> unit_samples_{};
    size_t unit_count_ = 0;
    // What estimate() makes from the samples, and all it makes: take_estimates() copies it whole.
    struct Estimates {
        std::optional<uint64_t> base_ns;
        std::optional<double> unit_ns;
        // What measuring anything adds to a frame beside its workloads (0 until a fit says
        // more), and the last estimate per workload, trusted or not.
        double frame_ns = 0;
        double last_unit = 0;
        // What the plan counts per workload: the estimate plus its error, spread over the
        // workloads measured; 0 before the first estimate.
        double planned_unit_ns = 0;
        double base_error = 0; // the baseline's standard error
        double recording_share = 0;
        bool base_suspect = false;
    };
    Estimates e_;
};

} // namespace vkscope::timeline
