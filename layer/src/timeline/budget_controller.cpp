#include "timeline/budget_controller.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>

namespace vkscope::timeline {
namespace {

template <typename T> T median(T* first, T* last) {
    const auto n = static_cast<size_t>(last - first);
    T* mid = first + n / 2;
    std::nth_element(first, mid, last);
    if (n % 2) {
        return *mid;
    }
    return (*std::max_element(first, mid) + *mid) / 2;
}

} // namespace

uint32_t BudgetWindow::measured(uint32_t positions) const {
    if (count == 0 || positions == 0) {
        return 0;
    }
    if (count >= period) {
        return positions;
    }
    // [begin, begin + count) over positions counted on past the period, and its part that wraps
    // to the frame's start.
    const uint64_t end = uint64_t{begin} + count;
    const uint64_t straight =
        end <= positions ? count : (positions > begin ? positions - begin : 0);
    const uint64_t wrapped = end > period ? std::min<uint64_t>(end - period, positions) : 0;
    return static_cast<uint32_t>(straight + wrapped);
}

BudgetController::BudgetController(double budget, uint32_t frames_per_set)
    : budget_(std::max(0.0, budget)), frames_per_set_(std::max(1u, frames_per_set)) {
    // Nothing is ever measured without a budget: every frame is a baseline frame.
    state_ = budget_ > 0 ? BudgetState::warmup : BudgetState::baseline;
}

BudgetFrame BudgetController::frame_ended(uint64_t interval_ns, uint32_t positions) {
    positions = std::min(positions, BudgetWindow::kMaxPositions);
    BudgetFrame f;
    f.state = state_;
    f.workloads = positions;
    f.measured = state_ == BudgetState::measured ? window_.measured(positions) : 0;
    f.interval_ns = interval_ns;
    // What a frame's instruments cost may show in the next frame's time (the GPU's share, when
    // the application waits for a frame later): a time is a sample only after a frame alike.
    const bool alike = interval_ns > 0 && frames_ > 0 && previous_ == state_;
    if (alike && state_ == BudgetState::baseline) {
        base_samples_[base_count_++ % kBaseSamples] = interval_ns;
        f.sample = true;
    } else if (alike && state_ == BudgetState::measured && f.measured + previous_count_ > 0 &&
               std::max(f.measured, previous_count_) - std::min(f.measured, previous_count_) <=
                   std::max(1u, std::max(f.measured, previous_count_) / 10)) {
        // (and measured about as many: a count that just grew shows its cost over two frames)
        const double measured = (f.measured + previous_count_) / 2.0;
        unit_samples_[unit_count_++ % kUnitSamples] = {interval_ns, measured};
        f.sample = true;
    }
    estimate();

    // The rotation moves on by what this frame measured; it has gone round once its window
    // reached the end of the frame.
    bool rotated = false;
    if (state_ == BudgetState::measured && window_.count > 0 && window_.period > 0) {
        const uint64_t end = uint64_t{window_.begin} + window_.count;
        rotated = end >= window_.period;
        window_.begin = static_cast<uint32_t>(end % window_.period);
    }
    if (positions > 0 && window_.begin >= positions) {
        window_.begin %= positions;
    }
    previous_ = state_;
    previous_count_ = f.measured;
    ++frames_;
    state_ = plan(positions, rotated);

    f.base_ns = base_ns_;
    f.unit_ns = unit_ns_;
    if (unit_ns_) {
        f.frame_ns = frame_ns_;
    }
    f.rotation = rotation_;
    f.next = state_ == BudgetState::measured ? window_.measured(positions) : 0;
    return f;
}

void BudgetController::estimate() {
    const size_t bases = std::min(base_count_, kBaseSamples);
    if (bases == 0) {
        return;
    }
    std::array<double, kBaseSamples> b{};
    for (size_t i = 0; i < bases; ++i) {
        b[i] = static_cast<double>(base_samples_[i]);
    }
    const double base = median(b.data(), b.data() + bases);
    base_ns_ = static_cast<uint64_t>(base);
    // The baseline's own uncertainty (a median's standard error, from the samples' median
    // absolute deviation): an error in it is an error in every frame's added time.
    for (size_t i = 0; i < bases; ++i) {
        b[i] = std::abs(b[i] - base);
    }
    const double base_error = 1.2533 * 1.4826 * median(b.data(), b.data() + bases) /
                              std::sqrt(static_cast<double>(bases));

    const size_t units = std::min(unit_count_, kUnitSamples);
    unit_ns_.reset();
    if (units < 3) {
        return;
    }
    // What the measured frames added over the baseline: a cost per frame that measures anything
    // (reading a submission's results back) and one per workload it measures, fitted by least
    // squares where the counts measured differ enough to tell them apart (a ramp, a rotation
    // that changed), the cost per frame kept from the last such fit otherwise. Without the fifth
    // of the frames furthest above the last estimate and the fifth furthest below (a hiccup of
    // the machine, a frame that lost a wait).
    struct Added {
        double added;
        double measured;
    };
    std::array<Added, kUnitSamples> sorted{};
    for (size_t i = 0; i < units; ++i) {
        sorted[i] = {static_cast<double>(unit_samples_[i].interval_ns) - base,
                     unit_samples_[i].measured};
    }
    const double last_unit = last_unit_;
    const double last_frame = frame_ns_;
    const auto residual = [&](const Added& x) {
        return last_unit > 0 ? x.added - last_frame - last_unit * x.measured : x.added / x.measured;
    };
    std::sort(sorted.begin(), sorted.begin() + static_cast<std::ptrdiff_t>(units),
              [&](const Added& x, const Added& y) { return residual(x) < residual(y); });
    const size_t trim = units / 5;
    const size_t kept = units - 2 * trim;
    const Added* first = sorted.data() + trim;
    const Added* last = first + kept;
    double added = 0;
    double measured = 0;
    for (const Added* x = first; x != last; ++x) {
        added += x->added;
        measured += x->measured;
    }
    const double mean_n = measured / static_cast<double>(kept);
    const double mean_a = added / static_cast<double>(kept);
    double sxx = 0;
    double sxy = 0;
    for (const Added* x = first; x != last; ++x) {
        sxx += (x->measured - mean_n) * (x->measured - mean_n);
        sxy += (x->measured - mean_n) * (x->added - mean_a);
    }
    const double spread = std::sqrt(sxx / static_cast<double>(kept));
    if (spread >= std::max(1.0, 0.15 * mean_n) && sxy > 0) {
        frame_ns_ = std::max(0.0, mean_a - sxy / sxx * mean_n);
    }
    const double unit = (added - frame_ns_ * static_cast<double>(kept)) / measured;
    last_unit_ = unit;
    // Its standard error, from the frames' scatter around the fit and the baseline's error.
    double scatter = 0;
    for (const Added* x = first; x != last; ++x) {
        const double r = x->added - frame_ns_ - unit * x->measured;
        scatter += r * r;
    }
    const double noise = std::sqrt(scatter / static_cast<double>(kept - 1));
    const double from_noise = noise * std::sqrt(static_cast<double>(kept)) / measured;
    const double from_base = base_error * static_cast<double>(kept) / measured;
    const double error = std::sqrt(from_noise * from_noise + from_base * from_base);
    // A cost the frames' noise hides is no estimate: while it is hidden, the count grows (as
    // when nothing is known yet) until the cost shows, or every workload is measured (a cost
    // that never shows adds nothing to the frame a user could see either).
    if (unit > 2 * error) {
        unit_ns_ = unit;
    }
    // Measured frames that are clearly faster than the baseline say the baseline is wrong (taken
    // while the application was still warming up, or the scene changed since): it is taken
    // again, from scratch.
    base_suspect_ = unit + frame_ns_ / mean_n < -2 * error;
}

double BudgetController::allowed() const {
    if (!base_ns_ || !unit_ns_ || *unit_ns_ <= 0) {
        return std::numeric_limits<double>::infinity();
    }
    const double budget = budget_ * static_cast<double>(*base_ns_);
    // One workload costs its own and the frame's: below that, the share of frames that measure
    // one and average to the budget.
    if (frame_ns_ + *unit_ns_ >= budget) {
        return budget / (frame_ns_ + *unit_ns_);
    }
    return (budget - frame_ns_) / *unit_ns_;
}

uint32_t BudgetController::rotation(uint32_t positions) const {
    if (!base_ns_ || !unit_ns_ || *base_ns_ == 0) {
        return 0;
    }
    // What measuring every workload would add, as a share of the frame without instruments.
    const double full =
        (frame_ns_ + positions * std::max(0.0, *unit_ns_)) / static_cast<double>(*base_ns_);
    const double frames = std::ceil(full / budget_ + 0.5);
    auto rotation =
        static_cast<uint32_t>(std::clamp(frames, 1.0, double{BudgetWindow::kMaxPositions}));
    // A rotation of one frame measures everything in every frame, every set with it.
    while (rotation > 1 && std::gcd(rotation, frames_per_set_) != 1) {
        ++rotation;
    }
    return rotation;
}

BudgetState BudgetController::plan(uint32_t positions, bool rotated) {
    const auto nothing = [this](BudgetState state) {
        window_.count = 0;
        rotation_ = 0;
        return state;
    };
    if (budget_ <= 0) {
        return nothing(BudgetState::baseline);
    }
    if (frames_ < kWarmupFrames) {
        return nothing(BudgetState::warmup);
    }
    if (baseline_left_ > 0) {
        --baseline_left_;
        return nothing(BudgetState::baseline);
    }
    // A baseline run: at the start, and once the last is old, where a rotation ends (so that no
    // workload waits for it), or anywhere once it is twice as old.
    const bool due =
        since_baseline_ >= kRefreshFrames && (rotated || since_baseline_ >= 2 * kRefreshFrames);
    const bool wrong = base_suspect_ && since_baseline_ >= kSuspectFrames &&
                       (rotated || since_baseline_ >= 2 * kSuspectFrames);
    if (wrong) {
        base_count_ = 0;
        unit_count_ = 0;
        base_ns_.reset();
        unit_ns_.reset();
        frame_ns_ = 0;
        last_unit_ = 0;
        base_suspect_ = false;
    }
    if (!base_ns_ || due) {
        baseline_left_ = (base_ns_ ? kBaselineRun : kFirstBaselineRun) - 1;
        since_baseline_ = 0;
        return nothing(BudgetState::baseline);
    }
    ++since_baseline_;
    if (positions == 0) {
        return nothing(BudgetState::measured);
    }
    const uint32_t frames = rotation(positions);
    // Unknown cost per workload: as many as the ramp allows. Known: the frames' share of the
    // rotation (half a workload more: their counts, rounded down, still add up to the whole frame
    // within it), or 90% of what the budget holds where that is more. The estimate is what a
    // measured workload adds at the count measured now, so a cost per frame rather than per
    // workload (reading a submission's results back) reads as a cost per workload that shrinks
    // as the count grows: aiming at 90% of it lets the count grow until the frame's real cost
    // nears the budget, where the rotation's share alone would stop short.
    double wanted = positions;
    if (frames) {
        wanted = std::max((positions + 0.5) / frames, 0.9 * allowed());
        uint32_t rotation = static_cast<uint32_t>(std::ceil(positions / wanted));
        if (frames_per_set_ > 1 && rotation > 1 && std::gcd(rotation, frames_per_set_) != 1) {
            while (std::gcd(rotation, frames_per_set_) != 1) {
                ++rotation;
            }
            wanted = (positions + 0.5) / rotation;
        }
    }
    // The count grows by at most half again per frame, from a 64th of the frame: an estimate
    // from a few frames may be far off, and a frame that measures too much costs in full.
    const double most = established_ > 0 ? established_ * 1.5 : std::max(1.0, positions / 64.0);
    // And on average never more than the budget holds, as far as the estimates know (a frame
    // that rounds its share of a workload up measures one more). Below one workload, a frame
    // measures one or none, in the share that averages to the budget (those that measure one go
    // over it: measuring anything costs a frame more than the budget).
    const double next = std::min({wanted, most, allowed(), static_cast<double>(positions)});
    // A count that grows holds for a frame first, so that two frames in a row measure it and
    // their time is a sample of what that count costs.
    const bool grows = next > established_ + 1;
    if (!grows || !grew_) {
        established_ = next;
    }
    grew_ = grows && !grew_;
    // A share of a workload is carried to the next frame: a frame of 200 workloads that may
    // measure 1.5 a frame measures one, then two.
    credit_ = std::min(credit_ + established_, established_ + 1);
    const auto count = static_cast<uint32_t>(credit_);
    credit_ -= count;
    rotation_ = static_cast<uint32_t>(std::ceil(positions / established_));
    window_.count = count;
    window_.period = positions;
    return BudgetState::measured;
}

} // namespace vkscope::timeline
