"""The few aggregate queries readers need, as functions over an open capture.

Each runs in SQLite and hands back what the reader asks for, never a table's rows whole: counts,
sums and bounds, the frames that have work, a frame's usable GPU intervals in order of their
begin, instances in identity order. A frame is (process, device, frame number) (FrameKey); its
instances are found through the submits index on the frame number, then by rowid range.
Orderings that Python would otherwise need a whole frame (or capture) for are SQLite sorts,
which spill to temporary files rather than grow without bound.

Values: GPU_NS is an instance's usable GPU time (gpu_time.py); any other name is that counter's
value, from its annex or, for khr counters, joined over their passes (performance_query.py).
"""

from __future__ import annotations

import heapq
import re
from collections.abc import Iterator
from typing import Any, Final

from .gpu_time import gpu_ns_sql, usable_sql
from .identity import (
    LABELS_SQL,
    ORDER_SQL,
    ORDINAL_SQL,
    QUEUE_SQL,
    QUEUES_JOIN,
    TYPE_SQL,
    IdentityOrder,
)
from .left_out import LEFT_OUT_SQL
from .reader import Capture
from .records import FrameKey, IdentifiedValue, TimingCount

GPU_NS: Final = "gpu_ns"
COUNTER_NAME: Final = re.compile(r"[a-z][a-z0-9_]*")  # what a counter value may be named

_FRAME: Final = """
FROM submits s
CROSS JOIN workload_instances i
  ON i.id >= s.first_instance AND i.id < s.first_instance + s.instance_count
"""
_IN_FRAME: Final = "s.frame = ? AND s.process = ? AND s.device IS ?"
_USABLE: Final = usable_sql("i.gpu_begin_ns", "i.gpu_end_ns")
_GPU_NS: Final = gpu_ns_sql("i.gpu_begin_ns", "i.gpu_end_ns")
_I64_MAX: Final = 2**63 - 1
_COUNTERS: Final = "coalesce(k.counters, json_extract(i.annex, '$.counters'))"

