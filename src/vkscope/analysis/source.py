"""The SQL the analyses run, one frame at a time, so that no query result is held whole.

A frame is (process, device, frame number); its instances are found through the submits index
on the frame number, then by rowid range. Aggregates come from SQLite; orderings that Python
would otherwise need the whole frame for (intervals by begin, workloads by identity) are SQLite
sorts, which spill to temporary files rather than grow without bound.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any, Final

from ..capture import Capture
from .spans import Span, span_of

_FRAME: Final = """
FROM submits s
CROSS JOIN workload_instances i
  ON i.id >= s.first_instance AND i.id < s.first_instance + s.instance_count
"""
_WHERE: Final = "WHERE s.frame = ? AND s.process = ? AND s.device IS ?"
_USABLE: Final = "i.gpu_begin_ns IS NOT NULL AND i.gpu_end_ns >= i.gpu_begin_ns"

_TOTALS: Final = f"""
SELECT s.queue, count(*), sum(CASE WHEN {_USABLE} THEN i.gpu_end_ns - i.gpu_begin_ns END)
{_FRAME} {_WHERE} GROUP BY s.queue
"""
_INTERVALS: Final = f"""
SELECT i.gpu_begin_ns, i.gpu_end_ns {_FRAME} {_WHERE} AND s.queue IS ? AND {_USABLE}
ORDER BY i.gpu_begin_ns
"""
_IDENTITIES: Final = """
SELECT s.queue, w.type, coalesce(l.label_path, '') AS label_path, i.gpu_begin_ns, i.gpu_end_ns
{frame}
LEFT JOIN {workloads} w ON w.process = i.process AND w.tag_id = i.tag_id
LEFT JOIN label_stacks l
  ON l.process = s.process AND l.device = s.device AND l.id = i.label_stack_id
{where} ORDER BY s.queue, w.type, label_path, i.id
"""


_COUNTER_SUMS: Final = f"""
SELECT s.queue, c.key, sum(c.value)
{_FRAME} LEFT JOIN temp.khr_joined k ON k.id = i.id
CROSS JOIN json_each(coalesce(k.counters, json_extract(i.annex, '$.counters'))) c
{_WHERE} AND c.key IS NOT NULL
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
_I64_MAX: Final = 2**63 - 1


@dataclass(frozen=True, slots=True)
class FrameKey:
    process: int
    device: int | None
    frame: int

    def params(self) -> tuple[Any, ...]:
        return (self.frame, self.process, self.device)

    def order(self) -> tuple[int, bool, int, int]:
        """The order SQLite sorts (process, device, frame) in: a NULL device first."""
        return (self.process, self.device is not None, self.device or 0, self.frame)


def _flags(capture: Capture) -> Iterator[tuple[tuple[int, bool, int, int], bool | None]]:
    _, rows = capture.execute(_CAPTURED)
    for process, device, number, captured in rows:
        order = FrameKey(process, device, number).order()
        yield order, None if captured is None else bool(captured)


def frames_with_work(capture: Capture) -> Iterator[tuple[FrameKey, bool | None]]:
    """Every (process, device, frame) with submits, in that order, with the `captured` flag of
    its FRAME message (None: no FRAME message, or one that did not say). Both lists are sorted
    by SQLite and merged here, so neither is held."""
    _, keys = capture.execute(_FRAME_KEYS)
    flags = _flags(capture)
    pending = next(flags, None)
    for process, device, frame in keys:
        key = FrameKey(process, device, frame)
        order, captured = key.order(), None
        while pending is not None and pending[0] <= order:
            if pending[0] == order:  # a frame number ended twice: the last FRAME message says
                captured = pending[1]
            pending = next(flags, None)
        yield key, captured


def count_frames(capture: Capture, lo: int, hi: int | None) -> int:
    """How many distinct frame numbers from lo to hi (None: no end) have submits."""
    if lo > _I64_MAX:  # a number typed past SQLite's range: no frame has it
        return 0
    _, rows = capture.execute(_COUNT, (lo, _I64_MAX if hi is None else min(hi, _I64_MAX)))
    return int(next(rows)[0])


def count_queues(capture: Capture, lo: int, hi: int | None) -> int:
    """How many distinct queue ids from lo to hi (None: no end) have submits."""
    if lo > _I64_MAX:
        return 0
    _, rows = capture.execute(_COUNT_QUEUES, (lo, _I64_MAX if hi is None else min(hi, _I64_MAX)))
    return int(next(rows)[0])


def queue_ids(capture: Capture) -> list[int]:
    _, rows = capture.execute(_QUEUES)
    return [r[0] for r in rows]


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


def frame_bounds(capture: Capture) -> tuple[int, int] | None:
    _, rows = capture.execute(_BOUNDS)
    lo, hi = next(rows)
    return None if lo is None else (lo, hi)


def queue_totals(capture: Capture, key: FrameKey) -> dict[int | None, tuple[int, int]]:
    """Per queue of the frame: (workloads, GPU time of the usable ones)."""
    _, rows = capture.execute(_TOTALS, key.params())
    return {queue: (count, total or 0) for queue, count, total in rows}


def counter_sums(capture: Capture, key: FrameKey) -> dict[int | None, dict[str, float]]:
    """Each queue's counters of the frame, summed over its instances that have them."""
    out: dict[int | None, dict[str, float]] = {}
    _, rows = capture.execute(_COUNTER_SUMS, key.params())
    for queue, name, total in rows:
        out.setdefault(queue, {})[name] = total
    return out


def queue_span(capture: Capture, key: FrameKey, queue: int | None, workloads: int) -> Span:
    _, rows = capture.execute(_INTERVALS, (*key.params(), queue))
    return span_of(rows, workloads, presorted=True)


def identities(capture: Capture, key: FrameKey) -> Iterator[tuple[Any, ...]]:
    """(queue, type, label path, begin, end) of every workload of the frame, ordered by queue,
    type (NULL first), label path, then submission: each identity's occurrences in order."""
    sql = _IDENTITIES.format(frame=_FRAME, workloads=capture.workloads_table(), where=_WHERE)
    _, rows = capture.execute(sql, key.params())
    return rows
