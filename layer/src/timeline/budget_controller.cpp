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

BudgetFrame BudgetController::frame_ended(uint64_t interval_ns, uint32_t positions,
                                          uint64_t recording_ns, Estimate when) {
    positions = std::min(positions, BudgetWindow::kMaxPositions);
    BudgetFrame f;
    f.state = state_;
    f.workloads = positions;
    f.measured = state_ == BudgetState::measured ? window_.measured(positions) : 0;
    f.interval_ns = interval_ns;
    f.recording_ns = recording_ns;
    // What a frame's instruments cost may show in the next frames' times (the GPU's share, when
    // the application waits for a frame later): a time is a sample only after frames alike
    // (both baseline, or both measured and about as many: a count that grew shows its cost over
    // the next frames).
    const bool alike =
        interval_ns > 0 && frames_ > 0 && previous_ == state_ &&
        (state_ != BudgetState::measured ||
         (f.measured + previous_count_ > 0 &&
          std::max(f.measured, previous_count_) - std::min(f.measured, previous_count_) <=
              std::max(1u, std::max(f.measured, previous_count_) / 10)));
    // Where the application runs frames ahead of the GPU, a change shows over more than the next
    // frame (the GPU's backlog fills, or drains, over a few): a time is a sample only once the
    // kSettleFrames frames before it were alike too.
    alike_run_ = alike ? alike_run_ + 1 : 0;
    const bool settled = alike_run_ >= kSettleFrames;
    if (settled && state_ == BudgetState::baseline) {
        base_samples_[base_count_++ % kBaseSamples] = {interval_ns, recording_ns, frames_};
        f.sample = true;
    } else if (settled && state_ == BudgetState::measured) {
        const double measured = (f.measured + previous_count_) / 2.0;
        unit_samples_[unit_count_++ % kUnitSamples] = {interval_ns, recording_ns, measured,
                                                       frames_};
        f.sample = true;
    }
    if (when == Estimate::now) {
        estimate();
    }

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

    f.base_ns = e_.base_ns;
    f.unit_ns = e_.unit_ns;
    if (e_.unit_ns) {
        f.frame_ns = e_.frame_ns;
    }
    f.rotation = rotation_;
    f.recording_share = e_.recording_share;
    f.next = state_ == BudgetState::measured ? window_.measured(positions) : 0;
    return f;
}