_TOTALS: Final = f"""
SELECT s.queue, count(*), sum({_GPU_NS}) {_FRAME} WHERE {_IN_FRAME} GROUP BY s.queue
"""
_INTERVALS: Final = f"""
SELECT i.gpu_begin_ns, i.gpu_end_ns {_FRAME}
WHERE {_IN_FRAME} AND s.queue IS ? AND {_USABLE} ORDER BY i.gpu_begin_ns
"""
_COUNTER_SUMS: Final = f"""
SELECT s.queue, c.key, sum(c.value)
{_FRAME} LEFT JOIN temp.khr_joined k ON k.id = i.id CROSS JOIN json_each({_COUNTERS}) c
WHERE {_IN_FRAME} AND c.key IS NOT NULL
GROUP BY s.queue, c.key ORDER BY s.queue, c.key
"""
_FRAME_KEYS: Final = """
SELECT process, device, frame FROM submits WHERE frame IS NOT NULL
GROUP BY process, device, frame ORDER BY process, device, frame
"""
_CAPTURED: Final = """
SELECT process, device, number, captured FROM frames WHERE number IS NOT NULL
ORDER BY process, device, number, id
"""
_COUNT: Final = "SELECT count(DISTINCT frame) FROM submits WHERE frame >= ? AND frame <= ?"
_COUNT_QUEUES: Final = "SELECT count(DISTINCT queue) FROM submits WHERE queue >= ? AND queue <= ?"
_QUEUES: Final = "SELECT DISTINCT queue FROM submits WHERE queue IS NOT NULL ORDER BY queue"
_TYPES: Final = "SELECT DISTINCT type FROM {workloads}"
_UNDESCRIBED: Final = """
SELECT 1 FROM workload_instances i
WHERE NOT EXISTS (SELECT 1 FROM {workloads} w WHERE w.process = i.process AND w.tag_id = i.tag_id)
LIMIT 1
"""
_LABEL_PATHS: Final = "SELECT DISTINCT label_path FROM label_stacks"
_UNLABELLED: Final = "SELECT 1 FROM workload_instances WHERE label_stack_id = 0 LIMIT 1"
_BOUNDS: Final = "SELECT min(frame), max(frame) FROM submits"
_FRAME_COUNTS: Final = """
SELECT (SELECT count(*) FROM (SELECT 1 FROM submits GROUP BY process, device, frame)),
       (SELECT count(*) FROM frames)
"""
_FIRST_SUBMIT: Final = f"SELECT min(s.cpu_ns) FROM submits s WHERE {_IN_FRAME}"
_TIMING_COUNTS: Final = """
SELECT serialization, timing, timing_reason, count(*), count(gpu_begin_ns)
FROM workload_instances GROUP BY serialization, timing, timing_reason
"""
_BEGIN_OFFSETS: Final = """
SELECT s.process, s.device, count(*), max(s.cpu_ns - i.gpu_begin_ns),
       min(i.gpu_begin_ns - s.cpu_ns), max(i.gpu_begin_ns - s.cpu_ns)
FROM workload_instances i JOIN submits s ON s.id = i.submit_row
WHERE typeof(i.gpu_begin_ns) = 'integer' AND s.cpu_ns IS NOT NULL
GROUP BY s.process, s.device
"""
# Every instance with what its identity needs (and its khr counters joined), for SQL that
# selects {identity} first and sorts by ORDER_SQL.
_IDENTITY_FROM: Final = f"""
{_FRAME}
LEFT JOIN {{workloads}} w ON w.process = i.process AND w.tag_id = i.tag_id
LEFT JOIN label_stacks l
  ON l.process = s.process AND l.device = s.device AND l.id = i.label_stack_id
{QUEUES_JOIN}
LEFT JOIN temp.khr_joined k ON k.id = i.id
"""
_IDENTITY: Final = (
    f"{QUEUE_SQL} AS queue_key, {LABELS_SQL} AS labels_json, {TYPE_SQL} AS type_text, "
    f"{ORDINAL_SQL} AS ordinal"
)
_BY_IDENTITY: Final = f"""
SELECT {_IDENTITY}, s.queue, {{value}} AS value, s.process, s.device, s.frame,
       i.id, {LEFT_OUT_SQL} AS left_out
{_IDENTITY_FROM}
{{where}} ORDER BY {ORDER_SQL}, i.id
"""
# Each instance with its identity, its value, and whether it was measured (coverage.py's rule),
# sorted by identity like _BY_IDENTITY.
_COVERAGE: Final = f"""
SELECT {_IDENTITY}, {{value}} AS value, {{measured}} AS measured,
       {{left_out}} AS left_out, {{reason}} AS reason
{_IDENTITY_FROM}
ORDER BY {ORDER_SQL}, i.id
"""
_PER_FRAME: Final = f"""
SELECT s.process, s.device, s.frame, count(*), count({{value}}), sum({{value}})
{_FRAME} LEFT JOIN temp.khr_joined k ON k.id = i.id
GROUP BY s.process, s.device, s.frame
"""


def _frame_params(key: FrameKey) -> tuple[Any, ...]:
    return (key.frame, key.process, key.device)


def value_sql(value: str) -> str:
    """SQL for an instance's value (see the module's docstring); raises ValueError for a name
    that cannot be a counter's."""
    if value == GPU_NS:
        return _GPU_NS
    if not COUNTER_NAME.fullmatch(value):
        raise ValueError(f"not a counter name: {value!r}")
    path = f"'$.{value}'"
    return (
        f"CASE WHEN json_type({_COUNTERS}, {path}) IN ('integer', 'real') "
        f"THEN json_extract({_COUNTERS}, {path}) END"
    )


# -- frames ------------------------------------------------------------------------------------


