"""Reads a capture file: checks what it is before trusting it, then streams records out of it.

open_capture() tells apart, with a specific CaptureError each, a missing file, an empty one,
one that is not SQLite, SQLite that is not a capture, a capture from a newer vkscope, and a
truncated or damaged capture. Reads go straight to SQLite cursors; nothing is loaded whole.
"""

from __future__ import annotations

import os
import sqlite3
from collections.abc import Collection, Iterator
from pathlib import Path
from typing import Any, Final

import msgspec

from ... import pipeline_statistics
from ...protocol import PIPELINE_STATISTIC
from .. import schema
from ..errors import (
    CaptureError,
    CorruptCaptureError,
    JournalError,
    NewerCaptureError,
    NotACaptureError,
    from_sqlite,
)
from . import gpu_state, performance_query
from .compat import indexed_workloads, present_current_schema
from .identity import labels_of, queue_key
from .instances import Instances, Query, WorkloadCache
from .integrity import check_cells as check_cells_of
from .integrity import check_header, check_structure, meta_record
from .present import present_journal
from .read_only import ReadOnly
from .records import (
    BudgetFrame,
    CaptureMeta,
    CommandBufferCounters,
    CounterDetail,
    Device,
    Diagnostic,
    Frame,
    Process,
    Queue,
    Submit,
    WorkloadInstance,
)
from .timer_floor import QueueFloors, TimerFloor

_decode_counters = msgspec.json.Decoder(dict[str, int | float]).decode
_SUBMITS: Final = (
    "SELECT process, submit_id, device, queue, frame, cpu_ns, instance_count, api, batch, "
    "cpu_complete_ns FROM submits ORDER BY id"
)
# Counters in Vulkan's bit order first (pipeline statistics), then by name.
_ORDER: Final = {name: n for n, (_, name) in enumerate(sorted(PIPELINE_STATISTIC))}


def _read_only_uri(path: Path, immutable: bool) -> str:
    """The URI that opens a capture file read-only (immutable: without locks or a -shm)."""
    return path.resolve().as_uri() + "?mode=ro" + ("&immutable=1" if immutable else "")


def _connect(path: Path, immutable: bool) -> sqlite3.Connection:
    uri = _read_only_uri(path, immutable)
    try:
        db = sqlite3.connect(uri, uri=True, check_same_thread=False)
        # Worker threads for SQLite's big sorts (identities, intervals): faster, and the peak
        # barely moves (docs/bench/diff-memory.md).
        db.execute(f"PRAGMA threads={min(4, os.cpu_count() or 1)}")
        return db
    except sqlite3.Error as exc:
        raise CaptureError(path, f"cannot open: {exc}") from None