void BudgetController::estimate() {
    const size_t bases = std::min(base_count_, kBaseSamples);
    if (bases == 0) {
        return;
    }
    std::array<double, kBaseSamples> b;
    uint64_t since = std::numeric_limits<uint64_t>::max();
    for (size_t i = 0; i < bases; ++i) {
        b[i] = static_cast<double>(base_samples_[i].interval_ns);
        since = std::min(since, base_samples_[i].frame);
    }
    // The budget is a share of the frame as the application sees it.
    e_.base_ns = static_cast<uint64_t>(median(b.data(), b.data() + bases));
    // Every comparison is of times less the share of the application's recording they move
    // with: what scatters with the recording (a slow state of the application's thread) then
    // leaves the baseline's error and the measured frames' scatter alike.
    fit_recording_share();
    const double share = e_.recording_share;
    const auto adjusted = [share](uint64_t interval, uint64_t recording) {
        return static_cast<double>(interval) - share * static_cast<double>(recording);
    };
    for (size_t i = 0; i < bases; ++i) {
        b[i] = adjusted(base_samples_[i].interval_ns, base_samples_[i].recording_ns);
    }
    const double base = median(b.data(), b.data() + bases);
    // The baseline's own uncertainty (a median's standard error, from the samples' median
    // absolute deviation): an error in it is an error in every frame's added time.
    for (size_t i = 0; i < bases; ++i) {
        b[i] = std::abs(b[i] - base);
    }
    const double base_error = 1.2533 * 1.4826 * median(b.data(), b.data() + bases) /
                              std::sqrt(static_cast<double>(bases));
    e_.base_error = base_error;

    // The measured frames compared with it are those of the same span of frames (the most
    // recent kFewestUnitSamples at least): a frame time that drifts (a GPU's clocks, the machine's
    // load) then drifts alike in both, where a baseline older than the measured frames would count
    // the drift as what measuring costs (or saves).
    //
    // What each added over the baseline, and its residual from the last estimate (the trim below
    // orders by it). (Scratch left uninitialised: zeroing it cost the application's thread more
    // than filling it.)
    struct Added {
        double added;
        double measured;
        double residual;
    };
    std::array<Added, kUnitSamples> sorted;
    const double last_unit = e_.last_unit;
    const double last_frame = e_.frame_ns;
    const size_t stored = std::min(unit_count_, kUnitSamples);
    size_t units = 0;
    for (size_t age = 0; age < stored; ++age) {
        const UnitSample& u = unit_samples_[(unit_count_ - 1 - age) % kUnitSamples];
        if (units >= kFewestUnitSamples && u.frame < since) {
            break;
        }
        const double added = adjusted(u.interval_ns, u.recording_ns) - base;
        sorted[units++] = {added, u.measured,
                           last_unit > 0 ? added - last_frame - last_unit * u.measured
                                         : added / u.measured};
    }
    e_.unit_ns.reset();
    e_.planned_unit_ns = 0;
    if (units < kFewestUnitSamples) {
        return;
    }
    // What the measured frames added over the baseline: a cost per frame that measures anything
    // (reading a submission's results back) and one per workload it measures, fitted by least
    // squares where the counts measured differ enough to tell them apart (a ramp, a rotation
    // that changed), the cost per frame kept from the last such fit otherwise. Without the fifth
    // of the frames furthest above the last estimate and the fifth furthest below (a hiccup of
    // the machine, a frame that lost a wait), and one each way at the least: the first estimate,
    // from a few frames, is what the plan starts from, and one frame that stalled for a few
    // milliseconds among them put a workload at hundreds of microseconds (on an H200's frames,
    // a count of none or one for hundreds of frames after).
    // (Two partial sorts, linear in the samples, where a sort would cost the application's
    // thread a few microseconds a frame; by a residual worked out once per sample, not once per
    // comparison, which took the most of the controller's time.)
    const auto by_residual = [](const Added& x, const Added& y) { return x.residual < y.residual; };
    const size_t trim = std::max<size_t>(units / 5, 1);
    const size_t kept = units - 2 * trim;
    const auto at = [&](size_t i) { return sorted.begin() + static_cast<std::ptrdiff_t>(i); };
    std::nth_element(at(0), at(trim), at(units), by_residual);
    std::nth_element(at(trim), at(trim + kept), at(units), by_residual);
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
    const bool fitted = spread >= std::max(1.0, 0.15 * mean_n) && sxy > 0;
    if (fitted) {
        e_.frame_ns = std::clamp(mean_a - sxy / sxx * mean_n, 0.0, std::max(0.0, mean_a));
    }
    const double unit = (added - e_.frame_ns * static_cast<double>(kept)) / measured;
    e_.last_unit = unit;
    // The standard error of what the frames add at the count they measured: the frames' scatter
    // around the fit over the samples, and the baseline's error, which no number of measured
    // frames averages away.
    double scatter = 0;
    for (const Added* x = first; x != last; ++x) {
        const double r = x->added - e_.frame_ns - unit * x->measured;
        scatter += r * r;
    }
    const double noise = std::sqrt(scatter / static_cast<double>(kept - 1));
    // (a trimmed sample's scatter understates the frames': the trim took its tails)
    const double from_noise = 1.5 * noise / std::sqrt(static_cast<double>(kept));
    const double error = std::sqrt(from_noise * from_noise + base_error * base_error);
    if (unit > 0) {
        e_.unit_ns = unit;
    }
    // The plan holds what the frames added at the counts they measured, plus its error, within
    // the budget, counted per workload measured: a cost the frames' noise hides may be as large
    // as the noise, and a count grown until the cost shows above the noise has long spent more
    // than the budget. Not the fit's cost per frame and per workload: where the counts vary
    // little the two trade against each other from sample to sample, and a plan extrapolated
    // from them swings with the noise. Counted per workload, a cost per frame makes more
    // workloads look dearer than they are: the count then grows to the budget by steps, each
    // from what the frames at the counts before cost, never past it.
    //
    // Counted at the count the frames measure now where that grew past the samples' mean (a
    // ramp, a count that grows by steps): the samples span a few hundred frames, and their mean
    // count lags the count by as long, so that what a cost per frame makes each workload cost
    // at the mean held the count down for as long (with a cost per frame of half the budget,
    // one or two workloads a frame for hundreds of frames). The fit's line gives the cost there,
    // within the counts measured (never past the largest), with its error at that distance from
    // the mean.
    double count = mean_n;
    double cost = std::max(mean_a, 0.0);
    double cost_error = error;
    if (fitted && established_ > mean_n) {
        double most_measured = 0;
        for (const Added* x = first; x != last; ++x) {
            most_measured = std::max(most_measured, x->measured);
        }
        count = std::min(established_, most_measured);
        const double d = count - mean_n;
        cost = std::max(0.0, mean_a + sxy / sxx * d);
        // (twice the margin of the frames' mean: a line fitted through noisy frames is less
        // sure away from its mean than their scatter says, and a count planned on a slope that
        // the noise made too flat costs every frame that measures it)
        const double from_fit =
            3.0 * noise * std::sqrt(1.0 / static_cast<double>(kept) + d * d / sxx);
        cost_error = std::sqrt(from_fit * from_fit + base_error * base_error);
    }
    e_.planned_unit_ns = (cost + kErrors * cost_error) / count;
    // Measured frames that are clearly faster than the baseline say the baseline is wrong (taken
    // while the application was still warming up, or the scene changed since): it is taken
    // again (plan()).
    e_.base_suspect = mean_a < -2 * error;
}

