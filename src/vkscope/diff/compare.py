"""Matches the workloads of two captures by identity and judges every cost change.

Both captures are attached read-only to one scratch SQLite connection whose own database is a
private temporary file (capture/read/attach.py). SQL numbers each workload instance within its
scope (see docs/diff.md, "Identity") and hands the instances of both captures back sorted by
identity, so Python only ever holds the per-frame times of one identity. Each identity's verdict
goes into a table of the scratch database, which the output then reads back in whatever order it
needs. Nothing grows with the size of the captures except that temporary file.
"""

from __future__ import annotations

import os
import re
import sqlite3
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

import msgspec

from ..capture import CaptureError
from ..capture.read import performance_query
from ..capture.read.attach import AttachedCapture, ScratchDatabase
from ..capture.read.reader import open_capture
from .stats import (
    IMPROVEMENT,
    REGRESSION,
    STATUSES,
    Rule,
    Summary,
    Verdict,
    judge,
    median,
    summarize,
)

MATCHED: Final = "matched"
ADDED: Final = "added"
REMOVED: Final = "removed"
BASE, NEW = 0, 1

_BATCH: Final = 10_000  # verdict rows per INSERT

# An instance's cost (`dur`): by default its GPU time, from the columns, or, where a vkscope stored
# the timing annex without copying it into them, the annex itself (only a pair of integers with
# end >= begin is a time); with a counter metric, that counter's value from the annex, or, for
# khr counters, from the values joined over the pass cycle, as every reader shows them.
_INSTANCES: Final = """
SELECT {side} AS side, p, d, f, qk, path, type, iid, {value} AS dur
FROM (
    SELECT i.id AS iid, s.process AS p, s.device AS d, s.frame AS f,
           CASE WHEN j.counters IS NOT NULL THEN json_object('counters', json(j.counters))
                ELSE i.annex END AS an,
           coalesce(q.family || '.' || q.queue_index, 'id ' || s.queue, '?') AS qk,
           coalesce(l.path, '[]') AS path,
           coalesce(w.type, '') AS type,
           coalesce(i.gpu_begin_ns, json_extract(i.annex, '$.gpu_begin_ns')) AS gb,
           coalesce(i.gpu_end_ns, json_extract(i.annex, '$.gpu_end_ns')) AS ge
    FROM {workload_instances} i
    JOIN {submits} s ON s.id = i.submit_row
    LEFT JOIN {workloads} w ON w.process = i.process AND w.tag_id = i.tag_id
    LEFT JOIN {label_stacks} l
           ON l.process = s.process AND l.device = s.device AND l.id = i.label_stack_id
    LEFT JOIN {queues} q ON q.process = s.process AND q.device = s.device AND q.id = s.queue
    LEFT JOIN {joined} j ON j.id = i.id
)
"""

# The ordinal: how many workloads of the same type were submitted before this one under the same
# label path, on the same queue, in the same frame (of the same process and device).
GPU_NS: Final = "gpu_ns"
_GPU_VALUE: Final = (
    "CASE WHEN typeof(gb) = 'integer' AND typeof(ge) = 'integer' AND ge >= gb THEN ge - gb END"
)
_COUNTER_VALUE: Final = (
    "CASE WHEN json_type(an, '$.counters.{name}') IN ('integer', 'real') "
    "THEN json_extract(an, '$.counters.{name}') END"
)
_METRIC_NAME: Final = re.compile(r"[a-z][a-z0-9_]*")

_ORDINALS: Final = """
SELECT side, qk, path, type,
       row_number() OVER (PARTITION BY p, d, f, qk, path, type ORDER BY iid) - 1 AS ordinal,
       dur
FROM ({instances})
"""

_BY_IDENTITY: Final = """
SELECT qk, path, type, ordinal, side, dur FROM ({base} UNION ALL {new})
ORDER BY qk, path, type, ordinal, side
"""

_PER_FRAME: Final = """
SELECT count(*), count(dur), sum(dur) FROM ({instances}) GROUP BY p, d, f
"""

