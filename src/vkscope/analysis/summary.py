"""What a report sums up over a whole capture, in one pass over its instances: the costliest
workloads, GPU time by label subtree, each queue's GPU time per frame and each workload
identity's distribution over frames.

The pass takes the instance columns the capture stored when it was finalized, a batch at a time,
with numpy (summary_columns.py), where it has them and the `fleet` extra is installed
(capture/read/columnar.py); else it streams the instances one at a time (capture/read/
values.py). Both give the same summary (tests/test_report_summary.py).

Warm-up frames (capture/read/warmup.py) are left out of all of it and only counted. What is
kept does not grow with the capture's length but for the distributions: the top N, one node per
label path, the frames in flight, and per instance summed up its identity and values in typed
arrays, which become a column per statistic per identity (capture/read/distributions.py;
docs/bench/report-summary.md, docs/bench/report-memory.md). The selection's type and label
filters choose which workloads are summed up, except in the queue totals, which describe each
selected queue as captured (as the frames table does).
"""

from __future__ import annotations

import heapq
from array import array
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import NamedTuple

from ..capture import Capture, WorkloadInstance
from ..capture.read.columnar import stored_columns_for
from ..capture.read.distributions import DistributionTable, IdentityValues
from ..capture.read.quantiles import Distribution
from ..capture.read.queries import queue_totals
from ..capture.read.values import InstanceValue, instance_values
from ..capture.read.warmup import WarmUp
from .frames import FrameKey
from .selection import Selection

GPU_NS = "gpu_ns"
# A frame's totals are summed up once submissions are this many frames past it (frames of one
# device are submitted in order; this leaves room for threads that race at a frame's end).
_FRAMES_IN_FLIGHT = 2


@dataclass(frozen=True, slots=True)
class Costly:
    gpu_ns: int | float  # what it is ranked by: its GPU time, or the counter sorted by
    share: float | None  # of its frame's GPU time
    key: FrameKey
    workload: WorkloadInstance


class Placed(NamedTuple):
    """Where an instance ran, enough to read its record."""

    process: int
    device: int | None
    frame: int | None
    queue: int | None
    id: int


class Costliest:
    """The N instances with the most GPU time, or of one counter (`sort`); ties: the earlier
    submitted first. Holds (value, instance) pairs; `result` reads the N records."""

    def __init__(self, n: int, sort: str = GPU_NS) -> None:
        self.n = n
        self.sort = sort
        self._heap: list[tuple[int | float, int, Placed]] = []
        # GPU time below which an instance cannot enter the list (a shortcut for the caller)
        self.floor: int | float = 0 if sort == GPU_NS else float("-inf")

    def add(self, v: InstanceValue) -> None:
        if self.sort == GPU_NS:
            value: int | float | None = v.gpu_ns
        else:
            value = v.counters.get(self.sort) if v.counters else None
        if value is not None:
            self.offer(value, Placed(v.process, v.device, v.frame, v.queue, v.id))

    def offer(self, value: int | float, v: Placed) -> None:
        """An instance whose GPU time (or counter sorted by) is `value`."""
        if self.n <= 0:
            return
        heap = self._heap
        if len(heap) < self.n:
            heapq.heappush(heap, (value, -v.id, v))
        elif (value, -v.id) > heap[0][:2]:
            heapq.heapreplace(heap, (value, -v.id, v))
        else:
            return
        if len(heap) == self.n and self.sort == GPU_NS:
            self.floor = heap[0][0]

    def result(self, capture: Capture) -> list[Costly]:
        ranked = sorted(self._heap, key=lambda e: (-e[0], -e[1]))
        out = []
        frame_ns: dict[FrameKey, int] = {}  # a long frame may hold all N: summed up once
        for value, _, v in ranked:
            key = FrameKey(v.process, v.device, v.frame)  # type: ignore[arg-type]
            found = _record(capture, v)
            if found is None:  # only a capture changed under the reader
                continue
            total = frame_ns.get(key)
            if total is None:
                total = frame_ns[key] = sum(ns for _, ns in queue_totals(capture, key).values())
            ns = found.gpu_ns
            out.append(Costly(value, ns / total if ns is not None and total else None, key, found))
        return out


def _record(capture: Capture, v: Placed) -> WorkloadInstance | None:
    rows = capture.workloads(frame=v.frame, queue=v.queue, process=v.process, device=v.device)
    return next((w for w in rows if w.id == v.id), None)


@dataclass(slots=True)
class LabelNode:
    path: tuple[str, ...]
    workloads: int = 0  # every workload in the subtree
    timed: int = 0
    self_ns: int = 0  # workloads labelled exactly `path`
    inclusive_ns: int = 0  # workloads labelled `path` or below it
    children: dict[str, LabelNode] = field(default_factory=dict)

    @property
    def label_path(self) -> str:
        return "/".join(self.path)


@dataclass(frozen=True, slots=True)
class LabelRow:
    path: tuple[str, ...]
    workloads: int
    timed: int
    self_ns: int
    inclusive_ns: int
    self_share: float | None  # of all GPU time counted
    inclusive_share: float | None

    @property
    def depth(self) -> int:
        return len(self.path)

    @property
    def label_path(self) -> str:
        return "/".join(self.path)


