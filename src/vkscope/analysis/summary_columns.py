"""The summary's pass (summary.py) over the instance columns a capture stored when it was
finalized, a record batch at a time, with numpy: the same sums, rankings and distributions as the
pass over instances one at a time, with no Python work per instance.

Per batch, what is the same for many rows is decided once per distinct value: a frame's place in
the selection and whether it is warm-up (per distinct process, device and frame), a type's and a
label path's (per dictionary entry). Per frame and queue the totals go to QueueFrames as the
Python pass gives them; the costliest instances of a batch are offered to Costliest; label paths
and identities are gathered as arrays (capture/read/distribution_columns.py).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from ..capture import Capture
from ..capture.read.columns import instance_batches
from ..capture.read.distribution_columns import (
    Bools,
    IdentityColumns,
    Ints,
    frame_groups,
    groups,
    ints,
    or_none,
    texts,
    valid,
    warm_rows,
)
from ..capture.read.distributions import whole_number
from ..capture.read.identity import labels_of
from .selection import Numbers
from .summary import GPU_NS, Placed, Summary


def sum_up_columns(summary: Summary, capture: Capture, counters: Sequence[str]) -> None:
    """Sums up every instance of `capture` into `summary` (Summary.run), from its stored
    columns, which hold `counters`."""
    identities = IdentityColumns(counters)
    labels: dict[str, list[int]] = {}  # labels JSON -> [workloads, timed, GPU time]
    for batch in instance_batches(capture, counters, dictionaries=True):
        _batch(summary, batch, identities, labels)
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
    labels: dict[str, list[int]],
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
    _queue_totals(summary, frames, inverse, queues, queue, chosen, timed, gpu)
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
    for k in np.unique(inverse[steady]).tolist():
        p, d, f = frames[k]
        summary.count_frame((p, or_none(d), or_none(f)))
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


def _queue_totals(
    summary: Summary, frames: list[tuple[int, ...]], inverse: Ints, queues: list[tuple[int, ...]],
    queue: Ints, chosen: Bools, timed: Bools, gpu: Ints,
) -> None:  # fmt: skip
    """Each chosen frame's workloads, timed workloads and GPU time per queue, to QueueFrames,
    frame by frame in order."""
    if not chosen.any():
        return
    found, at = groups(inverse[chosen], queue[chosen])
    n = np.bincount(at, minlength=len(found)).tolist()
    n_timed = np.bincount(at, weights=timed[chosen], minlength=len(found)).tolist()
    ns = np.zeros(len(found), np.int64)
    np.add.at(ns, at, np.where(timed, gpu, 0)[chosen])
    queue_frames = summary.queue_frames
    for (frame, q), count, count_timed, total in zip(found, n, n_timed, ns.tolist(), strict=True):
        p, d, f = frames[frame]
        totals = queue_frames.frame((p, or_none(d), or_none(f)))
        key = or_none(queues[q][0])
        t = totals.get(key)
        if t is None:
            t = totals[key] = [0, 0, 0]
        t[0] += count
        t[1] += int(count_timed)
        t[2] += total


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