_RESULTS: Final = """
CREATE TABLE result (
    kind TEXT NOT NULL,
    status TEXT,
    qk TEXT NOT NULL,
    path TEXT NOT NULL,
    type TEXT NOT NULL,
    ordinal INTEGER NOT NULL,
    b_frames INTEGER NOT NULL,
    b_samples INTEGER NOT NULL,
    b_median REAL,
    b_noise REAL,
    n_frames INTEGER NOT NULL,
    n_samples INTEGER NOT NULL,
    n_median REAL,
    n_noise REAL,
    delta REAL,
    delta_pct REAL,
    bound REAL
)
"""

_COLUMNS: Final = (
    "kind, status, qk, path, type, ordinal, b_frames, b_samples, b_median, b_noise, "
    "n_frames, n_samples, n_median, n_noise, delta, delta_pct, bound"
)
_IDENTITY_ORDER: Final = "qk, path, type, ordinal"

_decode_labels = msgspec.json.Decoder(list[str]).decode


class DiffInputError(Exception):
    """A capture that cannot be compared; the message says which file and why."""


@dataclass(frozen=True, slots=True)
class Identity:
    type: str | None  # None: the layer never described the workload
    labels: tuple[str, ...]
    ordinal: int
    queue: str  # "family.index", or "id N" for a queue its DEVICE message did not list

    @property
    def label_path(self) -> str:
        return "/".join(self.labels)


@dataclass(frozen=True, slots=True)
class Side:
    frames: int  # frames it ran in, timed or not
    summary: Summary  # over the frames it was timed in


@dataclass(frozen=True, slots=True)
class Row:
    kind: str  # MATCHED, ADDED or REMOVED
    identity: Identity
    base: Side | None  # None when added
    new: Side | None  # None when removed
    verdict: Verdict | None  # for matched workloads only


@dataclass(frozen=True, slots=True)
class CaptureFacts:
    path: Path
    status: str
    schema_version: int
    workloads: int  # instances
    timed_workloads: int
    frames: int  # frames with submitted work
    timed_frames: int  # frames with at least one timed workload
    workloads_per_frame: float  # median over frames with work
    gpu_per_frame: Summary  # summed workload GPU time per timed frame


