"""A capture read frame by frame: each frame's queues with their GPU time spans, then each
queue's workloads as a stream.

Nothing of a frame is held but one number per queue: totals and spans come from SQLite
(capture/read/queries.py), and a queue's workloads are read as they are written out. A capture
of any length, with frames of any size, is analysed in constant memory.

Queue spans describe each queue as captured: all of its workloads count, whatever the type and
label filters; the filters only choose which workloads are listed (and summed up). A workload's
share is its GPU time over the frame's GPU time, summed over every queue of the frame.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from functools import partial

from ..capture import Capture, WorkloadInstance
from ..capture.read.gpu_join import FrameState, GpuJoin, StateSpan
from ..capture.read.queries import (
    count_frames,
    count_queues,
    counter_sums,
    frame_bounds,
    frames_with_work,
    gpu_intervals,
    label_paths,
    queue_ids,
    queue_totals,
    workload_types,
)
from ..capture.read.records import FrameKey
from .selection import Selection, SelectionError
from .spans import Span, span_of

__all__ = ["FrameKey", "FrameWork", "QueueWork", "frame_keys", "queue_rows", "read_frames"]


@dataclass(frozen=True, slots=True)
class QueueWork:
    queue: int | None
    span: Span
    counters: dict[str, float] = field(default_factory=dict)  # summed over its instances


@dataclass(slots=True)
class FrameWork:
    key: FrameKey
    captured: bool | None  # whether the layer's frame selection captured it; None: not said
    gpu_ns: int  # GPU time of every timed workload of the frame, all queues
    queues: list[QueueWork] = field(default_factory=list)  # the selected queues, by id
    # Its device's GPU as the host sampled it (docs/gpu-state.md); None where it was not.
    gpu: FrameState | None = None
    gpu_state: StateSpan | None = None

    def share(self, w: WorkloadInstance) -> float | None:
        """The workload's part of the frame's GPU time."""
        ns = w.gpu_ns
        if ns is None or not self.gpu_ns:
            return None
        return ns / self.gpu_ns


def frame_keys(capture: Capture, selection: Selection) -> Iterator[tuple[FrameKey, bool | None]]:
    """The frames with work that the selection wants, by process, device and number, each with
    its `captured` flag.

    Raises SelectionError, before yielding anything, for frames or queues asked for by number,
    types asked for by name and label patterns that the capture has none of.
    """
    try:
        selection.check_frames(partial(count_frames, capture), frame_bounds(capture))
        if selection.queues is not None:
            selection.check_queues(partial(count_queues, capture), queue_ids(capture))
        if selection.types is not None:
            selection.check_types(workload_types(capture))
        if selection.label is not None:
            selection.check_label(label_paths(capture))
    except SelectionError as exc:  # which capture, where two are compared
        raise SelectionError(f"{capture.path}: {exc}") from None
    return (
        (key, captured)
        for key, captured in frames_with_work(capture)
        if selection.wants_frame(key.frame)
    )


def read_frame(
    capture: Capture,
    key: FrameKey,
    selection: Selection,
    captured: bool | None = None,
    gpu: GpuJoin | None = None,
) -> FrameWork:
    totals = queue_totals(capture, key)
    work = FrameWork(key, captured, sum(ns for _, ns in totals.values()))
    state = gpu.frame(key) if gpu is not None else None
    if state is not None:
        work.gpu, work.gpu_state = state, state.state()
    sums = counter_sums(capture, key) if capture.counter_names() else {}
    for queue in sorted(totals, key=lambda q: (q is None, q or 0)):
        if selection.wants_queue(queue):
            span = span_of(gpu_intervals(capture, key, queue), totals[queue][0], presorted=True)
            work.queues.append(QueueWork(queue, span, sums.get(queue, {})))
    return work


def read_frames(
    capture: Capture, selection: Selection, gpu: GpuJoin | None = None
) -> Iterator[FrameWork]:
    """Every selected frame with a selected queue, one at a time (its spans, not its rows), with
    its GPU's sampled state where `gpu` is given.

    Raises SelectionError at once, as frame_keys does.
    """
    for key, captured in frame_keys(capture, selection):
        work = read_frame(capture, key, selection, captured, gpu)
        if work.queues:
            yield work


def queue_rows(
    capture: Capture, frame: FrameWork, queue: QueueWork, selection: Selection
) -> Iterator[WorkloadInstance]:
    """The queue's selected workloads in submission order, streamed from SQLite."""
    key = frame.key
    only = None
    if selection.types is not None and len(selection.types) == 1:  # let SQLite filter by type
        only = next(iter(selection.types))
        only = None if only == "unknown" else only
    rows = capture.workloads(
        frame=key.frame, queue=queue.queue, type=only, process=key.process, device=key.device
    )
    for w in rows:
        if selection.wants_workload(w.type, w.label_path):
            yield w
