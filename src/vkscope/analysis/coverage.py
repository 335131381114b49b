"""What a report says of a capture taken under a cost budget (docs/budget.md): the budget's
controllers summed up, how many frames measured each workload identity, and which identities no
frame measured, and why. The rule of coverage is the read model's (capture/read/coverage.py);
this module only counts and lays it out."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any

from ..capture.read.coverage import BudgetSummary, IdentityCoverage
from .describe import duration_text


@dataclass(frozen=True, slots=True)
class CoverageCounts:
    """Identities of a capture: how many, how many some frame measured, in how many frames
    each, and the others by why."""

    identities: int = 0
    measured: int = 0
    frames_median: float | None = None  # frames that measured a measured identity (median)
    frames_min: int | None = None
    frames_max: int | None = None
    never: dict[str, int] = field(default_factory=dict)  # reason -> identities

    def as_json(self) -> dict[str, Any]:
        return {
            "identities": self.identities,
            "measured": self.measured,
            "frames_median": self.frames_median,
            "frames_min": self.frames_min,
            "frames_max": self.frames_max,
            "never_measured": [{"reason": r, "identities": n} for r, n in self.never.items()],
        }


def coverage_counts(items: Iterable[IdentityCoverage]) -> CoverageCounts:
    measured: list[int] = []
    never: dict[str, int] = {}
    total = 0
    for c in items:
        total += 1
        if c.measured:
            measured.append(c.measured)
        elif c.reason is not None:
            never[c.reason] = never.get(c.reason, 0) + 1
    measured.sort()
    n = len(measured)
    middle = None
    if n:
        middle = float(measured[n // 2]) if n % 2 else (measured[n // 2 - 1] + measured[n // 2]) / 2
    return CoverageCounts(
        identities=total,
        measured=n,
        frames_median=middle,
        frames_min=measured[0] if n else None,
        frames_max=measured[-1] if n else None,
        never=dict(sorted(never.items(), key=lambda kv: (-kv[1], kv[0]))),
    )


def _number(value: float | None) -> str:
    if value is None:
        return "?"
    return f"{value:,.0f}" if float(value).is_integer() else f"{value:,.1f}"


def budget_lines(budget: BudgetSummary, counts: CoverageCounts) -> list[tuple[str, str]]:
    """The report header's lines on the budget and the coverage it gave."""
    rotation = ""
    if budget.rotation_median:
        frames = "frame" if budget.rotation_median == 1 else "frames"
        rotation = f"; every workload once in {_number(budget.rotation_median)} {frames}"
    lines = [
        (
            "budget",
            f"{_number(budget.percent)}% of the frame without instruments: "
            f"{budget.measured_frames:,} frames measured a share of their workloads (median "
            f"{_number(budget.measured_median)} of {_number(budget.workloads_median)}{rotation}), "
            f"{budget.baseline_frames:,} measured none to time the frame without instruments, "
            f"{budget.warmup_frames:,} warming up",
        )
    ]
    if budget.base_ns is not None:
        estimate = f"frame without instruments {duration_text(budget.base_ns)}"
        if budget.unit_ns:
            estimate += f"; a measured workload adds {duration_text(round(budget.unit_ns))}"
        if budget.frame_ns:
            estimate += f", a frame that measures any {duration_text(round(budget.frame_ns))}"
        if budget.recording_share:
            estimate += (
                f"; the frame's time moves with the application's recording by "
                f"{budget.recording_share:.2f} times it, taken out of every comparison"
            )
        lines.append(("estimates", estimate))
    spread = ""
    if counts.frames_min is not None:
        spread = (
            f", each in {_number(counts.frames_median)} frames (median; "
            f"{counts.frames_min:,} to {counts.frames_max:,})"
        )
    lines.append((
        "coverage",
        f"{counts.measured:,} of {counts.identities:,} workload identities measured{spread}; "
        "an identity's values come from the frames that measured it",
    ))  # fmt: skip
    for reason, n in list(counts.never.items())[:3]:
        lines.append(("never measured", f"{n:,}: {reason}"))
    if len(counts.never) > 3:
        lines.append(("", f"… {len(counts.never) - 3} more reasons"))
    return lines


def identity_rows(items: Iterable[IdentityCoverage]) -> Iterator[tuple[Any, ...]]:
    """Rows of rows.IDENTITIES."""
    for c in items:
        i = c.identity
        yield (
            i.queue, i.type or "unknown", i.ordinal, i.label_path, c.frames, c.measured,
            c.left_out, c.median, c.reason,
        )  # fmt: skip