def open_capture(
    path: Path | str, *, check_cells: bool = True, cells_checked_as_read: Collection[str] = ()
) -> Capture:
    """Opens a capture file for reading; raises a CaptureError subclass saying what is wrong.

    The file, its structure and its meta table are always checked (integrity.py); so is every
    cell, unless `check_cells` is False (for SQL of one's own, which sees the values as stored),
    but those of the tables in `cells_checked_as_read`: for a reader that reads them only as
    columns (columns.CHECKED_AS_READ), which refuse a cell of the wrong type as they read it.
    """
    path = Path(path)
    immutable = check_header(path)
    db = _connect(path, immutable)
    try:
        version = db.execute("PRAGMA user_version").fetchone()[0]
        tables = {r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type='table'")}
        if version > schema.SCHEMA_VERSION:
            raise NewerCaptureError(path, version, schema.SCHEMA_VERSION)
        missing = {"meta", "workload_instances", "submits", "workloads"} - tables
        if version <= 0 or missing:
            what = (
                f"no {', '.join(sorted(missing))} table" if missing else f"schema version {version}"
            )
            raise NotACaptureError(path, f"an SQLite database, but not a vkscope capture ({what})")
        check_structure(db, path, version)
        meta = meta_record(
            path, dict(db.execute("SELECT key, value FROM meta").fetchall()), version
        )
        if check_cells:
            check_cells_of(db, path, version, skip=cells_checked_as_read)
        present_current_schema(db, version)
        present_journal(db)  # a capture not finalized: what waits in its journal
        performance_query.create(db)
        db.execute(f"CREATE TEMP VIEW instance_counters AS {schema.INSTANCE_COUNTERS_SELECT}")
        db.execute(f"CREATE TEMP VIEW instance_counters_missing AS {schema.MISSING_SELECT}")
        db.execute(
            "CREATE TEMP VIEW command_buffer_counter_values AS "
            + schema.COMMAND_BUFFER_COUNTER_VALUES_SELECT
        )
        capture = Capture(path, db, meta, version, _read_only_uri(path, immutable))
        if performance_query.has_khr_counters(db):
            performance_query.fill(db, capture.workloads)
            capture._khr_joined = True
    except (sqlite3.Error, sqlite3.Warning, UnicodeDecodeError) as exc:
        db.close()
        raise from_sqlite(path, exc) from None
    except JournalError as exc:
        db.close()
        raise CorruptCaptureError(path, f"damaged: {exc}") from None
    except CaptureError:
        db.close()
        raise
    return capture


class Capture:
    """A capture file open for reading. Use as a context manager, or call close()."""

    def __init__(
        self, path: Path, db: sqlite3.Connection, meta: CaptureMeta, version: int, uri: str
    ) -> None:
        self.path = path
        self.uri = uri  # what opens the file read-only, for a connection of another driver
        self.meta = meta
        self.schema_version = version  # the file's, as SQLite's user_version says
        self._db = db
        self._workloads: str | None = None
        self._counter_names: tuple[str, ...] | None = None
        self._decoded_workloads: WorkloadCache = {}
        self._queue_keys: dict[tuple[int, int | None, int | None], str] | None = None
        self._khr_joined = False  # khr counters joined over their passes (performance_query.py)
        self._read_only = ReadOnly()
        self._queue_floors: QueueFloors | None = None

    def __enter__(self) -> Capture:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        self._db.close()

    def _rows(self, sql: str, params: tuple[Any, ...] = ()) -> Iterator[tuple[Any, ...]]:
        try:
            # Not `yield from`: closing a half-read stream would close the cursor too, which
            # fails once the capture itself is closed.
            for row in self._db.execute(sql, params):  # noqa: UP028
                yield row
        except (sqlite3.Error, UnicodeDecodeError) as exc:
            raise from_sqlite(self.path, exc) from None

    def execute(self, sql: str, params: tuple[Any, ...] = ()) -> tuple[list[str], Iterator[Any]]:
        """Runs one SELECT: its column names, and its rows streamed from SQLite.

        Errors, from SQLite or from the statement itself, are raised as CaptureError.
        """
        self._read_only.refused = None
        try:
            cursor = self._db.execute(sql, params)
        except (sqlite3.Error, sqlite3.Warning, UnicodeDecodeError) as exc:  # Warning: several
            error = from_sqlite(self.path, exc)
            if self._read_only.refused is not None:
                error = CaptureError(self.path, f"{error.reason} ({self._read_only.refused})")
            raise error from None
        columns = [d[0] for d in cursor.description or ()]
        return columns, self._stream(cursor)

    def _stream(self, cursor: sqlite3.Cursor) -> Iterator[Any]:
        try:
            # Not `yield from`: closing a half-read stream would close the cursor too, which
            # fails once the capture itself is closed.
            for row in cursor:  # noqa: UP028
                yield row
        except (sqlite3.Error, UnicodeDecodeError) as exc:
            raise from_sqlite(self.path, exc) from None

    def lock(self) -> None:
        """From now on, every statement on this connection must be a read (read_only.py).

        For SQL typed by a user: the connection is read-only already, but its temp schema is
        not, and ATTACH or VACUUM INTO could write another file.
        """
        self.workloads_table()  # made now: it needs the temp schema
        self._db.execute("PRAGMA query_only = 1")
        self._db.set_authorizer(self._read_only)

    def processes(self) -> list[Process]:
        sql = (
            "SELECT id, process, peer, pid, name, layer_version, protocol, state, messages, "
            "bad_messages, skipped_messages, dropped FROM processes ORDER BY id"
        )
        return [Process(*r) for r in self._rows(sql)]

    def devices(self) -> list[Device]:
        return [Device(*r) for r in self._rows("SELECT * FROM devices ORDER BY process, id")]

    def queues(self, device: int | None = None) -> list[Queue]:
        sql = "SELECT * FROM queues WHERE ? IS NULL OR device = ? ORDER BY process, device, id"
        try:
            return [
                Queue(r[0], r[1], r[2], r[3], r[4], labels_of(r[5]), r[6])
                for r in self._rows(sql, (device, device))
            ]
        except msgspec.DecodeError as exc:
            raise CorruptCaptureError(
                self.path, f"damaged: queue flags do not parse ({exc})"
            ) from None

    def frames(self) -> list[Frame]:
        sql = (
            "SELECT process, device, number, queue, cpu_ns, reason, captured, pipelines, "
            "shader_modules FROM frames ORDER BY id"
        )
        return [
            Frame(r[0], r[1], r[2], r[3], r[4], r[5], None if r[6] is None else bool(r[6]), r[7],
                  r[8])
            for r in self._rows(sql)
        ]  # fmt: skip

    def budget_frames(self) -> list[BudgetFrame]:
        """What each device's cost budget controller saw and decided, frame by frame (empty for
        a capture without a budget, and before schema 11)."""
        sql = (
            "SELECT process, device, number, state, workloads, measured, interval_ns, sample, "
            "base_ns, unit_ns, frame_ns, rotation, next, recording_ns, recording_share "
            "FROM budget_frames "
            "ORDER BY process, device, number"
        )
        return [
            BudgetFrame(r[0], r[1], r[2], r[3], r[4], r[5], r[6], bool(r[7]), r[8], r[9], r[10],
                        r[11], r[12], r[13], r[14])
            for r in self._rows(sql)
        ]  # fmt: skip

    def budget_percent(self) -> float | None:
        """The cost budget the capture's instruments were held to, in percent of the frame
        (the `budget` setting); None without one."""
        found = [d.budget_percent for d in self.devices() if d.budget_percent is not None]
        return min(found) if found else None

    def diagnostics(self) -> list[Diagnostic]:
        sql = "SELECT connection, offset, kind, message_type, reason, excerpt FROM diagnostics"
        return [
            Diagnostic(r[0], r[1], r[2], r[3], r[4], bytes.fromhex(r[5] or ""))
            for r in self._rows(sql + " ORDER BY id")
        ]

    def command_buffer_counters(self) -> list[CommandBufferCounters]:
        """Each submitted command buffer that collected COMMAND_BUFFER-scope counters (or says
        why it has none), in submission order."""
        sql = (
            "SELECT c.process, c.submit_id, s.device, s.queue, s.frame, s.batch, c.counters, "
            "c.reason, c.pass_index FROM command_buffer_counters c LEFT JOIN submits s "
            "ON s.process = c.process AND s.submit_id = c.submit_id "
            "ORDER BY c.process, c.submit_id"
        )
        return [
            CommandBufferCounters(
                r[0],
                r[1],
                r[2],
                r[3],
                r[4],
                r[5],
                _decode_counters(r[6]) if r[6] is not None else {},
                r[7],
                r[8],
            )
            for r in self._rows(sql)
        ]

    def tags(self) -> dict[str, str]:
        """The capture's tags (vkscope run --tag KEY=VALUE); empty before schema 8."""
        return {str(k): str(v) for k, v in self._rows("SELECT key, value FROM tags ORDER BY key")}

    def gpus(self) -> list[gpu_state.Gpu]:
        """The GPUs the host sampled (docs/gpu-state.md); empty before schema 9, or when
        nothing was sampled."""
        try:
            return [gpu_state.gpu_of(r) for r in self._rows(gpu_state.gpus_sql())]
        except (msgspec.DecodeError, TypeError, KeyError, ValueError) as exc:
            reason = f"damaged: a GPU's row does not parse ({exc})"
            raise CorruptCaptureError(self.path, reason) from None

    def device_gpus(self) -> list[gpu_state.DeviceGpu]:
        """Which sampled GPU each device runs on, or why none."""
        return [gpu_state.DeviceGpu(*r) for r in self._rows(gpu_state.DEVICE_GPUS)]

    def gpu_samples(
        self, gpu: int, begin_ns: int | None = None, end_ns: int | None = None
    ) -> Iterator[gpu_state.GpuSample]:
        """The GPU's samples from begin_ns to end_ns (CLOCK_MONOTONIC), by time, streamed."""
        bounds = (
            gpu,
            -(2**63) if begin_ns is None else begin_ns,
            2**63 - 1 if end_ns is None else end_ns,
        )
        return gpu_state.samples(self._rows(gpu_state.SAMPLES, bounds))

    def gpu_sampling(self) -> gpu_state.GpuSampling | None:
        """The host sampler's own account: its interval, samples, late ticks and CPU time."""
        try:
            return gpu_state.sampling_of(self.meta.extra.get(gpu_state.SAMPLING_KEY))
        except ValueError as exc:
            raise CorruptCaptureError(self.path, f"damaged: {exc}") from None

    def logs(self) -> list[tuple[int, str, str]]:
        return list(self._rows("SELECT process, level, message FROM logs ORDER BY id"))

    def workloads(
        self,
        frame: int | None = None,
        queue: int | None = None,
        type: str | None = None,  # the protocol's name for it
        *,
        process: int | None = None,
        device: int | None = None,
    ) -> Iterator[WorkloadInstance]:
        """Workload instances in submission order, each with its identity, filtered by what is
        given, streamed (instances.py)."""
        query = Query(
            self.workloads_table(), frame, queue, type, process, device, khr=self._khr_joined
        )
        if self._queue_keys is None:
            self._queue_keys = {
                (q.process, q.device, q.id): queue_key(q.family, q.index, q.id)
                for q in self.queues()
            }
        ends = self._rows(query.ends_sql, query.ends_params) if query.ends_sql else None
        instances = Instances(ends, self._decoded_workloads, self._queue_keys, self.queue_floors())
        record = instances.record
        r: tuple[Any, ...] = ()
        try:
            for r in self._rows(query.sql, query.params):
                yield record(r)
        except msgspec.DecodeError as exc:  # only a capture opened without its cells checked
            raise CorruptCaptureError(
                self.path, f"damaged: the JSON of workload instance {r[0]} does not parse ({exc})"
            ) from None

    def timer_floors(self) -> list[TimerFloor]:
        """The timer's floor of each device's queue families (timer_floor.py; docs/timing.md);
        empty before schema 12 and without timing."""
        return list(self.queue_floors().floors)

    def queue_floors(self) -> QueueFloors:
        """The timer's floor of the family of each queue, read once."""
        if self._queue_floors is None:
            self._queue_floors = QueueFloors(self)
        return self._queue_floors

    def submits(self) -> Iterator[Submit]:
        """Every SUBMIT in the order it came, streamed."""
        from_id = schema.from_sql_id
        for r in self._rows(_SUBMITS):
            yield Submit(r[0], from_id(r[1]), *r[2:])

    def workloads_table(self) -> str:
        """The name of the workloads table to join in SQL of one's own: indexed by (process,
        tag_id), one row per tagID, also for a capture that was never finalized."""
        if self._workloads is None:
            try:
                self._workloads = indexed_workloads(self._db)
            except sqlite3.Error as exc:
                raise from_sqlite(self.path, exc) from None
        return self._workloads

    def reads_file_directly(self, tables: tuple[str, ...]) -> bool:
        """Whether these tables read alike through another connection to the file: none is
        presented in this connection's temp schema (an older schema version, a capture never
        finalized: compat.py, present.py), and no khr counters are joined over their passes."""
        names = ", ".join("?" * len(tables))
        sql = f"SELECT 1 FROM temp.sqlite_master WHERE name IN ({names}) LIMIT 1"
        shadowed = next(self._rows(sql, tables), None) is not None
        joined = next(self._rows(f"SELECT 1 FROM {performance_query.TABLE} LIMIT 1"), None)
        return not shadowed and joined is None and self.workloads_table() == "main.workloads"

    def submitted_frames(self) -> list[tuple[int, int | None, int | None]]:
        """(process, device, frame) of every frame that has submits, in submission order."""
        sql = (
            "SELECT process, device, frame FROM submits GROUP BY process, device, frame "
            "ORDER BY min(id)"
        )
        return [(r[0], r[1], r[2]) for r in self._rows(sql)]

    def counter_names(self) -> tuple[str, ...]:
        """Every counter some queue family of the capture collected (COUNTERS) for workloads:
        pipeline statistics in Vulkan's bit order (vkscope/pipeline_statistics.py), then the rest
        by name; empty without counters. Those of COMMAND_BUFFER scope are not workloads':
        command_buffer_counters()."""
        if self._counter_names is None:
            order = _ORDER
            sql = (
                "SELECT DISTINCT name FROM device_counters WHERE name IS NOT NULL "
                "AND coalesce(scope, '') != 'command_buffer'"
            )
            names = [r[0] for r in self._rows(sql)]
            self._counter_names = tuple(sorted(names, key=lambda n: (order.get(n, len(order)), n)))
        return self._counter_names

    def clock_changes(self) -> int:
        """Workload instances during which a sampler's clock counter changed (`clock_changed`
        in their annex): power management changed the clocks under the measurement."""
        sql = (
            "SELECT count(*) FROM workload_instances "
            "WHERE annex LIKE '%clock_changed%' AND json_extract(annex, '$.clock_changed')"
        )
        return int(next(iter(self._rows(sql)))[0])

    def counter_details(self) -> dict[str, CounterDetail]:
        """Per counter of counter_names(): its unit and whether its value is affected by other
        work running at the same time (performance_query's CONCURRENTLY_IMPACTED)."""
        sql = (
            "SELECT name, max(unit), max(concurrently_impacted), max(scope) FROM device_counters "
            "WHERE name IS NOT NULL GROUP BY name"
        )
        rows = {r[0]: r[1:] for r in self._rows(sql)}
        out: dict[str, CounterDetail] = {}
        for name in self.counter_names():
            unit, impacted, scope = rows.get(name, (None, None, None))
            known = pipeline_statistics.describe(name)
            out[name] = CounterDetail(
                unit if unit is not None else (known.unit if known else None),
                bool(impacted),
                scope,
            )
        return out

    def workload_count(self) -> int:
        return next(self._rows("SELECT count(*) FROM workload_instances"))[0]  # type: ignore[no-any-return]

    def check(self) -> None:
        """Reads every page (slow on big files); raises CorruptCaptureError on damage."""
        result = [r[0] for r in self._rows("PRAGMA quick_check")]
        if result != ["ok"]:
            raise CorruptCaptureError(self.path, "damaged: " + "; ".join(result[:5]))
