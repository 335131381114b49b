"""The timer's floor of a device, from the ticks its DEVICE message carries (`timer_floor`): per
queue family, the back-to-back timestamps and the empty workloads summed up in nanoseconds, as
the `timer_floors` table stores them (docs/timing.md, "The timer's floor")."""

from __future__ import annotations

import statistics
from collections.abc import Iterator, Sequence
from typing import Any

from ... import protocol as m


def _spread(ticks: Sequence[int], period_ns: float) -> tuple[float | None, ...]:
    """min, median and max of `ticks` in nanoseconds; NULLs when there are none."""
    if not ticks:
        return (None, None, None)
    return (
        min(ticks) * period_ns,
        float(statistics.median(ticks)) * period_ns,
        max(ticks) * period_ns,
    )


def floor_rows(
    process: int, device: int, period_ns: float | None, floors: Sequence[m.TimerFloor]
) -> Iterator[tuple[Any, ...]]:
    """Rows of `timer_floors` for one device. Without a period (a DEVICE that gave none), the
    ticks cannot become time: the row says so instead."""
    for f in floors:
        reason = f.reason
        measured = bool(f.back_to_back or f.empty)
        if measured and not period_ns:
            reason = reason or "the device gave no timestamp period"
        usable = period_ns if measured and period_ns else 0.0
        b2b = _spread(f.back_to_back, usable) if usable else (None, None, None)
        empty = _spread(f.empty, usable) if usable else (None, None, None)
        samples = min(len(f.back_to_back), len(f.empty)) if usable else 0
        yield (process, device, f.family, period_ns, samples, *b2b, *empty, reason)