class Diff:
    """Two captures compared: facts about each, the frame totals, and the verdict table.

    Use as a context manager (or call close()): the verdicts live in a temporary database.
    """

    def __init__(self, base: Path | str, new: Path | str, rule: Rule, metric: str = GPU_NS) -> None:
        self.rule = rule
        self.metric = metric
        if metric != GPU_NS and not _METRIC_NAME.fullmatch(metric):
            raise DiffInputError(
                f"--metric {metric!r}: gpu_ns or a counter name (docs/counters.md)"
            )
        self._value = _GPU_VALUE if metric == GPU_NS else _COUNTER_VALUE.format(name=metric)
        self._paths = (Path(base), Path(new))
        self._scratch = ScratchDatabase()
        self._db = self._scratch.db
        try:
            # Sorts spill to temporary files rather than grow in memory; worker threads make
            # the big sorts faster without raising the peak much (docs/bench/diff-memory.md).
            self._db.execute("PRAGMA temp_store=FILE")
            self._db.execute(f"PRAGMA threads={min(4, os.cpu_count() or 1)}")
            try:
                sources = [
                    self._scratch.attach(path, name)
                    for path, name in zip(self._paths, ("base", "new"), strict=True)
                ]
            except CaptureError as exc:
                raise DiffInputError(str(exc)) from None
            self._joined = ["main.no_joined", "main.no_joined"]
            self._db.execute("CREATE TABLE no_joined (id INTEGER PRIMARY KEY, counters TEXT)")
            if metric != GPU_NS:
                for side, src in enumerate(sources):
                    self._join_khr(side, src)
            self.base, self.new = (self._facts(src, side) for side, src in enumerate(sources))
            self.total = judge(self.base.gpu_per_frame, self.new.gpu_per_frame, rule)
            self._match(sources)
            self.counts = self._counts()
            self.queues = self._db.execute("SELECT count(DISTINCT qk) FROM result").fetchone()[0]
        except sqlite3.Error as exc:
            self._scratch.close()
            raise _problem(self._paths, exc) from None
        except BaseException:
            self._scratch.close()
            raise

    def __enter__(self) -> Diff:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        self._scratch.close()

    @property
    def regressed(self) -> bool:
        return self.counts[REGRESSION] > 0 or self.total.status == REGRESSION

    # -- reading the verdicts back -------------------------------------------------------------

    def rows(
        self, kind: str, statuses: tuple[str, ...] = (), limit: int | None = None
    ) -> Iterator[Row]:
        """Matched workloads by |change| (largest first), added and removed ones by cost."""
        where, params = ["kind = ?"], [kind]
        if statuses:
            where.append(f"status IN ({', '.join('?' * len(statuses))})")
            params.extend(statuses)
        if kind == MATCHED:
            order = "delta IS NULL, abs(delta) DESC"
        else:
            cost = "n_median" if kind == ADDED else "b_median"
            order = f"{cost} IS NULL, {cost} DESC"
        sql = f"SELECT {_COLUMNS} FROM result WHERE {' AND '.join(where)} "
        sql += f"ORDER BY {order}, {_IDENTITY_ORDER}"
        if limit is not None:
            sql += f" LIMIT {int(limit)}"
        for r in self._db.execute(sql, params):
            yield _row(r)

    # -- building -------------------------------------------------------------------------------

    def _join_khr(self, side: int, src: AttachedCapture) -> None:
        """khr counters: each instance's values joined over its pass cycle, from a reader of the
        capture (which joins them on opening), into a table of the scratch database."""
        try:
            found = self._db.execute(
                f"SELECT 1 FROM {src.table('device_counters')} WHERE source = ? LIMIT 1",
                (performance_query.SOURCE,),
            ).fetchone()
        except sqlite3.OperationalError:  # a capture older than counters
            return
        if found is None:
            return
        table = f"main.joined_{side}"
        self._db.execute(f"CREATE TABLE {table} (id INTEGER PRIMARY KEY, counters TEXT)")
        try:
            with open_capture(src.path, check_cells=False) as capture:
                _, rows = capture.execute(f"SELECT id, counters FROM {performance_query.TABLE}")
                self._db.executemany(f"INSERT INTO {table} VALUES (?, ?)", rows)
        except CaptureError as exc:
            raise DiffInputError(str(exc)) from None
        self._joined[side] = table

    def _facts(self, src: AttachedCapture, side: int) -> CaptureFacts:
        path, meta = src.path, src.meta
        per_frame = _PER_FRAME.format(
            instances=_instances(src, BASE, self._value, self._joined[side])
        )
        try:
            counts: list[int] = []
            totals: list[int] = []
            timed = 0
            for n, n_timed, total in self._db.execute(per_frame):
                counts.append(n)
                timed += n_timed
                if n_timed:
                    totals.append(total)
        except sqlite3.Error as exc:
            raise _problem((path,), exc) from None
        workloads = sum(counts)
        if not workloads:
            why = (
                "no application connected while it was recorded"
                if not meta.connections
                else f"status {meta.status}, {meta.connections} connection(s)"
            )
            raise DiffInputError(
                f"{path}: the capture holds no workloads ({why}): nothing to compare"
            )
        if not timed and self.metric != GPU_NS:
            raise DiffInputError(
                f"{path}: no values of counter {self.metric!r} in this capture "
                f"({workloads:,} workloads): record both captures with vkscope run --counters"
            )
        if not timed:
            raise DiffInputError(
                f"{path}: no GPU timings in this capture ({workloads:,} workloads, none timed): "
                "costs can only be compared between captures recorded with the layer's timing "
                "setting on"
            )
        frames = len(counts)
        return CaptureFacts(
            path=path,
            status=meta.status,
            schema_version=meta.schema_version,
            workloads=workloads,
            timed_workloads=timed,
            frames=frames,
            timed_frames=len(totals),
            workloads_per_frame=median(counts),
            gpu_per_frame=summarize(totals),
        )

    def _match(self, sources: list[AttachedCapture]) -> None:
        db = self._db
        db.execute(_RESULTS)
        sql = _BY_IDENTITY.format(
            base=_ORDINALS.format(
                instances=_instances(sources[BASE], BASE, self._value, self._joined[BASE])
            ),
            new=_ORDINALS.format(
                instances=_instances(sources[NEW], NEW, self._value, self._joined[NEW])
            ),
        )
        insert = f"INSERT INTO result VALUES ({', '.join('?' * 17)})"
        rule = self.rule
        batch: list[tuple[Any, ...]] = []
        key: tuple[str, str, str, int] | None = None
        frames = [0, 0]
        times: tuple[list[int], list[int]] = ([], [])
        db.execute("BEGIN")
        # One pass over both captures' instances, sorted by identity: each identity's run of
        # rows is summed up the moment the next identity starts.
        for qk, path, type_, ordinal, side, dur in db.execute(sql):
            this = (qk, path, type_, ordinal)
            if this != key:
                if key is not None:
                    batch.append(_verdict_row(key, frames, times, rule))
                    if len(batch) >= _BATCH:
                        db.executemany(insert, batch)
                        batch.clear()
                key = this
                frames = [0, 0]
                times = ([], [])
            frames[side] += 1
            if dur is not None:
                times[side].append(dur)
        if key is not None:
            batch.append(_verdict_row(key, frames, times, rule))
        db.executemany(insert, batch)
        db.execute("COMMIT")

    def _counts(self) -> dict[str, int]:
        counts = dict.fromkeys((MATCHED, ADDED, REMOVED, *STATUSES), 0)
        for kind, status, n in self._db.execute(
            "SELECT kind, status, count(*) FROM result GROUP BY kind, status"
        ):
            counts[kind] += n
            if status is not None:
                counts[status] += n
        return counts