class LabelTree:
    """GPU time by label subtree. The root (empty path) holds every workload; its self time
    is that of workloads with no label. Counts are gathered per label path (`add`) and made a
    tree when it is read."""

    def __init__(self) -> None:
        self._paths: dict[tuple[str, ...], list[int]] = {}  # path -> [workloads, timed, ns]

    def add(self, labels: tuple[str, ...], workloads: int, timed: int, ns: int) -> None:
        """Counts `workloads` labelled `labels`, `timed` of them with `ns` of GPU time."""
        found = self._paths.get(labels)
        if found is None:
            found = self._paths[labels] = [0, 0, 0]
        found[0] += workloads
        found[1] += timed
        found[2] += ns

    def root(self) -> LabelNode:
        root = LabelNode(())
        for labels, (workloads, timed, ns) in self._paths.items():
            node = root
            _count(node, workloads, timed, ns)
            for depth, label in enumerate(labels, 1):
                child = node.children.get(label)
                if child is None:
                    child = node.children[label] = LabelNode(labels[:depth])
                node = child
                _count(node, workloads, timed, ns)
            node.self_ns += ns
        return root

    def rows(self) -> Iterator[LabelRow]:
        """Depth first, each node's children by inclusive time, costliest first."""
        root = self.root()
        total = root.inclusive_ns
        stack = [root]
        while stack:
            node = stack.pop()
            if node.workloads:
                yield LabelRow(
                    node.path, node.workloads, node.timed, node.self_ns, node.inclusive_ns,
                    node.self_ns / total if total else None,
                    node.inclusive_ns / total if total else None,
                )  # fmt: skip
            kids = node.children.values()
            order = sorted(kids, key=lambda n: (-n.inclusive_ns, -n.workloads, n.path[-1]))
            stack.extend(reversed(order))  # popped costliest first


def _count(node: LabelNode, workloads: int, timed: int, ns: int) -> None:
    node.workloads += workloads
    node.timed += timed
    node.inclusive_ns += ns


@dataclass(frozen=True, slots=True)
class QueueSummary:
    """One queue of one device over the steady frames: its work per frame."""

    process: int
    device: int | None
    queue: int | None
    frames: int  # steady frames with work on it
    workloads: int
    timed: int
    gpu_per_frame: Distribution | None  # its summed GPU time per frame, over the timed frames
    warmup_frames: int  # frames with work on it left out as warm-up


class _QueueTotals:
    __slots__ = ("frames", "per_frame", "timed", "warmup_frames", "workloads")

    def __init__(self) -> None:
        self.frames = self.workloads = self.timed = self.warmup_frames = 0
        self.per_frame = array("q")


class QueueFrames:
    """Each queue's totals per frame, summed up into distributions as frames complete; and the
    whole device's GPU time per frame (every queue)."""

    def __init__(self, warmup: WarmUp) -> None:
        self._warmup = warmup
        # (process, device) -> frame -> queue -> [workloads, timed, ns]
        self._open: dict[tuple[int, int | None], dict[int | None, dict[int | None, list[int]]]]
        self._open = {}
        self._newest: dict[tuple[int, int | None], int] = {}
        self._queues: dict[tuple[int, int | None, int | None], _QueueTotals] = {}
        self._devices: dict[tuple[int, int | None], array[int]] = {}

    def frame(self, key: tuple[int, int | None, int | None]) -> dict[int | None, list[int]]:
        """The frame's totals per queue ([workloads, timed, GPU time]), to count into."""
        device = (key[0], key[1])
        frames = self._open.get(device)
        if frames is None:
            frames = self._open[device] = {}
        queues = frames.get(key[2])
        if queues is None:
            queues = frames[key[2]] = {}
            newest = self._newest.get(device)
            if key[2] is not None and (newest is None or key[2] > newest):
                self._newest[device] = key[2]
                self._flush(device, key[2] - _FRAMES_IN_FLIGHT)
        return queues

    def _flush(self, device: tuple[int, int | None], before: int | None) -> None:
        frames = self._open[device]
        done = [f for f in frames if before is None or f is None or f < before]
        for frame in done:
            queues = frames.pop(frame)
            warm = (device[0], device[1], frame) in self._warmup
            frame_ns = 0
            timed = False
            for queue, (n, n_timed, ns) in queues.items():
                t = self._queues.get((*device, queue))
                if t is None:
                    t = self._queues[(*device, queue)] = _QueueTotals()
                if warm:
                    t.warmup_frames += 1
                    continue
                t.frames += 1
                t.workloads += n
                t.timed += n_timed
                if n_timed:
                    t.per_frame.append(ns)
                    frame_ns += ns
                    timed = True
            if timed:
                self._devices.setdefault(device, array("q")).append(frame_ns)

    def result(self) -> tuple[list[QueueSummary], dict[tuple[int, int | None], Distribution]]:
        """Each queue, by process, device and queue; and each device's GPU time per frame."""
        for device in list(self._open):
            self._flush(device, None)
        queues = [
            QueueSummary(
                p, d, q, t.frames, t.workloads, t.timed, Distribution.of(t.per_frame.tolist()),
                t.warmup_frames,
            )
            for (p, d, q), t in sorted(self._queues.items(), key=lambda i: queue_order(i[0]))
        ]  # fmt: skip
        devices = {}
        for device, values in self._devices.items():
            found = Distribution.of(values.tolist())
            if found is not None:
                devices[device] = found
        return queues, devices


