"""Distributions over frames: per workload identity, how its GPU time and each of its counters
spread over the frames it ran in (count, min, p50, p90, p99, max; quantiles.py), warm-up frames
left out (warmup.py).

An identity names one instance per frame (identity.py), so an identity's values are one per
frame. `IdentityValues` gathers them from a values stream (values.py) in one pass, holding 8
bytes per value (an array per identity and value), and sums each identity up at the end:
exact percentiles, in memory that grows with the instances summed up and not with anything
else (docs/bench/report-summary.md).
"""

from __future__ import annotations

from array import array
from collections.abc import Iterator
from typing import Final

import msgspec

from .identity import IdentityOrder, WorkloadIdentity
from .quantiles import Distribution
from .reader import Capture
from .timer_floor import QueueFloors, TimerFloor, near_floor
from .values import InstanceValue, instance_values
from .warmup import WarmUp, warmup_frames

GPU_NS: Final = "gpu_ns"


class IdentityDistribution(msgspec.Struct, frozen=True):
    """One workload identity over the steady frames of a capture."""

    identity: WorkloadIdentity
    frames: int  # steady frames it ran in
    gpu_ns: Distribution | None  # over the frames it was timed in; None: never timed
    counters: dict[str, Distribution]  # per counter, over the frames it has a value in
    # The timer's floor of its queue family (timer_floor.py): what its GPU time may hold of the
    # timer's own cost, and the time up to which a GPU time is near the floor; None: unknown.
    gpu_ns_uncertainty: float | None = None
    near_floor_ns: float | None = None

    @property
    def near_floor(self) -> bool | None:
        """Whether its median GPU time is near the timer's floor; None when either is unknown."""
        return near_floor(self.gpu_ns.p50 if self.gpu_ns else None, self.near_floor_ns)

    def value(self, name: str) -> Distribution | None:
        """The distribution of GPU time (`gpu_ns`) or of one counter."""
        return self.gpu_ns if name == GPU_NS else self.counters.get(name)


class _Gathered:
    __slots__ = ("counters", "floor", "frames", "gpu_ns", "labels")

    def __init__(self, labels: tuple[str, ...]) -> None:
        self.labels = labels
        self.frames = 0
        self.gpu_ns = array("q")
        self.counters: dict[str, array[float]] = {}
        self.floor: TimerFloor | None = None  # the highest floor of the queues it ran on


class IdentityValues:
    """Gathers the values of each identity, one instance at a time (`add`), and sums them up.
    With `floors`, each identity keeps the timer's floor of its queue's family."""

    def __init__(self, floors: QueueFloors | None = None) -> None:
        self._found: dict[IdentityOrder, _Gathered] = {}
        self.floors = floors

    def __len__(self) -> int:
        return len(self._found)

    def add(self, v: InstanceValue) -> None:
        found = self._found.get(v.order)
        if found is None:
            found = self._found[v.order] = _Gathered(v.labels)
        found.frames += 1
        if self.floors:
            floor = self.floors.of(v.process, v.device, v.queue)
            if floor is not None and (found.floor is None or _higher(floor, found.floor)):
                found.floor = floor
        if v.gpu_ns is not None:
            found.gpu_ns.append(v.gpu_ns)
        if v.counters:
            for name, value in v.counters.items():
                values = found.counters.get(name)
                if values is None:
                    values = found.counters[name] = array("d")
                values.append(value)

    def totals(self) -> Iterator[tuple[tuple[str, ...], int, array[int]]]:
        """Per identity: its labels, its instances and their GPU times."""
        for g in self._found.values():
            yield g.labels, g.frames, g.gpu_ns

    def result(self) -> list[IdentityDistribution]:
        """Every identity gathered, in identity order (identity.ORDER_SQL's)."""
        out = []
        for order in sorted(self._found):
            g = self._found[order]
            queue, _, type_text, ordinal = order
            counters = {}
            for name in sorted(g.counters):
                d = Distribution.of(g.counters[name].tolist())
                if d is not None:
                    counters[name] = d
            floor = g.floor
            out.append(
                IdentityDistribution(
                    WorkloadIdentity(queue, g.labels, type_text or None, ordinal),
                    g.frames,
                    Distribution.of(g.gpu_ns.tolist()),
                    counters,
                    floor.uncertainty_ns if floor else None,
                    floor.near_ns if floor else None,
                )
            )
        return out


def _higher(a: TimerFloor, b: TimerFloor) -> bool:
    return (a.floor_ns or 0.0, a.uncertainty_ns or 0.0) > (
        b.floor_ns or 0.0,
        b.uncertainty_ns or 0.0,
    )


def distributions(
    capture: Capture, warmup: WarmUp | None = None, *, counters: bool = True
) -> list[IdentityDistribution]:
    """Per identity of the capture, its GPU time and counters over the steady frames (warm-up
    frames by the automatic rule unless `warmup` says otherwise), in identity order."""
    warmup = warmup if warmup is not None else warmup_frames(capture)
    gathered = IdentityValues(capture.queue_floors())
    for v in warmup.steady(instance_values(capture, counters=counters)):
        gathered.add(v)
    return gathered.result()
