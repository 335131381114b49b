"""Coverage under a cost budget: in how many frames each workload identity was measured, and why
an identity never was. The one rule every reader applies (docs/budget.md).

With `vkscope run --budget P%` each captured frame measures a rotating share of its workloads,
and the instruments leave the others with their `budget` reason (timing: "left out of this frame
by the cost budget"; counters: `budget`). A workload identity's values (identity.py) therefore
come from the frames that measured it, and every reader says how many those were. An instance is
*measured* when some instrument gave it a value: a usable timing (`ok`) or counters; it is *left
out* when the budget's reason says so.

An identity measured in no frame gets one reason, in this order:

- `seen in one frame only`: it ran in one frame, and the budget left it out there (a frame whose
  workloads change from frame to frame: nothing repeats for a rotation to come back to);
- `budget 0%: nothing is measured`;
- `not reached by the budget's rotation in the frames it ran in`: it ran in several frames and
  the rotation did not come to it (a capture shorter than a rotation, or a budget too small for
  the frame);
- otherwise what its instances themselves say (the most common reason among them), or `no
  instrument measured it` for a capture without timing or counters.

Without a budget every instance is left to its instruments, and the same counts read as how many
frames gave each identity a value.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Final

import msgspec

from .identity import WorkloadIdentity, labels_of
from .left_out import COUNTERS_REASON_SQL, LEFT_OUT_SQL
from .queries import GPU_NS, coverage_stream
from .reader import Capture
from .records import BudgetFrame

SEEN_ONCE: Final = "seen in one frame only"
BUDGET_ZERO: Final = "budget 0%: nothing is measured"
NOT_REACHED: Final = "not reached by the budget's rotation in the frames it ran in"
NO_INSTRUMENT: Final = "no instrument measured it"

MEASURED_SQL: Final = "(i.timing = 'ok' OR json_type(i.annex, '$.counters') = 'object')"
REASON_SQL: Final = f"coalesce(i.timing_reason, {COUNTERS_REASON_SQL})"


class IdentityCoverage(msgspec.Struct, frozen=True, gc=False):
    """One workload identity over a capture: the frames it ran in, those that measured it, and
    its value over those (its median: GPU time, or the counter asked for)."""

    identity: WorkloadIdentity
    frames: int  # frames it ran in (one instance each)
    measured: int  # of them, the frames that gave it a value
    left_out: int  # of them, the frames the budget left it out of
    median: float | None  # of its value over the frames that gave one; None without
    reason: str | None  # why it was never measured; None when it was

    def as_json(self) -> dict[str, object]:
        return {
            "queue": self.identity.queue,
            "labels": list(self.identity.labels),
            "type": self.identity.type,
            "ordinal": self.identity.ordinal,
            "frames": self.frames,
            "measured": self.measured,
            "left_out": self.left_out,
            "median": self.median,
            "reason": self.reason,
        }


def never_measured(frames: int, left_out: int, other: str | None, budget: float | None) -> str:
    """Why an identity that ran in `frames` frames, `left_out` of them left out by the budget,
    was measured in none (`other`: what its other instances say)."""
    if left_out and left_out == frames:
        if frames == 1:
            return SEEN_ONCE
        if budget == 0:
            return BUDGET_ZERO
        return NOT_REACHED
    return other or NO_INSTRUMENT


def identity_coverage(capture: Capture, value: str = GPU_NS) -> Iterator[IdentityCoverage]:
    """Every identity of the capture, sorted (identity.ORDER_SQL), with its coverage and the
    median of `value` over the frames that measured it. Streamed: one identity at a time."""
    budget = capture.budget_percent()
    rows = coverage_stream(capture, value, MEASURED_SQL, LEFT_OUT_SQL, REASON_SQL)
    current: tuple[str, str, str, int] | None = None
    values: list[float] = []
    frames = measured = left_out = 0
    reasons: dict[str, int] = {}

    def finish(key: tuple[str, str, str, int]) -> IdentityCoverage:
        identity = WorkloadIdentity(key[0], labels_of(key[1]), key[2] or None, key[3])
        reason = None
        if not measured:
            other = max(reasons, key=lambda r: (reasons[r], r)) if reasons else None
            reason = never_measured(frames, left_out, other, budget)
        return IdentityCoverage(
            identity, frames, measured, left_out, _median(values) if values else None, reason
        )

    for queue_key, labels_json, type_text, ordinal, v, is_measured, is_left_out, why in rows:
        key = (queue_key, labels_json, type_text, ordinal)
        if key != current:
            if current is not None:
                yield finish(current)
            current, values, frames, measured, left_out, reasons = key, [], 0, 0, 0, {}
        frames += 1
        if is_measured:
            measured += 1
            if v is not None:
                values.append(v)
        elif is_left_out:
            left_out += 1
        elif why is not None:
            reasons[why] = reasons.get(why, 0) + 1
    if current is not None:
        yield finish(current)


def _median(values: list[float]) -> float:
    values.sort()
    n = len(values)
    return float(values[n // 2]) if n % 2 else (values[n // 2 - 1] + values[n // 2]) / 2.0


@dataclass(frozen=True, slots=True)
class BudgetSummary:
    """A budgeted capture's controllers, frame by frame summed up."""

    percent: float
    frames: int  # captured frames a controller said something of
    measured_frames: int  # of them, frames that measured a share
    baseline_frames: int  # measured nothing, to time the frame without instruments
    warmup_frames: int
    measured_median: float | None  # workloads a measured frame measured (median)
    workloads_median: float | None  # workloads a frame began (median)
    rotation_median: float | None  # frames a rotation took (median over measured frames)
    base_ns: int | None  # the last estimate of the frame without instruments
    unit_ns: float | None  # the last estimate of what one measured workload adds
    frame_ns: float | None  # and of what measuring anything adds to a frame beside them
    # the share of the application's recording time taken out of the frames' times it compared
    recording_share: float | None = None

    def as_json(self) -> dict[str, object]:
        return {
            "percent": self.percent,
            "frames": self.frames,
            "measured_frames": self.measured_frames,
            "baseline_frames": self.baseline_frames,
            "warmup_frames": self.warmup_frames,
            "measured_median": self.measured_median,
            "workloads_median": self.workloads_median,
            "rotation_median": self.rotation_median,
            "base_ns": self.base_ns,
            "unit_ns": self.unit_ns,
            "frame_ns": self.frame_ns,
            "recording_share": self.recording_share,
        }