def queue_order(key: tuple[int, int | None, int | None]) -> tuple[int, int, int]:
    """The order queues are listed in: by process, device and queue, None first."""
    p, d, q = key
    return (p, -1 if d is None else d, -1 if q is None else q)


class Summary:
    """Sums up a capture's steady frames (see the module's docstring); `run` reads it."""

    def __init__(self, top: int, sort: str, selection: Selection, warmup: WarmUp) -> None:
        self.selection = selection
        self.warmup = warmup
        self.costliest = Costliest(top, sort)
        self.labels = LabelTree()
        self.queue_frames = QueueFrames(warmup)
        self.frames = 0  # steady frames with a summed-up workload
        self.workloads = 0  # summed up: selected, in steady frames
        self.timed = 0
        self.gpu_ns = 0
        self.warmup_workloads = 0  # selected, but in warm-up frames
        self.warmup_met: set[tuple[int, int | None, int | None]] = set()  # their frames
        self.listed = 0  # workloads the report listed (its workloads or frames tables)
        self.top: list[Costly] = []
        self.distributions = DistributionTable.empty()
        self.queues: list[QueueSummary] = []
        self.frame_gpu: dict[tuple[int, int | None], Distribution] = {}
        self._labels_wanted: dict[str, bool] = {}
        self._recent: dict[tuple[int, int | None], set[int | None]] = {}

    def run(self, capture: Capture, *, counters: bool, stored: bool = True) -> Summary:
        """Sums up every instance of `capture` (with their counters when `counters`): from its
        stored columns where it has them, unless `stored` is False (see the module's
        docstring)."""
        names = capture.counter_names() if counters else ()
        if stored and stored_columns_for(capture, names):
            from .summary_columns import sum_up_columns

            sum_up_columns(self, capture, names)
        else:
            self._sum_up_values(capture, counters)
            self.queues, self.frame_gpu = self.queue_frames.result()
        self.distributions.with_floors(capture.queue_floors())
        self.top = self.costliest.result(capture)
        return self

    def _sum_up_values(self, capture: Capture, counters: bool) -> None:
        """The pass one instance at a time. The loop does per frame what is the same for all of a
        frame's instances (instances of a frame come one after another, unless devices or
        processes interleave)."""
        selection = self.selection
        frames, queues, types = selection.frames, selection.queues, selection.types
        label = selection.label
        warmup = self.warmup.frames
        queue_frames, costliest = self.queue_frames, self.costliest
        identities = IdentityValues()
        last: tuple[int, int | None, int | None] | None = None
        skip = warm = counted = False
        totals: dict[int | None, list[int]] = {}
        for v in instance_values(capture, counters=counters):
            key = (v.process, v.device, v.frame)
            if key != last:
                last = key
                skip = frames is not None and v.frame not in frames
                if not skip:
                    totals = queue_frames.frame(key)
                warm = key in warmup
                counted = False
            if skip or (queues is not None and v.queue not in queues):
                continue
            ns = v.gpu_ns
            found = totals.get(v.queue)
            if found is None:
                found = totals[v.queue] = [0, 0, 0]
            found[0] += 1
            if ns is not None:
                found[1] += 1
                found[2] += ns
            if types is not None and (v.order[2] or "unknown") not in types:
                continue
            if label is not None and not self._label_wanted(v):
                continue
            if warm:
                self.warmup_workloads += 1
                self.warmup_met.add(key)
                continue
            if not counted:
                counted = True
                self.count_frame(key)
            self.workloads += 1
            if ns is not None:
                self.timed += 1
                self.gpu_ns += ns
            if ns is None or ns >= costliest.floor:
                costliest.add(v)
            identities.add(v)
        for labels, workloads, timed, ns in identities.label_totals():
            self.labels.add(labels, workloads, timed, ns)
        self.distributions = identities.result()

    def _label_wanted(self, v: InstanceValue) -> bool:
        label = self.selection.label
        assert label is not None
        found = self._labels_wanted.get(v.order[1])
        if found is None:
            found = self._labels_wanted[v.order[1]] = label.matches("/".join(v.labels))
        return found

    def count_frame(self, key: tuple[int, int | None, int | None]) -> None:
        """A steady frame with a summed-up workload (said once or more)."""
        # Frames of one device come in submission order: only the last few are remembered.
        recent = self._recent.get(key[:2])
        if recent is None:
            recent = self._recent[key[:2]] = set()
        if key[2] in recent:
            return
        recent.add(key[2])
        self.frames += 1
        if len(recent) > 4 * _FRAMES_IN_FLIGHT:
            newest = sorted(f for f in recent if f is not None)[-_FRAMES_IN_FLIGHT:]
            recent.intersection_update(newest)
