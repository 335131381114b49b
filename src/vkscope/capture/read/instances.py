"""Workload instances as typed records: the one place where a capture's stored rows are decoded.

An instance is its WORKLOAD's fields (the `workloads` row of its tagID: extracted columns and
the payload as sent), its own place (submit, queue, frame, label stack), every ANNEX merged
(timing in its columns, the rest as annex JSON) and, for khr counters, the values joined over
their passes (performance_query.py). `Instances` streams them in submission order, each with its
identity (identity.py), and decodes each stored payload once: a WORKLOAD's JSON once per tagID
for every stream of the capture (its instances share it), an annex once for its instance.

Memory does not grow with the capture: rows stream from SQLite, the decoded workloads are a
bounded cache, and the identity's ordinals are counted only for the frames the stream is in (a
second, small query over `submits` says where each frame's last submit is).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any, Final

import msgspec

from ..schema import from_sql_id
from .gpu_time import usable_gpu_ns
from .identity import (
    FrameKeyTuple,
    Ordinals,
    WorkloadIdentity,
    labels_of,
    queue_key,
)
from .records import WorkloadInstance
from .timer_floor import QueueFloors, near_floor

_SELECT: Final = """
SELECT i.id, i.process, i.submit_id, i.tag_id, i.ordinal, s.device, s.queue, s.frame,
       w.type, w.api, l.path, w.metadata, i.annex, s.cpu_ns, i.gpu_begin_ns, i.gpu_end_ns,
       i.timing, i.timing_reason, i.serialization, s.cpu_complete_ns, {khr_columns}, s.id