def budget_summary(capture: Capture) -> BudgetSummary | None:
    """The capture's budget and what its controllers did; None for a capture without one."""
    percent = capture.budget_percent()
    if percent is None:
        return None
    frames = capture.budget_frames()
    return summarize_budget(percent, frames)


def summarize_budget(percent: float, frames: list[BudgetFrame]) -> BudgetSummary:
    measured = [f for f in frames if f.state == "measured"]
    last = next((f for f in reversed(frames) if f.base_ns is not None), None)
    last_unit = next((f for f in reversed(frames) if f.unit_ns is not None), None)
    return BudgetSummary(
        percent=percent,
        frames=len(frames),
        measured_frames=len(measured),
        baseline_frames=sum(f.state == "baseline" for f in frames),
        warmup_frames=sum(f.state == "warmup" for f in frames),
        measured_median=_median([float(f.measured) for f in measured]) if measured else None,
        workloads_median=_median([float(f.workloads) for f in frames]) if frames else None,
        rotation_median=_median([float(f.rotation) for f in measured]) if measured else None,
        base_ns=last.base_ns if last else None,
        unit_ns=last_unit.unit_ns if last_unit else None,
        frame_ns=last_unit.frame_ns if last_unit else None,
        recording_share=last.recording_share if last else None,
    )
