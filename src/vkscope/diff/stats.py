"""The numbers behind a verdict: a robust centre and spread of per-frame GPU times, and the rule
that decides whether a difference between two captures is a change or noise."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

from ..capture.read.quantiles import Distribution

# Scales a median absolute deviation to the standard deviation it equals for normal data, so the
# noise figure reads like a sigma.
MAD_TO_SIGMA: Final = 1.4826

REGRESSION: Final = "regression"
IMPROVEMENT: Final = "improvement"
WITHIN_NOISE: Final = "within_noise"
TOO_FEW_FRAMES: Final = "too_few_frames"
UNTIMED: Final = "untimed"
# A value in one capture only (the other left it unmeasured: a cost budget's rotation that did
# not reach it, or its instruments' own reasons): nothing to compare it with.
ONE_SIDE: Final = "measured_in_one"
# Per-frame totals of a capture under a cost budget: each frame summed a different share of its
# workloads, so the totals say nothing about the frame (docs/budget.md).
BUDGETED: Final = "budgeted"
STATUSES: Final = (REGRESSION, IMPROVEMENT, WITHIN_NOISE, TOO_FEW_FRAMES, ONE_SIDE, UNTIMED)


def median(values: list[int] | list[float]) -> float:
    """Median of a list that is not empty; sorts it in place."""
    values.sort()
    n = len(values)
    mid = n // 2
    return float(values[mid]) if n % 2 else (values[mid - 1] + values[mid]) / 2.0


@dataclass(frozen=True, slots=True)
class Summary:
    """Per-frame GPU times of one workload (or one whole frame) in one capture."""

    samples: int  # frames with a time
    median_ns: float | None  # None without samples
    noise_ns: float | None  # MAD_TO_SIGMA * median absolute deviation; None without samples
    # The rest of their distribution (capture/read/quantiles.py; its p50 is median_ns).
    min_ns: float | None = None
    p90_ns: float | None = None
    p99_ns: float | None = None
    max_ns: float | None = None


NO_SAMPLES: Final = Summary(0, None, None)


def summarize(durations: list[int]) -> Summary:
    """Distribution and robust spread; reorders `durations`."""
    d = Distribution.of(durations)
    if d is None:
        return NO_SAMPLES
    if d.count == 1:  # common in captures of one frame: a million of these is seconds
        return Summary(1, d.p50, 0.0, d.min, d.p90, d.p99, d.max)
    spread = median([abs(x - d.p50) for x in durations])
    return Summary(d.count, d.p50, MAD_TO_SIGMA * spread, d.min, d.p90, d.p99, d.max)


@dataclass(frozen=True, slots=True)
class Rule:
    threshold_pct: float = 5.0  # a change must exceed this share of the base median...
    noise_k: float = 3.0  # ...and this many noise sigmas (the larger of the two captures')
    min_frames: int = 3  # timed frames each capture needs before anything is judged


@dataclass(frozen=True, slots=True)
class Verdict:
    status: str
    delta_ns: float | None  # new median - base median, when both have samples
    delta_pct: float | None  # relative to the base median (None when that is 0)
    bound_ns: float | None  # what |delta| had to exceed; None when not judged


def judge(base: Summary, new: Summary, rule: Rule) -> Verdict:
    if base.median_ns is None and new.median_ns is None:
        return Verdict(UNTIMED, None, None, None)
    if base.median_ns is None or new.median_ns is None:
        return Verdict(ONE_SIDE, None, None, None)
    delta = pct = None
    if base.median_ns is not None and new.median_ns is not None:
        delta = new.median_ns - base.median_ns
        pct = 100.0 * delta / base.median_ns if base.median_ns else None
    if delta is None or min(base.samples, new.samples) < rule.min_frames:
        return Verdict(TOO_FEW_FRAMES, delta, pct, None)
    assert base.median_ns is not None and base.noise_ns is not None and new.noise_ns is not None
    bound = max(
        rule.threshold_pct / 100.0 * base.median_ns, rule.noise_k * max(base.noise_ns, new.noise_ns)
    )
    if abs(delta) <= bound:
        return Verdict(WITHIN_NOISE, delta, pct, bound)
    return Verdict(REGRESSION if delta > 0 else IMPROVEMENT, delta, pct, bound)