def _problem(paths: tuple[Path, ...], exc: sqlite3.Error) -> DiffInputError:
    """What an SQLite error met while reading the captures means."""
    text = str(exc)
    if "full" in text or "temporary" in text:
        return DiffInputError(
            "out of room for the comparison's temporary files (SQLITE_TMPDIR, /var/tmp or /tmp): "
            f"SQLite says {text!r}"
        )
    names = " or ".join(str(p) for p in paths)
    return DiffInputError(f"{names}: truncated or damaged: SQLite says {text!r}")


def _instances(src: AttachedCapture, side: int, value: str, joined: str) -> str:
    tables = ("workload_instances", "submits", "workloads", "label_stacks", "queues")
    return _INSTANCES.format(
        side=side, value=value, joined=joined, **{t: src.table(t) for t in tables}
    )


def _verdict_row(
    key: tuple[str, str, str, int],
    frames: list[int],
    times: tuple[list[int], list[int]],
    rule: Rule,
) -> tuple[Any, ...]:
    base, new = summarize(times[BASE]), summarize(times[NEW])
    if frames[BASE] and frames[NEW]:
        kind = MATCHED
        v: Verdict | None = judge(base, new, rule)
    else:
        kind = ADDED if frames[NEW] else REMOVED
        v = None
    return (
        kind, v.status if v else None, *key,
        frames[BASE], base.samples, base.median_ns, base.noise_ns,
        frames[NEW], new.samples, new.median_ns, new.noise_ns,
        v.delta_ns if v else None, v.delta_pct if v else None, v.bound_ns if v else None,
    )  # fmt: skip


def _row(r: tuple[Any, ...]) -> Row:
    kind, status = r[0], r[1]
    identity = Identity(r[4] or None, tuple(_decode_labels(r[3])), r[5], r[2])
    base = Side(r[6], Summary(r[7], r[8], r[9])) if kind != ADDED else None
    new = Side(r[10], Summary(r[11], r[12], r[13])) if kind != REMOVED else None
    verdict = Verdict(status, r[14], r[15], r[16]) if kind == MATCHED else None
    return Row(kind, identity, base, new, verdict)


__all__ = [
    "ADDED",
    "IMPROVEMENT",
    "MATCHED",
    "REGRESSION",
    "REMOVED",
    "CaptureFacts",
    "Diff",
    "DiffInputError",
    "Identity",
    "Row",
    "Side",
]