def frames_with_work(capture: Capture) -> Iterator[tuple[FrameKey, bool | None]]:
    """Every (process, device, frame) with submits, in that order, with the `captured` flag of
    its FRAME message (None: no FRAME message, or one that did not say). Both lists are sorted
    by SQLite and merged here, so neither is held."""
    _, keys = capture.execute(_FRAME_KEYS)
    _, flag_rows = capture.execute(_CAPTURED)
    flags = (
        (FrameKey(p, d, n).order(), None if c is None else bool(c)) for p, d, n, c in flag_rows
    )
    pending = next(flags, None)
    for process, device, frame in keys:
        key = FrameKey(process, device, frame)
        order, captured = key.order(), None
        while pending is not None and pending[0] <= order:
            if pending[0] == order:  # a frame number ended twice: the last FRAME message says
                captured = pending[1]
            pending = next(flags, None)
        yield key, captured


def _count(capture: Capture, sql: str, lo: int, hi: int | None) -> int:
    if lo > _I64_MAX:  # a number typed past SQLite's range: none has it
        return 0
    _, rows = capture.execute(sql, (lo, _I64_MAX if hi is None else min(hi, _I64_MAX)))
    return int(next(rows)[0])


def count_frames(capture: Capture, lo: int, hi: int | None) -> int:
    """How many distinct frame numbers from lo to hi (None: no end) have submits."""
    return _count(capture, _COUNT, lo, hi)


def count_queues(capture: Capture, lo: int, hi: int | None) -> int:
    """How many distinct queue ids from lo to hi (None: no end) have submits."""
    return _count(capture, _COUNT_QUEUES, lo, hi)


def queue_ids(capture: Capture) -> list[int]:
    """The queue ids that submits went to, in order."""
    _, rows = capture.execute(_QUEUES)
    return [r[0] for r in rows]


def frame_bounds(capture: Capture) -> tuple[int, int] | None:
    """The first and last frame number with submits; None when there is none."""
    _, rows = capture.execute(_BOUNDS)
    lo, hi = next(rows)
    return None if lo is None else (lo, hi)


def frame_counts(capture: Capture) -> tuple[int, int]:
    """(frames with submits, FRAME messages) of the capture."""
    _, rows = capture.execute(_FRAME_COUNTS)
    with_work, ended = next(rows)
    return int(with_work), int(ended)


def first_submit_ns(capture: Capture, key: FrameKey) -> int | None:
    """When the frame's first submission was made (CPU time), if any says."""
    _, rows = capture.execute(_FIRST_SUBMIT, _frame_params(key))
    row = next(rows, None)
    return row[0] if row else None


# -- what the capture's workloads are -------------------------------------------------------------


def workload_types(capture: Capture) -> set[str]:
    """The types the capture's workloads have; "unknown" for one the layer never described."""
    workloads = capture.workloads_table()
    _, rows = capture.execute(_TYPES.format(workloads=workloads))
    types = {r[0] or "unknown" for r in rows}
    _, undescribed = capture.execute(_UNDESCRIBED.format(workloads=workloads))
    if next(undescribed, None) is not None:
        types.add("unknown")
    return types


def label_paths(capture: Capture) -> Iterator[str]:
    """Every label path of the capture ("" when some workload has no label)."""
    _, unlabelled = capture.execute(_UNLABELLED)
    if next(unlabelled, None) is not None:
        yield ""
    _, rows = capture.execute(_LABEL_PATHS)
    for (path,) in rows:
        yield path


# -- GPU time ---------------------------------------------------------------------------------


def queue_totals(capture: Capture, key: FrameKey) -> dict[int | None, tuple[int, int]]:
    """Per queue of the frame: (workloads, usable GPU time summed)."""
    _, rows = capture.execute(_TOTALS, _frame_params(key))
    return {queue: (count, total or 0) for queue, count, total in rows}


def gpu_intervals(capture: Capture, key: FrameKey, queue: int | None) -> Iterator[tuple[int, int]]:
    """The usable (begin, end) GPU times of the queue's workloads in the frame, by begin."""
    _, rows = capture.execute(_INTERVALS, (*_frame_params(key), queue))
    return rows


