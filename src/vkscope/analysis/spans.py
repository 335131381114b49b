"""How one queue's GPU time was spent within a frame: costs, busy span and idle gaps.

Works on the (begin, end) intervals of the timed workloads, on the device's clock. The sum of
costs counts overlapped time once per workload; the busy time (the union of the intervals)
counts it once, so their difference is the time during which workloads overlapped. The busy
span runs from the first begin to the last end; what of it no workload covers is idle, made of
gaps. Intervals are taken one at a time in order of their begin, so a queue of any length is
measured in constant memory (capture/read/queries.py has SQLite sort them).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

Interval = tuple[int, int]


@dataclass(frozen=True, slots=True)
class Span:
    workloads: int  # every workload, timed or not
    timed: int  # those with a usable (begin, end): both known, end not before begin
    sum_ns: int  # sum of the timed workloads' GPU times
    begin_ns: int | None  # first begin; None when nothing is timed
    end_ns: int | None  # last end
    busy_ns: int  # time covered by at least one workload
    gaps: int  # idle intervals inside the span
    idle_ns: int  # their total
    largest_gap_ns: int

    @property
    def span_ns(self) -> int | None:
        if self.begin_ns is None or self.end_ns is None:
            return None
        return self.end_ns - self.begin_ns

    @property
    def overlap_ns(self) -> int:
        """Time counted more than once in sum_ns because workloads overlapped."""
        return self.sum_ns - self.busy_ns

    @property
    def untimed(self) -> int:
        return self.workloads - self.timed


def span_of(intervals: Iterable[Interval], workloads: int, *, presorted: bool = False) -> Span:
    """The span of `workloads` workloads, of which `intervals` are the usable ones.

    Unless `presorted` (in order of begin), the intervals are sorted here, in memory.
    """
    ordered = intervals if presorted else sorted(intervals)
    timed = total = busy = gaps = idle = largest = 0
    first: int | None = None
    run_begin = run_end = 0
    for begin, end in ordered:
        timed += 1
        total += end - begin
        if first is None:
            first, run_begin, run_end = begin, begin, end
        elif begin > run_end:  # a gap: close the run of overlapping work before it
            busy += run_end - run_begin
            gaps += 1
            idle += begin - run_end
            largest = max(largest, begin - run_end)
            run_begin, run_end = begin, end
        elif end > run_end:
            run_end = end
    if first is None:
        return Span(workloads, 0, 0, None, None, 0, 0, 0, 0)
    busy += run_end - run_begin
    return Span(workloads, timed, total, first, run_end, busy, gaps, idle, largest)