void BudgetController::take_estimates(const BudgetController& copy) {
    e_ = copy.e_;
}

void BudgetController::fit_recording_share() {
    // From the change between two samples of consecutive frames alike (both baseline, or both
    // measured with counts a workload apart at most, that workload's cost taken off): what the
    // instruments cost is then the same on both sides, so the change in the frame's time is what
    // the change in its recording moved it by, and the measured frames, far more than the
    // baseline ones, make the fit within a few frames of a change of the recording's state.
    struct RecordingChange {
        double recording;
        double interval;
    };
    // (scratch left uninitialised, as estimate()'s)
    std::array<RecordingChange, kBaseSamples + kUnitSamples> changes;
    size_t pairs = 0;
    size_t n = 0; // of them, those whose recording changed
    const auto add = [&](uint64_t interval, uint64_t recording, uint64_t interval_before,
                         uint64_t recording_before, double instruments) {
        if (recording == 0 || recording_before == 0) {
            return; // not known
        }
        ++pairs;
        if (recording == recording_before) {
            return; // (the same recording explains nothing either way)
        }
        changes[n++] = {static_cast<double>(recording) - static_cast<double>(recording_before),
                        static_cast<double>(interval) - static_cast<double>(interval_before) -
                            instruments};
    };
    const size_t bases = std::min(base_count_, kBaseSamples);
    for (size_t age = 1; age < bases; ++age) {
        const BaseSample& s = base_samples_[(base_count_ - age) % kBaseSamples];
        const BaseSample& before = base_samples_[(base_count_ - age - 1) % kBaseSamples];
        if (s.frame == before.frame + 1) {
            add(s.interval_ns, s.recording_ns, before.interval_ns, before.recording_ns, 0);
        }
    }
    const size_t units = std::min(unit_count_, kUnitSamples);
    for (size_t age = 1; age < units; ++age) {
        const UnitSample& s = unit_samples_[(unit_count_ - age) % kUnitSamples];
        const UnitSample& before = unit_samples_[(unit_count_ - age - 1) % kUnitSamples];
        if (s.frame == before.frame + 1 && std::abs(s.measured - before.measured) <= 1) {
            add(s.interval_ns, s.recording_ns, before.interval_ns, before.recording_ns,
                e_.last_unit * (s.measured - before.measured));
        }
    }
    e_.recording_share = 0.0;
    if (pairs < kRecordingFitPairs || n == 0) {
        return;
    }
    // The median of the pairs' slopes, each weighted by how much its recording changed up to the
    // median change, not a least-squares line. A frame in which the machine stalled (its
    // recording slowed by a millisecond, its time by nearly three) gives two pairs whose change
    // outweighs dozens of changes of the recording's state together in a line's fit, and held
    // its slope at the bound for as long as they stayed among the samples (on an H200, counts of
    // one or two workloads a frame for three hundred frames); weighted as any other large change
    // they are two slopes among many. A pair whose recording hardly changed says little of the
    // slope (its slope is mostly the frame's noise over a small change), and weighs as little.
    // (Where the frame's time swings from one frame to the next and the recording moves a little
    // the same way, those many small changes outweigh the few large ones all the same, and the
    // share sits at its bound: one H200 run in eighteen, docs/budget-history.md.)
    const size_t half = n / 2;
    std::nth_element(changes.begin(), changes.begin() + static_cast<std::ptrdiff_t>(half),
                     changes.begin() + static_cast<std::ptrdiff_t>(n),
                     [](const RecordingChange& x, const RecordingChange& y) {
                         return std::abs(x.recording) < std::abs(y.recording);
                     });
    const double most_weight = std::abs(changes[half].recording);
    struct Slope {
        double slope;
        double weight;
    };
    std::array<Slope, kBaseSamples + kUnitSamples> slopes;
    double total = 0;
    for (size_t k = 0; k < n; ++k) {
        const double weight = std::min(std::abs(changes[k].recording), most_weight);
        slopes[k] = {changes[k].interval / changes[k].recording, weight};
        total += weight;
    }
    // (sorted here, off the application's thread but for frame ends back to back: a few
    // hundred pairs at the most)
    std::sort(slopes.begin(), slopes.begin() + static_cast<std::ptrdiff_t>(n),
              [](const Slope& x, const Slope& y) { return x.slope < y.slope; });
    double below = 0;
    size_t k = 0;
    while (k + 1 < n && below + slopes[k].weight < total / 2) {
        below += slopes[k++].weight;
    }
    e_.recording_share = std::clamp(slopes[k].slope, 0.0, kMostRecordingShare);
}

