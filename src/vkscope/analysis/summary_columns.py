"""The summary's pass (summary.py) over the instance columns a capture stored when it was
finalized, a record batch at a time, with numpy: the same sums, rankings and distributions as the
pass over instances one at a time, with no Python work per instance.

Per batch, what is the same for many rows is decided once per distinct value: a frame's place in
the selection and whether it is warm-up (per distinct process, device and frame), a type's and a
label path's (per dictionary entry). Totals per frame and queue, the steady frames, label paths
and identities are gathered as arrays (capture/read/distribution_columns.py) and summed up at the
end; the costliest instances of a batch are offered to Costliest.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from ..capture import Capture, Distribution
from ..capture.read.columns import instance_batches
from ..capture.read.distribution_columns import (
    BATCH_ROWS,
    COLUMNS,
    Bools,
    IdentityColumns,
    Ints,
    distinct_rows,
    frame_groups,
    groups,
    ints,
    or_none,
    stored_rows,
    texts,
    valid,
    warm_keys,
    warm_rows,
)
from ..capture.read.distributions import whole_number
from ..capture.read.identity import labels_of
from ..capture.read.identity_table import sorted_values
from ..capture.read.warmup import WarmUp
from .selection import Numbers
from .summary import GPU_NS, Placed, QueueSummary, Summary, queue_order

# What the summary reads of each instance (columns.SCHEMA's; the counter sorted by is a counter).
_COLUMNS: Final = ("id", "queue_id", *COLUMNS)


class _Frames:
    """Per batch, each chosen frame's totals per queue, and the steady frames with a summed-up
    workload, as arrays, until they are summed up."""

    def __init__(self) -> None:
        self.totals: list[list[Ints]] = []  # process, device, frame, queue, n, timed, GPU time
        self.steady: list[list[Ints]] = []  # process, device, frame

    def sum_up(self, summary: Summary) -> None:
        steady = [np.concatenate(c) for c in zip(*self.steady, strict=True)]
        self.steady = []
        summary.frames += len(distinct_rows(*steady)[0][0]) if steady else 0
        if not self.totals:
            return
        p, d, f, q, n, timed, ns = (np.concatenate(c) for c in zip(*self.totals, strict=True))
        self.totals = []
        found, at = distinct_rows(p, d, f, q)
        del p, d, f, q
        n, timed, ns = (_sums(at, len(found[0]), c) for c in (n, timed, ns))
        summary.queues, summary.frame_gpu = _queues(summary.warmup, found, n, timed, ns)


def _sums(at: Ints, size: int, values: Ints) -> Ints:
    out = np.zeros(size, np.int64)
    np.add.at(out, at, values)
    return out


def _queues(
    warmup: WarmUp, found: list[Ints], n: Ints, timed: Ints, ns: Ints
) -> tuple[list[QueueSummary], dict[tuple[int, int | None], Distribution]]:
    """QueueFrames.result from each frame's totals per queue (`found`: the frames and queues,
    as columns of process, device, frame and queue)."""
    process, device, frame, queue_id = found
    warm = warm_keys(warmup, process, device, frame)
    queue_columns, queue = distinct_rows(process, device, queue_id)
    queue_keys = list(zip(*(c.tolist() for c in queue_columns), strict=True))
    steady = ~warm
    counted = np.flatnonzero(steady & (timed > 0))
    per_frame = sorted_values(queue[counted], ns[counted], np.arange(len(queue_keys)))
    per_queue = per_frame.rows(0, len(queue_keys))
    k = len(queue_keys)
    frames = np.bincount(queue, weights=steady, minlength=k)
    workloads = _sums(queue[steady], k, n[steady])
    timed_sum = _sums(queue[steady], k, timed[steady])
    warm_frames = np.bincount(queue, weights=warm, minlength=k)
    queues = [
        QueueSummary(p, or_none(d), or_none(q), int(a), int(b), int(c), dist, int(w))
        for (p, d, q), a, b, c, dist, w in zip(
            queue_keys, frames.tolist(), workloads.tolist(), timed_sum.tolist(), per_queue,
            warm_frames.tolist(), strict=True,
        )
    ]  # fmt: skip
    queues.sort(key=lambda x: queue_order((x.process, x.device, x.queue)))
    # Each device's GPU time per steady frame with a timed workload: its queues' sum.
    (frame_process, frame_device, _), at = distinct_rows(
        process[counted], device[counted], frame[counted]
    )
    frame_ns = _sums(at, len(frame_process), ns[counted])
    device_columns, on_device = distinct_rows(frame_process, frame_device)
    device_keys = list(zip(*(c.tolist() for c in device_columns), strict=True))
    by_device = sorted_values(on_device, frame_ns, np.arange(len(device_keys)))
    devices = {}
    for (p, d), dist in zip(device_keys, by_device.rows(0, len(device_keys)), strict=True):
        if dist is not None:
            devices[(p, or_none(d))] = dist
    return queues, devices


def sum_up_columns(summary: Summary, capture: Capture, counters: Sequence[str]) -> None:
    """Sums up every instance of `capture` into `summary` (Summary.run), from its stored
    columns, which hold `counters`."""
    identities = IdentityColumns(counters, stored_rows(capture))
    labels: dict[str, list[int]] = {}  # labels JSON -> [workloads, timed, GPU time]
    frames = _Frames()
    batches = instance_batches(capture, counters, BATCH_ROWS, dictionaries=True, columns=_COLUMNS)
    for batch in batches:
        _batch(summary, batch, identities, labels, frames)
    frames.sum_up(summary)
    for path, (workloads, timed, ns) in labels.items():
        summary.labels.add(labels_of(path), workloads, timed, ns)
    summary.distributions = identities.result()


def _in(numbers: Numbers | None, values: list[int | None], rows: Ints) -> Bools:
    """Which rows' value (an index into `values`) is among `numbers` (None: all)."""
    if numbers is None:
        return np.ones(len(rows), bool)
    chosen = np.array([v in numbers for v in values], bool)
    return chosen[rows] if len(values) else np.zeros(0, bool)


