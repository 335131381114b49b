"""The overlap that serialization removed: a `none` capture against a `queue` (or `full`) one.

Without serialization (`none`), a workload's timestamps can include work of its neighbours that
runs at the same time, and a queue's workloads overlap; with it, each workload runs alone. Two
captures of the same application, one in each mode, are compared frame by frame:

- per workload, matched by its identity in the frame (capture/read/identity.py: queue, label
  path, type and occurrence, the n-th workload with that type and label path on that queue in
  that frame, in submission order); its GPU time in each capture;
- per frame and queue: each capture's sum of costs and busy span. In the `none` capture, the sum
  of costs minus the busy time is the overlap its times count twice; the serialized busy span
  minus the `none` one is how much longer the queue was busy once serialized.

Only frames present in both captures are compared, one frame at a time from each.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

from ..capture import Capture
from ..capture.read.identity import labels_of
from ..capture.read.queries import by_identity, gpu_intervals, merge_by_identity, queue_totals
from ..capture.read.records import IdentifiedValue
from .frames import FrameKey, frame_keys
from .selection import Selection
from .spans import Span, span_of
from .timing_info import timing_info


class OverlapError(ValueError):
    """The two captures cannot be compared (no timing, or the same serialization in both)."""


@dataclass(frozen=True, slots=True)
class WorkloadPair:
    key: FrameKey
    queue: int | None
    type: str | None
    label_path: str
    occurrence: int  # from 0
    in_none: bool  # whether each capture has it
    in_serialized: bool
    none_ns: int | None  # GPU time without serialization; None: missing or untimed there
    serialized_ns: int | None

    @property
    def delta_ns(self) -> int | None:
        """How much longer the workload measured without serialization."""
        if self.none_ns is None or self.serialized_ns is None:
            return None
        return self.none_ns - self.serialized_ns


@dataclass(frozen=True, slots=True)
class QueuePair:
    key: FrameKey
    queue: int | None
    none: Span
    serialized: Span

    @property
    def removed_ns(self) -> int | None:
        """How much longer the queue was busy with serialization: the overlap it removed."""
        a, b = self.none.span_ns, self.serialized.span_ns
        return None if a is None or b is None else b - a


@dataclass(frozen=True, slots=True)
class FramePair:
    key: FrameKey
    queues: list[QueuePair]  # the selected queues present in both captures
    workloads: Iterator[WorkloadPair]  # streamed once, ordered by identity


def order_captures(a: Capture, b: Capture) -> tuple[Capture, Capture, str]:
    """(the `none` capture, the serialized one, its mode), in whichever order they were given."""
    modes = []
    for cap in (a, b):
        mode = timing_info(cap).mode
        if mode is None:
            raise OverlapError(f"{cap.path}: no GPU timing in this capture (run with --timing)")
        modes.append(mode)
    if modes[0] == "none" and modes[1] != "none":
        return a, b, modes[1]
    if modes[1] == "none" and modes[0] != "none":
        return b, a, modes[0]
    raise OverlapError(
        f"both captures were timed with serialization {modes[0]!r} and {modes[1]!r}; comparing "
        "needs one taken with `none` and one with `queue` or `full`"
    )


def _pairs(
    key: FrameKey, none: Capture, serialized: Capture, selection: Selection
) -> Iterator[WorkloadPair]:
    """Both captures' workloads of the frame, joined by identity (both streams are sorted)."""
    for _, (in_none, in_serialized) in merge_by_identity(
        by_identity(none, key=key), by_identity(serialized, key=key)
    ):
        v = (in_serialized or in_none)[0]  # where it ran: the serialized run's queue, if there
        type_, label_path = v.type_text or None, "/".join(labels_of(v.labels_json))
        if selection.wants_queue(v.queue) and selection.wants_workload(type_, label_path):
            yield WorkloadPair(
                key, v.queue, type_, label_path, v.ordinal, bool(in_none), bool(in_serialized),
                _gpu_ns(in_none), _gpu_ns(in_serialized),
            )  # fmt: skip


def _gpu_ns(found: list[IdentifiedValue]) -> int | None:
    value = found[0].value if found else None
    return value if isinstance(value, int) else None


def _queues(
    key: FrameKey, none: Capture, serialized: Capture, selection: Selection
) -> list[QueuePair]:
    totals_a, totals_b = queue_totals(none, key), queue_totals(serialized, key)
    pairs = []
    for q in sorted(totals_b, key=lambda q: (q is None, q or 0)):
        if q in totals_a and selection.wants_queue(q):
            span_a = span_of(gpu_intervals(none, key, q), totals_a[q][0], presorted=True)
            span_b = span_of(gpu_intervals(serialized, key, q), totals_b[q][0], presorted=True)
            pairs.append(QueuePair(key, q, span_a, span_b))
    return pairs


def _common(a: Iterator[FrameKey], b: Iterator[FrameKey]) -> Iterator[FrameKey]:
    """Keys in both sorted streams."""
    ka, kb = next(a, None), next(b, None)
    while ka is not None and kb is not None:
        if ka.order() < kb.order():
            ka = next(a, None)
        elif kb.order() < ka.order():
            kb = next(b, None)
        else:
            yield ka
            ka, kb = next(a, None), next(b, None)


def compare(none: Capture, serialized: Capture, selection: Selection) -> Iterator[FramePair]:
    """Frame by frame, for frames present in both captures. Type and label filters choose the
    workloads compared; spans are of whole queues. Raises SelectionError at once for frames
    asked for by number that either capture does not have."""
    keys_a = (k for k, _ in frame_keys(none, selection))
    keys_b = (k for k, _ in frame_keys(serialized, selection))
    for key in _common(keys_a, keys_b):
        queues = _queues(key, none, serialized, selection)
        yield FramePair(key, queues, _pairs(key, none, serialized, selection))


@dataclass(slots=True)
class OverlapTotals:
    frames: int = 0
    matched: int = 0  # workloads found in both captures
    only_one: int = 0  # found in one capture only
    sum_none_ns: int = 0  # over matched, timed-in-both workloads
    sum_serialized_ns: int = 0
    span_none_ns: int = 0  # busy spans summed over frames and queues present in both
    span_serialized_ns: int = 0
    overlap_none_ns: int = 0  # time the `none` capture counts twice

    def add_frame(self, frame: FramePair) -> None:
        self.frames += 1
        for q in frame.queues:
            self.span_none_ns += q.none.span_ns or 0
            self.span_serialized_ns += q.serialized.span_ns or 0
            self.overlap_none_ns += q.none.overlap_ns

    def add(self, p: WorkloadPair) -> None:
        if p.delta_ns is not None:
            self.matched += 1
            self.sum_none_ns += p.none_ns or 0
            self.sum_serialized_ns += p.serialized_ns or 0
        elif not (p.in_none and p.in_serialized):
            self.only_one += 1