def timing_counts(capture: Capture) -> list[TimingCount]:
    """Instances per combination of serialization, timing status and reason."""
    _, rows = capture.execute(_TIMING_COUNTS)
    return [TimingCount(*r) for r in rows]


def gpu_begin_offsets(capture: Capture) -> dict[tuple[int, int], tuple[int, int, int, int]]:
    """Per (process, device): instances with a GPU begin time, and of their begin against their
    submit's CPU time: max(submit - begin), min(begin - submit), max(begin - submit)."""
    _, rows = capture.execute(_BEGIN_OFFSETS)
    return {(r[0], r[1]): (r[2], r[3], r[4], r[5]) for r in rows}


# -- counters ---------------------------------------------------------------------------------


def counter_sums(capture: Capture, key: FrameKey) -> dict[int | None, dict[str, float]]:
    """Each queue's counters of the frame, summed over its instances that have them."""
    out: dict[int | None, dict[str, float]] = {}
    _, rows = capture.execute(_COUNTER_SUMS, _frame_params(key))
    for queue, name, total in rows:
        out.setdefault(queue, {})[name] = total
    return out


# -- identities -------------------------------------------------------------------------------


def by_identity(
    capture: Capture, value: str = GPU_NS, key: FrameKey | None = None
) -> Iterator[IdentifiedValue]:
    """Every instance (of the frame `key`, or of the whole capture) with its value, sorted by
    identity (identity.ORDER_SQL): an identity's instances come one after the other, from frame
    to frame in submission order. Sorted by SQLite, so nothing is held."""
    where, params = "", ()
    if key is not None:
        where, params = f"WHERE {_IN_FRAME}", _frame_params(key)
    sql = _BY_IDENTITY.format(
        value=value_sql(value), workloads=capture.workloads_table(), where=where
    )
    _, rows = capture.execute(sql, params)
    return map(IdentifiedValue._make, rows)


def coverage_stream(
    capture: Capture, value: str, measured: str, left_out: str, reason: str
) -> Iterator[tuple[str, str, str, int, Any, int, int, str | None]]:
    """Every instance sorted by identity (as by_identity), as (queue key, labels JSON, type or
    "", ordinal, value, measured, left out, reason): `measured`, `left_out` and `reason` are the
    SQL of coverage.py's rule over the instance `i`."""
    sql = _COVERAGE.format(
        value=value_sql(value), measured=measured, left_out=left_out, reason=reason,
        workloads=capture.workloads_table(),
    )  # fmt: skip
    _, rows = capture.execute(sql)
    return rows


def merge_by_identity(
    *streams: Iterator[IdentifiedValue],
) -> Iterator[tuple[IdentityOrder, list[list[IdentifiedValue]]]]:
    """Streams sorted by identity (by_identity, one per capture), joined: each identity once,
    with its instances in each stream (an empty list where a stream has none)."""
    tagged = [_tagged(side, s) for side, s in enumerate(streams)]
    current: IdentityOrder | None = None
    found: list[list[IdentifiedValue]] = []
    for order, side, v in heapq.merge(*tagged, key=lambda t: t[0]):
        if order != current:
            if current is not None:
                yield current, found
            current, found = order, [[] for _ in streams]
        found[side].append(v)
    if current is not None:
        yield current, found


def _tagged(
    side: int, stream: Iterator[IdentifiedValue]
) -> Iterator[tuple[IdentityOrder, int, IdentifiedValue]]:
    for v in stream:
        yield v.order, side, v


def frame_value_totals(
    capture: Capture, value: str = GPU_NS
) -> Iterator[tuple[int, int | None, int | None, int, int, Any]]:
    """Per frame (process, device, frame number; the submits outside any frame as one): the
    frame, its instances, how many have a value, and the sum of their values."""
    sql = _PER_FRAME.format(value=value_sql(value))
    _, rows = capture.execute(sql)
    return rows