FROM submits s
CROSS JOIN workload_instances i
  ON i.id >= s.first_instance AND i.id < s.first_instance + s.instance_count
{workloads_join} {workloads} w ON w.process = i.process AND w.tag_id = i.tag_id
LEFT JOIN label_stacks l
  ON l.process = s.process AND l.device = s.device AND l.id = i.label_stack_id
{khr_join}
"""
# Only a capture with khr counters joins their passes' values (performance_query.py).
_KHR: Final = {"khr_columns": "k.counters, k.missing",
               "khr_join": "LEFT JOIN temp.khr_joined k ON k.id = i.id"}  # fmt: skip
_NO_KHR: Final = {"khr_columns": "NULL, NULL", "khr_join": ""}
# CROSS JOIN pins the loop order: submits (found by index when filtered by frame) outside, their
# instances by rowid range inside. Left to itself, the planner may start from a filter on
# workloads and scan the instances once per workload.

# Where each frame's last submit is, in submission order: past it, its ordinals are released.
# (One frame, filtered by its number, has nothing to release before the stream ends.)
_FRAME_ENDS: Final = """
SELECT max(s.id), s.process, s.device, s.frame FROM submits s{where}
GROUP BY s.process, s.device, s.frame ORDER BY 1
"""

_WORKLOADS_CACHED: Final = 16_384  # decoded WORKLOAD payloads a capture keeps for its streams

# (process, tagID) -> its WORKLOAD's fields, decoded: shared by every stream of one capture.
WorkloadCache = dict[tuple[int, int], dict[str, Any]]

_decode_object = msgspec.json.Decoder(dict[str, Any]).decode


class Query:
    """The statements of one stream: its instances, and where each of its frames ends."""

    def __init__(
        self,
        workloads: str,
        frame: int | None = None,
        queue: int | None = None,
        type: str | None = None,
        process: int | None = None,
        device: int | None = None,
        khr: bool = False,
    ) -> None:
        where: list[str] = []
        params: list[Any] = []
        for column, value in (("s.frame", frame), ("s.queue", queue), ("s.process", process),
                              ("s.device", device)):  # fmt: skip
            if value is not None:
                where.append(f"{column} = ?")
                params.append(value)
        # Where each frame ends, among the same submits.
        self.ends_sql: str | None = None
        self.ends_params = tuple(params)
        if frame is None:
            filters = " WHERE " + " AND ".join(where) if where else ""
            self.ends_sql = _FRAME_ENDS.format(where=filters)
        if type is not None:
            where.append("w.type = ?")
            params.append(type)
        # Filtering on the type makes the join an inner one anyway; saying so keeps it in order.
        sql = _SELECT.format(
            workloads_join="CROSS JOIN" if type is not None else "LEFT JOIN",
            workloads=workloads,
            **(_KHR if khr else _NO_KHR),
        )
        sql += (" WHERE " + " AND ".join(where)) if where else ""
        self.sql = sql + " ORDER BY s.id, i.id"
        self.params = tuple(params)


class Instances:
    """Turns a stream's rows into WorkloadInstance records (see the module's docstring).

    `ends`: (last submit row, process, device, frame) of each frame of the stream, ordered by
    the submit row; None when the stream is one frame. `workloads`: the capture's cache of
    decoded WORKLOADs, which its streams share (a report reads a frame's queues one by one).
    `queues`: the identity's queue (identity.queue_key) of each (process, device, queue id) the
    capture lists. `floors`: the timer's floor of each queue (timer_floor.py), which gives each
    GPU time its uncertainty and says whether it is near the floor.
    """

    def __init__(
        self,
        ends: Iterator[tuple[Any, ...]] | None,
        workloads: WorkloadCache,
        queues: dict[tuple[int, int | None, int | None], str],
        floors: QueueFloors | None = None,
    ) -> None:
        self._workloads = workloads
        self._queues = queues
        self._floors = floors if floors else None
        self._ordinals = Ordinals()
        self._ends = ends
        self._next_end: tuple[Any, ...] | None = next(ends, None) if ends is not None else None

    def _metadata(self, process: int, tag: int, text: str | None) -> dict[str, Any]:
        found = self._workloads.get((process, tag))
        if found is None:
            if len(self._workloads) >= _WORKLOADS_CACHED:
                self._workloads.clear()
            found = self._workloads[(process, tag)] = _decode_object(text) if text else {}
        return found  # shared by the instances of the tagID: a copy takes what merges into it

    def _release(self, submit_row: int) -> None:
        end = self._next_end
        ends = self._ends
        assert ends is not None
        while end is not None and end[0] < submit_row:
            self._ordinals.release((end[1], end[2], end[3]))
            end = next(ends, None)
        self._next_end = end

    def record(self, r: tuple[Any, ...]) -> WorkloadInstance:
        """The record of one row of the stream's statement."""
        metadata = self._metadata(r[1], r[3], r[11])
        if r[12] or r[20] is not None:
            metadata = dict(metadata)
        if r[12]:
            metadata.update(_decode_object(r[12]))
        if r[20] is not None:  # joined over their passes (performance_query.py)
            values = _decode_object(r[20])
            if values or metadata.get("counters") is not None:
                metadata["counters"] = values or None
            missing = _decode_object(r[21])
            if missing:
                metadata["counters_missing"] = missing
        if self._next_end is not None and self._next_end[0] < r[22]:
            self._release(r[22])
        labels = labels_of(r[10])
        frame: FrameKeyTuple = (r[1], r[5], r[7])
        ordinal = self._ordinals.next(frame, (r[6], r[10] or "[]", r[8] or ""))
        queue = self._queues.get((r[1], r[5], r[6])) or queue_key(None, None, r[6])
        identity = WorkloadIdentity(queue, labels, r[8] or None, ordinal)
        uncertainty = near = None
        if self._floors is not None:
            gpu_ns = usable_gpu_ns(r[14], r[15])
            if gpu_ns is not None:
                uncertainty, near_ns = self._floors.bounds(r[1], r[5], r[6])
                near = near_floor(gpu_ns, near_ns)
        return WorkloadInstance(
            r[0], r[1], from_sql_id(r[2]), from_sql_id(r[3]), r[4], r[5], r[6], r[7], r[8], r[9],
            labels, metadata, r[13], r[14], r[15], r[16], r[17], r[18], r[19], identity,
            uncertainty, near,
        )  # fmt: skip
