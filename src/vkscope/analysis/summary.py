"""What a report sums up over every frame it looked at: the costliest workloads and label
subtrees. Both take workloads one at a time and keep only what they report (the top N, one node
per label path), so they need no more memory for a long capture than for a short one.
"""

from __future__ import annotations

import heapq
import itertools
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field

from ..capture import WorkloadInstance
from .frames import FrameKey, FrameWork


@dataclass(frozen=True, slots=True)
class Costly:
    gpu_ns: int | float  # what it is ranked by: its GPU time, or the counter sorted by
    share: float | None  # of its frame's GPU time
    key: FrameKey
    workload: WorkloadInstance


GPU_NS = "gpu_ns"


class Costliest:
    """The N workloads with the most GPU time, or of one counter (`sort`); ties: the earlier
    submitted first."""

    def __init__(self, n: int, sort: str = GPU_NS) -> None:
        self.n = n
        self.sort = sort
        # (value, -id, arrival, ...): smallest on top; `arrival` settles the tie of an instance
        # listed twice (only a damaged capture does that) before Costly would be compared.
        self._heap: list[tuple[int | float, int, int, Costly]] = []
        self._arrivals = itertools.count()

    def add(self, frame: FrameWork, w: WorkloadInstance) -> None:
        ns: int | float | None = w.gpu_ns if self.sort == GPU_NS else w.counters.get(self.sort)
        if ns is None or self.n <= 0:
            return
        item = (ns, -w.id)
        heap = self._heap
        if len(heap) < self.n:
            entry = (*item, next(self._arrivals), Costly(ns, frame.share(w), frame.key, w))
            heapq.heappush(heap, entry)
        elif item > heap[0][:2]:
            entry = (*item, next(self._arrivals), Costly(ns, frame.share(w), frame.key, w))
            heapq.heapreplace(heap, entry)

    def result(self) -> list[Costly]:
        return [e[3] for e in sorted(self._heap, key=lambda e: (-e[0], -e[1], e[2]))]


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
    is that of workloads with no label."""

    def __init__(self) -> None:
        self.root = LabelNode(())

    def add(self, w: WorkloadInstance) -> None:
        ns = w.gpu_ns
        node = self.root
        self._count(node, ns)
        for depth, label in enumerate(w.labels, 1):
            child = node.children.get(label)
            if child is None:
                child = node.children[label] = LabelNode(w.labels[:depth])
            node = child
            self._count(node, ns)
        if ns is not None:
            node.self_ns += ns

    @staticmethod
    def _count(node: LabelNode, ns: int | None) -> None:
        node.workloads += 1
        if ns is not None:
            node.timed += 1
            node.inclusive_ns += ns

    def rows(self) -> Iterator[LabelRow]:
        """Depth first, each node's children by inclusive time, costliest first."""
        total = self.root.inclusive_ns
        stack = [self.root]
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


class Summary:
    """Sums up every listed workload: the costliest list, the label tree and the counts."""

    def __init__(self, top: int, sort: str = GPU_NS) -> None:
        self.costliest = Costliest(top, sort)
        self.labels = LabelTree()
        self.frames = 0  # frames with a listed workload
        self.workloads = 0
        self.timed = 0
        self.gpu_ns = 0
        self._last: FrameKey | None = None

    def add(self, frame: FrameWork, w: WorkloadInstance) -> None:
        if frame.key != self._last:
            self._last = frame.key
            self.frames += 1
        self.workloads += 1
        ns = w.gpu_ns
        if ns is not None:
            self.timed += 1
            self.gpu_ns += ns
        self.costliest.add(frame, w)
        self.labels.add(w)

    def feed(
        self, frame: FrameWork, rows: Iterable[WorkloadInstance]
    ) -> Iterator[WorkloadInstance]:
        """Passes the rows on, adding each as it goes by."""
        for w in rows:
            self.add(frame, w)
            yield w