def _batch(
    summary: Summary, batch: pa.RecordBatch, identities: IdentityColumns,
    labels: dict[str, list[int]], per_frame: _Frames,
) -> None:  # fmt: skip
    selection = summary.selection
    frames, inverse = frame_groups(batch)
    chosen = _in(selection.frames, [or_none(f) for _, _, f in frames], inverse)
    queue_ids = ints(batch.column("queue_id"))
    queues, queue = groups(queue_ids)
    chosen &= _in(selection.queues, [or_none(q) for (q,) in queues], queue)
    gpu_column = batch.column("gpu_ns")
    timed = valid(gpu_column)
    gpu = ints(gpu_column, 0)
    if chosen.any():
        found, at = groups(inverse[chosen], queue[chosen])
        keys = np.array(found, np.int64).reshape(-1, 2)
        frame_keys = np.array(frames, np.int64).reshape(-1, 3)[keys[:, 0]]
        per_frame.totals.append([
            *frame_keys.T, np.array([queues[k][0] for k in keys[:, 1]], np.int64),
            np.bincount(at, minlength=len(found)),
            _sums(at, len(found), timed[chosen].astype(np.int64)),
            _sums(at, len(found), np.where(timed, gpu, 0)[chosen]),
        ])  # fmt: skip
    if selection.types is not None:
        types, type_ = texts(batch.column("type"), "unknown")
        wanted = np.array([(t or "unknown") in selection.types for t in types], bool)
        chosen &= wanted[type_]
    paths, path = texts(batch.column("labels_json"), "[]")
    if selection.label is not None:
        label = selection.label
        wanted = np.array([label.matches("/".join(labels_of(p))) for p in paths], bool)
        chosen &= wanted[path]
    warm = warm_rows(summary.warmup, frames, inverse)
    left_out = chosen & warm
    if left_out.any():
        summary.warmup_workloads += int(left_out.sum())
        for k in np.unique(inverse[left_out]).tolist():
            p, d, f = frames[k]
            summary.warmup_met.add((p, or_none(d), or_none(f)))
    steady = chosen & ~warm
    if not steady.any():
        return
    per_frame.steady.append(
        list(np.array(frames, np.int64).reshape(-1, 3)[np.unique(inverse[steady])].T)
    )
    steady_timed = steady & timed
    summary.workloads += int(steady.sum())
    summary.timed += int(steady_timed.sum())
    summary.gpu_ns += int(gpu[steady_timed].sum())
    _costliest(summary, batch, steady, steady_timed, gpu, queue_ids)
    found, at = groups(path[steady])
    n = np.bincount(at, minlength=len(found))
    n_timed = np.bincount(at, weights=steady_timed[steady], minlength=len(found))
    ns = np.zeros(len(found), np.int64)
    np.add.at(ns, at, np.where(steady_timed, gpu, 0)[steady])
    for (p,), count, count_timed, total in zip(
        found, n.tolist(), n_timed.tolist(), ns.tolist(), strict=True
    ):
        totals = labels.setdefault(paths[p], [0, 0, 0])
        totals[0] += count
        totals[1] += int(count_timed)
        totals[2] += total
    identities.add(batch, steady)


def _costliest(
    summary: Summary, batch: pa.RecordBatch, steady: Bools, steady_timed: Bools, gpu: Ints,
    queue_ids: Ints,
) -> None:  # fmt: skip
    """The batch's costliest steady instances, offered to the ranking."""
    costliest = summary.costliest
    if costliest.n <= 0:
        return
    values: np.ndarray
    if costliest.sort == GPU_NS:
        candidates, values, whole = steady_timed, gpu, False
    else:
        column = batch.column(costliest.sort)
        candidates = steady & valid(column)
        values = np.asarray(pc.fill_null(column, 0.0).to_numpy(), np.float64)
        whole = True
    rows = np.flatnonzero(candidates)
    if not len(rows):
        return
    ids = ints(batch.column("id"))
    order = np.lexsort((ids[rows], -values[rows]))[: costliest.n]
    chosen = rows[order]
    process, device, frame = (ints(batch.column(c)) for c in ("process", "device", "frame"))
    for i in chosen.tolist():
        value = values[i].item()
        costliest.offer(
            whole_number(value) if whole else value,
            Placed(
                int(process[i]), or_none(int(device[i])), or_none(int(frame[i])),
                or_none(int(queue_ids[i])), int(ids[i]),
            ),
        )  # fmt: skip