double BudgetController::allowed() const {
    if (!e_.base_ns || e_.planned_unit_ns <= 0) {
        return 0;
    }
    // Below one workload, the share of frames that measure one and average to the budget.
    return budget_ * static_cast<double>(*e_.base_ns) / e_.planned_unit_ns;
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
    // More often while the samples are too few for the budget (a first baseline off by chance
    // would hold the count down, or up, for a long while): once there are as many as are kept,
    // more would only make the span they cover shorter, not their error smaller.
    const bool uncertain = e_.base_ns && base_count_ < kBaseSamples &&
                           e_.base_error > budget_ * static_cast<double>(*e_.base_ns) / 4;
    const uint32_t refresh = uncertain ? kUncertainRefreshFrames : kRefreshFrames;
    const bool due = since_baseline_ >= refresh && (rotated || since_baseline_ >= 2 * refresh);
    const bool wrong = e_.base_suspect && since_baseline_ >= kSuspectFrames &&
                       (rotated || since_baseline_ >= 2 * kSuspectFrames);
    if (wrong) {
        // Only the baseline is taken again: the measured frames' samples are times as they were,
        // compared with whichever baseline is current, and the count they planned holds until
        // the new baseline plans another. (Starting over from the ramp's first count, a run
        // whose measured frames kept reading faster than its baseline frames measured a few
        // workloads a frame for the whole capture.)
        base_count_ = 0;
        e_.base_ns.reset();
        e_.base_suspect = false;
    }
    if (!e_.base_ns || due) {
        baseline_left_ = (e_.base_ns ? kBaselineRun : kFirstBaselineRun) - 1;
        since_baseline_ = 0;
        return nothing(BudgetState::baseline);
    }
    ++since_baseline_;
    if (positions == 0) {
        return nothing(BudgetState::measured);
    }
    // What the budget holds, as far as the estimates know (their cost plus its error); before the
    // first estimate, the ramp's first count: a 64th of the frame.
    const double first = std::max(1.0, positions / 64.0);
    double wanted = e_.planned_unit_ns > 0 ? allowed() : first;
    // The rotation: the fewest frames that measure every workload within what the budget holds;
    // each of them then measures its even share of the frame (half a workload more, so that the
    // counts, rounded down, still add up to the whole frame within the rotation), never more
    // than the budget holds. With VK_KHR_performance_query it is lengthened to be coprime with
    // the passes. Below one workload a frame, the share of frames that measure one (credit_).
    if (wanted >= 1 && wanted < positions) {
        auto rotation = static_cast<uint32_t>(std::ceil(positions / wanted));
        while (frames_per_set_ > 1 && rotation > 1 && std::gcd(rotation, frames_per_set_) != 1) {
            ++rotation;
        }
        wanted = std::min(wanted, (positions + 0.5) / rotation);
    }
    // The count grows by at most half again per frame once the cost is estimated: an estimate
    // from a few frames may be far off, and a frame that measures too much costs in full.
    const double most = established_ > 0 && e_.planned_unit_ns > 0 ? established_ * 1.5 : first;
    const double next = std::min({wanted, std::max(most, first), static_cast<double>(positions)});
    // A count that grows holds for kSettleFrames frames first, so that frames enough in a row
    // measure it for their time to be a sample of what that count costs.
    const bool grows = next > established_ + 1;
    const bool may_grow = held_ >= kSettleFrames;
    if (!grows || may_grow) {
        established_ = next;
    }
    held_ = grows && may_grow ? 0 : held_ + 1;
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
