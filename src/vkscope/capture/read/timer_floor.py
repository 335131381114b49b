"""The timer's floor (docs/timing.md, "The timer's floor"): what the layer's timestamps read
around nothing, per device and queue family, and what it means for a workload's GPU time.

- A family's **floor** is what an empty workload read, at its median, between the timestamps
  (and barriers) the layer writes around every workload in the capture's serialization mode;
  never less than one timer period.
- A GPU time carries its **uncertainty**: the largest time an empty workload read on its family
  (at least one period). The timestamps and barriers around a workload add between the empty
  workloads' least and largest time to it, so its own cost lies between its time less the
  uncertainty and its time.
- A time within NEAR_FLOOR_FACTOR times its family's floor is **near the timer's floor**: the
  timer's own cost is then at least 1/NEAR_FLOOR_FACTOR of what it reads, and such a time says
  little more than "short". Every reader marks it.

A capture before schema 12, a family whose floor was not measured (timing off, a family
without timestamps, a measurement that failed: `reason`) and an untimed workload have neither:
None.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Final

if TYPE_CHECKING:  # the reader hands its instances their floors
    from .reader import Capture

NEAR_FLOOR_FACTOR: Final = 4

_FLOORS: Final = """
SELECT process, device, family, period_ns, samples, back_to_back_min_ns, back_to_back_median_ns,
       back_to_back_max_ns, empty_min_ns, empty_median_ns, empty_max_ns, reason
FROM timer_floors ORDER BY process, device, family
"""
_QUEUES: Final = "SELECT process, device, id, family FROM queues"


@dataclass(frozen=True, slots=True)
class Spread:
    """min, median and max of a measurement's repeats, in nanoseconds."""

    min_ns: float
    median_ns: float
    max_ns: float

    def as_json(self) -> dict[str, float]:
        return {"min_ns": self.min_ns, "median_ns": self.median_ns, "max_ns": self.max_ns}


@dataclass(frozen=True, slots=True)
class TimerFloor:
    """The timer's floor of one queue family of one device."""

    process: int
    device: int
    family: int
    period_ns: float | None  # the device's timestamp period
    samples: int  # repeats of each measurement
    back_to_back: Spread | None  # two timestamps written one after the other
    empty: Spread | None  # an empty workload between the layer's timestamps
    reason: str | None  # why it was not measured

    @property
    def floor_ns(self) -> float | None:
        """The family's floor: an empty workload's median time, at least one period."""
        if self.empty is None:
            return None
        return max(self.empty.median_ns, self.period_ns or 0.0)

    @property
    def uncertainty_ns(self) -> float | None:
        """What a GPU time on the family may hold of the timer's own cost: the largest time an
        empty workload read, at least one period."""
        if self.empty is None:
            return None
        return max(self.empty.max_ns, self.period_ns or 0.0)

    @property
    def near_ns(self) -> float | None:
        """GPU times up to this are near the timer's floor."""
        floor = self.floor_ns
        return None if floor is None else NEAR_FLOOR_FACTOR * floor

    def as_json(self) -> dict[str, Any]:
        return {
            "process": self.process,
            "device": self.device,
            "family": self.family,
            "period_ns": self.period_ns,
            "samples": self.samples,
            "back_to_back": self.back_to_back.as_json() if self.back_to_back else None,
            "empty": self.empty.as_json() if self.empty else None,
            "floor_ns": self.floor_ns,
            "uncertainty_ns": self.uncertainty_ns,
            "near_floor_ns": self.near_ns,
            "reason": self.reason,
        }


def _spread(low: float | None, mid: float | None, high: float | None) -> Spread | None:
    if low is None or mid is None or high is None:
        return None
    return Spread(float(low), float(mid), float(high))


def timer_floors(capture: Capture) -> list[TimerFloor]:
    """Every device's floors, by process, device and family (empty before schema 12)."""
    _, rows = capture.execute(_FLOORS)
    return [
        TimerFloor(p, d, f, period, samples, _spread(*r[0:3]), _spread(*r[3:6]), reason)
        for p, d, f, period, samples, *r, reason in rows
    ]


def near_floor(gpu_ns: float | None, near_ns: float | None) -> bool | None:
    """Whether a GPU time is near the timer's floor; None when either is unknown."""
    if gpu_ns is None or near_ns is None:
        return None
    return gpu_ns <= near_ns


class QueueFloors:
    """The floor of the family each queue of a capture is in, by (process, device, queue id)."""

    def __init__(self, capture: Capture) -> None:
        by_family = {(f.process, f.device, f.family): f for f in timer_floors(capture)}
        self.floors = list(by_family.values())
        self._queues: dict[tuple[int, int | None, int | None], TimerFloor] = {}
        self._by_family: dict[int, TimerFloor] | None = None
        if by_family:
            _, rows = capture.execute(_QUEUES)
            for p, d, q, family in rows:
                found = by_family.get((p, d, family))
                if found is not None and found.floor_ns is not None:
                    self._queues[(p, d, q)] = found

    def __bool__(self) -> bool:
        return bool(self._queues)

    def by_family(self) -> dict[int, TimerFloor]:
        """The floor of each queue family, as identities name queues ("family.index",
        identity.py): the highest of that family's floors over the capture's processes and
        devices, so that a time is marked near the floor where the floor is highest (the
        cautious reading)."""
        out: dict[int, TimerFloor] = {}
        for floor in self.floors:
            if floor.floor_ns is None:
                continue
            held = out.get(floor.family)
            if held is None or _higher(floor, held):
                out[floor.family] = floor
        return out

    def of_identity_queue(self, queue_key: str) -> TimerFloor | None:
        """The floor an identity's times are judged against, its queue named as identities name
        queues ("family.index"): its family's floor from by_family(). The one rule for every
        reader of an identity's median or distribution (per-instance marks use `bounds`)."""
        if self._by_family is None:
            self._by_family = self.by_family()
        family, dot, _ = queue_key.partition(".")
        if not self._by_family or not dot or not family.isdigit():
            return None  # "id N" or "?": a queue whose family is unknown
        return self._by_family.get(int(family))

    def of(self, process: int, device: int | None, queue: int | None) -> TimerFloor | None:
        return self._queues.get((process, device, queue))

    def bounds(
        self, process: int, device: int | None, queue: int | None
    ) -> tuple[float | None, float | None]:
        """(uncertainty_ns, near_ns) of a GPU time on that queue; Nones without a floor."""
        found = self._queues.get((process, device, queue))
        return (None, None) if found is None else (found.uncertainty_ns, found.near_ns)


def _higher(a: TimerFloor, b: TimerFloor) -> bool:
    return (a.floor_ns or 0.0, a.uncertainty_ns or 0.0) > (
        b.floor_ns or 0.0,
        b.uncertainty_ns or 0.0,
    )
