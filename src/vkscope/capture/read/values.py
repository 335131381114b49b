"""Every workload instance as its identity, where it ran and its values, in submission order:
the one pass a summary of a capture of any length needs.

A row is a small tuple (InstanceValue), not a WorkloadInstance: no WORKLOAD payload is decoded
and no record built, so a million instances stream in a few seconds (docs/bench/
report-summary.md). The identity is counted in Python as the stream goes (identity.Ordinals),
which is an order of magnitude faster than the SQL form sorted by identity (queries.by_identity)
on a long capture; queues are looked up in a small dictionary read first (label stacks are
joined: an application whose labels carry the frame number has new ones every frame).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any, Final, NamedTuple

import msgspec

from .gpu_time import gpu_ns_sql
from .identity import FrameKeyTuple, IdentityOrder, Ordinals, WorkloadIdentity, labels_of, queue_key
from .reader import Capture

_COUNTERS: Final = "coalesce(k.counters, json_extract(i.annex, '$.counters'))"
_SELECT: Final = """
SELECT s.id, s.process, s.device, s.frame, s.queue, i.id, l.path, w.type, {gpu_ns}, {counters}
FROM submits s
CROSS JOIN workload_instances i
  ON i.id >= s.first_instance AND i.id < s.first_instance + s.instance_count
LEFT JOIN {workloads} w ON w.process = i.process AND w.tag_id = i.tag_id
LEFT JOIN label_stacks l
  ON l.process = s.process AND l.device = s.device AND l.id = i.label_stack_id
{khr}
ORDER BY s.id, i.id
"""
_FRAME_ENDS: Final = """
SELECT max(s.id), s.process, s.device, s.frame FROM submits s
GROUP BY s.process, s.device, s.frame ORDER BY 1
"""
_QUEUES: Final = "SELECT process, device, id, family, queue_index FROM queues"

_decode_counters = msgspec.json.Decoder(dict[str, Any]).decode


class InstanceValue(NamedTuple):
    """One workload instance in a values stream."""

    process: int
    device: int | None
    frame: int | None
    queue: int | None
    id: int  # the instance (WorkloadInstance.id)
    order: IdentityOrder  # its identity, as (queue, labels as JSON, type or "", ordinal)
    labels: tuple[str, ...]
    gpu_ns: int | None  # its usable GPU time (gpu_time.py)
    counters: dict[str, int | float] | None  # its counter values; None without counters

    @property
    def frame_key(self) -> FrameKeyTuple:
        return (self.process, self.device, self.frame)

    @property
    def identity(self) -> WorkloadIdentity:
        queue, _, type_text, ordinal = self.order
        return WorkloadIdentity(queue, self.labels, type_text or None, ordinal)


def instance_values(capture: Capture, *, counters: bool = False) -> Iterator[InstanceValue]:
    """Every instance of the capture in submission order (see the module's docstring).

    `counters`: also read each instance's counter values (khr counters joined over their
    passes), which costs a JSON decode per instance.
    """
    _, queue_rows = capture.execute(_QUEUES)
    queues = {(p, d, i): queue_key(f, x, i) for p, d, i, f, x in queue_rows}
    sql = _SELECT.format(
        gpu_ns=gpu_ns_sql("i.gpu_begin_ns", "i.gpu_end_ns"),
        counters=_COUNTERS if counters else "NULL",
        workloads=capture.workloads_table(),
        khr="LEFT JOIN temp.khr_joined k ON k.id = i.id" if counters else "",
    )
    _, ends = capture.execute(_FRAME_ENDS)
    _, rows = capture.execute(sql)
    ordinals = Ordinals()
    end = next(ends, None)
    decode = _decode_counters
    make = tuple.__new__
    last_submit = None
    key = ""
    counts: dict[tuple[int | None, str, str], int] = {}
    for submit_row, process, device, frame, queue, id_, path, type_, gpu_ns, values in rows:
        if submit_row != last_submit:  # what is the same for every instance of a submit
            last_submit = submit_row
            while end is not None and end[0] < submit_row:  # past a frame's last submit
                ordinals.release((end[1], end[2], end[3]))
                end = next(ends, None)
            counts = ordinals.counts((process, device, frame))
            key = queues.get((process, device, queue)) or queue_key(None, None, queue)
        labels_json = path or "[]"
        type_text = type_ or ""
        scope = (queue, labels_json, type_text)
        ordinal = counts.get(scope, 0)
        counts[scope] = ordinal + 1
        found = None
        if values is not None:
            decoded = decode(values)
            found = {k: v for k, v in decoded.items() if isinstance(v, int | float)}
        yield make(InstanceValue, (
            process, device, frame, queue, id_, (key, labels_json, type_text, ordinal),
            labels_of(path), gpu_ns, found,
        ))  # fmt: skip
