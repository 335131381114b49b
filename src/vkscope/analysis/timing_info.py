"""What a capture says about its GPU timing as a whole: modes, clocks, and why some is missing."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

from ..capture import Capture
from ..capture.read.queries import timing_counts


@dataclass(frozen=True, slots=True)
class TimingInfo:
    workloads: int
    timed: int  # with a GPU begin time
    serialization: dict[str, int]  # workloads per mode (`none`, `queue`, `full`)
    status: dict[str, int]  # workloads per timing status (`ok`, `untimed`, `ambiguous`)
    reasons: list[tuple[str, int]]  # why workloads are untimed or ambiguous, commonest first
    clocks: dict[str, int]  # devices per clock domain

    @property
    def any(self) -> bool:
        return self.timed > 0 or bool(self.status)

    @property
    def mode(self) -> str | None:
        """The serialization most workloads were timed with, if any were."""
        return max(self.serialization, key=self.serialization.__getitem__, default=None)


def timing_info(capture: Capture) -> TimingInfo:
    modes: Counter[str] = Counter()
    status: Counter[str] = Counter()
    reasons: Counter[str] = Counter()
    workloads = timed = 0
    for c in timing_counts(capture):
        workloads += c.instances
        timed += c.with_begin
        if c.serialization is not None:
            modes[c.serialization] += c.instances
        if c.timing is not None:
            status[c.timing] += c.instances
        if c.timing_reason is not None:
            reasons[c.timing_reason] += c.instances
    clocks = Counter(d.clock_domain for d in capture.devices() if d.clock_domain is not None)
    return TimingInfo(
        workloads, timed, dict(modes), dict(status), reasons.most_common(), dict(clocks)
    )
