"""Reads a capture file: checks what it is before trusting it, then streams records out of it.

open_capture() tells apart, with a specific CaptureError each, a missing file, an empty one,
one that is not SQLite, SQLite that is not a capture, a capture from a newer vkscope, and a
truncated or damaged capture. Reads go straight to SQLite cursors; nothing is loaded whole.
"""

from __future__ import annotations

import sqlite3
import struct
from collections.abc import Iterator
from functools import lru_cache
from pathlib import Path
from typing import Any, Final

import msgspec

from . import schema
from .compat import present_current_schema
from .errors import (
    CaptureError,
    CaptureNotFoundError,
    CorruptCaptureError,
    EmptyCaptureError,
    NewerCaptureError,
    NotACaptureError,
    NotSQLiteError,
)
from .journal import JournalError
from .present import present_journal
from .records import CaptureMeta, Device, Diagnostic, Frame, Process, Queue, WorkloadInstance

_META_FIELDS: Final = tuple(f for f in CaptureMeta.__dataclass_fields__ if f != "extra")

_INSTANCES: Final = """
SELECT i.id, i.process, i.submit_id, i.tag_id, i.ordinal, s.device, s.queue, s.frame,
       w.type, w.api, l.path, w.metadata, i.annex, s.cpu_ns, i.gpu_begin_ns, i.gpu_end_ns,
       i.timing, i.timing_reason, i.serialization, s.cpu_complete_ns
FROM submits s
CROSS JOIN workload_instances i
  ON i.id >= s.first_instance AND i.id < s.first_instance + s.instance_count
{workloads_join} {workloads} w ON w.process = i.process AND w.tag_id = i.tag_id
LEFT JOIN label_stacks l
  ON l.process = s.process AND l.device = s.device AND l.id = i.label_stack_id
"""
# CROSS JOIN pins the loop order: submits (found by index when filtered by frame) outside, their
# instances by rowid range inside. Left to itself, the planner may start from a filter on
# workloads and scan the instances once per workload.

_decode_json = msgspec.json.Decoder().decode


@lru_cache(maxsize=4096)
def _labels(path: str | None) -> tuple[str, ...]:
    return tuple(_decode_json(path)) if path else ()


def _check_header(path: Path) -> None:
    """Classifies the file from its first bytes, before SQLite gets a say."""
    try:
        size = path.stat().st_size
        with path.open("rb") as f:
            header = f.read(100)
    except FileNotFoundError:
        raise CaptureNotFoundError(path, "no such file") from None
    except IsADirectoryError:
        raise NotSQLiteError(path, "is a directory, not a capture file") from None
    except OSError as exc:
        raise CaptureError(path, f"cannot read: {exc.strerror}") from None
    wal = Path(f"{path}-wal")
    if size == 0 and not (wal.exists() and wal.stat().st_size):
        raise EmptyCaptureError(path, "the file is empty (0 bytes): no capture was ever written")
    if not header.startswith(schema.SQLITE_MAGIC):
        raise NotSQLiteError(
            path, f"not a vkscope capture: not an SQLite database (it starts {header[:16]!r})"
        )
    if len(header) < 100:
        raise CorruptCaptureError(path, f"truncated: {size} bytes, shorter than an SQLite header")
    page_size = struct.unpack_from(">H", header, 16)[0]
    page_size = 65536 if page_size == 1 else page_size
    pages, valid_for = struct.unpack_from(">I", header, 28)[0], header[92:96]
    if wal.exists():
        return  # until the log is folded back in, the main file's size says little
    expected = pages * page_size if valid_for == header[24:28] else None
    if size % page_size or (expected is not None and size < expected):
        what = f"its header says {expected} bytes" if expected else f"{page_size}-byte pages"
        raise CorruptCaptureError(path, f"truncated or damaged: {size} bytes, but {what}")


def _connect(path: Path) -> sqlite3.Connection:
    uri = path.resolve().as_uri() + "?mode=ro"
    try:
        return sqlite3.connect(uri, uri=True, check_same_thread=False)
    except sqlite3.Error as exc:
        raise CaptureError(path, f"cannot open: {exc}") from None


def _translate(path: Path, exc: sqlite3.Error | sqlite3.Warning) -> CaptureError:
    text = str(exc)
    if "not a database" in text:
        return NotSQLiteError(path, f"not a vkscope capture: SQLite says {text!r}")
    if "malformed" in text or "corrupt" in text or "disk I/O" in text:
        return CorruptCaptureError(path, f"truncated or damaged: SQLite says {text!r}")
    return CaptureError(path, f"cannot read: SQLite says {text!r}")


def _refuse_attach(action: int, *_: object) -> int:
    if action in (sqlite3.SQLITE_ATTACH, sqlite3.SQLITE_DETACH):
        return sqlite3.SQLITE_DENY
    return sqlite3.SQLITE_OK


def open_capture(path: Path | str) -> Capture:
    """Opens a capture file for reading; raises a CaptureError subclass saying what is wrong."""
    path = Path(path)
    _check_header(path)
    db = _connect(path)
    try:
        version = db.execute("PRAGMA user_version").fetchone()[0]
        tables = {r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type='table'")}
        if version > schema.SCHEMA_VERSION:
            raise NewerCaptureError(path, version, schema.SCHEMA_VERSION)
        missing = {"meta", "workload_instances", "submits", "workloads"} - tables
        if version == 0 or missing:
            what = f"no {', '.join(sorted(missing))} table" if missing else "schema version 0"
            raise NotACaptureError(path, f"an SQLite database, but not a vkscope capture ({what})")
        meta = dict(db.execute("SELECT key, value FROM meta").fetchall())
        present_current_schema(db, version)
        present_journal(db)  # a capture not finalized: what waits in its journal
    except sqlite3.Error as exc:
        db.close()
        raise _translate(path, exc) from None
    except JournalError as exc:
        db.close()
        raise CorruptCaptureError(path, f"damaged: {exc}") from None
    except CaptureError:
        db.close()
        raise
    return Capture(path, db, meta)


class Capture:
    """A capture file open for reading. Use as a context manager, or call close()."""

    def __init__(self, path: Path, db: sqlite3.Connection, meta: dict[str, Any]) -> None:
        self.path = path
        self._db = db
        self._workloads: str | None = None
        known: dict[str, Any] = {k: meta.get(k) for k in _META_FIELDS}
        for counter in ("connections", "messages", "bad_messages", "skipped_messages", "dropped"):
            known[counter] = known[counter] or 0
        known["status"] = known["status"] or schema.STATUS_CAPTURING
        extra = {k: v for k, v in meta.items() if k not in known}
        self.meta = CaptureMeta(**known, extra=extra)

    def __enter__(self) -> Capture:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        self._db.close()

    def _rows(self, sql: str, params: tuple[Any, ...] = ()) -> Iterator[tuple[Any, ...]]:
        try:
            yield from self._db.execute(sql, params)
        except sqlite3.Error as exc:
            raise _translate(self.path, exc) from None

    def execute(self, sql: str, params: tuple[Any, ...] = ()) -> tuple[list[str], Iterator[Any]]:
        """Runs one SELECT: its column names, and its rows streamed from SQLite.

        Errors, from SQLite or from the statement itself, are raised as CaptureError.
        """
        try:
            cursor = self._db.execute(sql, params)
        except (sqlite3.Error, sqlite3.Warning) as exc:  # Warning: several statements at once
            raise _translate(self.path, exc) from None
        columns = [d[0] for d in cursor.description or ()]
        return columns, self._stream(cursor)

    def _stream(self, cursor: sqlite3.Cursor) -> Iterator[Any]:
        try:
            # Not `yield from`: closing a half-read stream would close the cursor too, which
            # fails once the capture itself is closed.
            for row in cursor:  # noqa: UP028
                yield row
        except sqlite3.Error as exc:
            raise _translate(self.path, exc) from None

    def lock(self) -> None:
        """From now on, no statement on this connection may change anything or attach a file.

        For SQL typed by a user: the connection is read-only already, but its temp schema is
        not, and ATTACH could create or write another file.
        """
        self.workloads_table()  # made now: it needs the temp schema
        self._db.execute("PRAGMA query_only = 1")
        self._db.set_authorizer(_refuse_attach)

    def processes(self) -> list[Process]:
        sql = (
            "SELECT id, process, peer, pid, name, layer_version, protocol, state, messages, "
            "bad_messages, skipped_messages, dropped FROM processes ORDER BY id"
        )
        return [Process(*r) for r in self._rows(sql)]

    def devices(self) -> list[Device]:
        return [Device(*r) for r in self._rows("SELECT * FROM devices ORDER BY process, id")]

    def queues(self, device: int | None = None) -> list[Queue]:
        sql = "SELECT * FROM queues WHERE ?1 IS NULL OR device = ?1 ORDER BY process, device, id"
        return [
            Queue(r[0], r[1], r[2], r[3], r[4], _labels(r[5]), r[6])
            for r in self._rows(sql, (device,))
        ]

    def frames(self) -> list[Frame]:
        sql = (
            "SELECT process, device, number, queue, cpu_ns, reason, captured FROM frames "
            "ORDER BY id"
        )
        return [
            Frame(r[0], r[1], r[2], r[3], r[4], r[5], None if r[6] is None else bool(r[6]))
            for r in self._rows(sql)
        ]

    def diagnostics(self) -> list[Diagnostic]:
        sql = "SELECT connection, offset, kind, message_type, reason, excerpt FROM diagnostics"
        return [
            Diagnostic(r[0], r[1], r[2], r[3], r[4], bytes.fromhex(r[5] or ""))
            for r in self._rows(sql + " ORDER BY id")
        ]

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
        """Workload instances in submission order, filtered by what is given, streamed."""
        where, params = [], []
        for column, value in (("s.frame", frame), ("s.queue", queue), ("w.type", type),
                              ("s.process", process), ("s.device", device)):  # fmt: skip
            if value is not None:
                where.append(f"{column} = ?")
                params.append(value)
        # Filtering on the type makes the join an inner one anyway; saying so keeps it in order.
        sql = _INSTANCES.format(
            workloads_join="CROSS JOIN" if type is not None else "LEFT JOIN",
            workloads=self.workloads_table(),
        )
        sql += (" WHERE " + " AND ".join(where)) if where else ""
        sql += " ORDER BY s.id, i.id"
        from_id = schema.from_sql_id
        for r in self._rows(sql, tuple(params)):
            metadata: dict[str, Any] = _decode_json(r[11]) if r[11] else {}
            if r[12]:
                metadata.update(_decode_json(r[12]))
            yield WorkloadInstance(
                r[0], r[1], from_id(r[2]), from_id(r[3]), r[4], r[5], r[6], r[7], r[8], r[9],
                _labels(r[10]), metadata, r[13], r[14], r[15], r[16], r[17], r[18], r[19],
            )  # fmt: skip

    def workloads_table(self) -> str:
        """The name of the workloads table to join in SQL of one's own: indexed by (process,
        tag_id), one row per tagID, also for a capture that was never finalized."""
        if self._workloads is not None:
            return self._workloads
        for where in ("temp", "main"):  # temp: built from the journal (present.py)
            found = self._db.execute(
                f"SELECT 1 FROM {where}.sqlite_master WHERE type = 'index' AND name = ?",
                (schema.WORKLOADS_INDEX,),
            ).fetchone()
            if found:
                self._workloads = f"{where}.workloads"
                return self._workloads
        # Never finalized (killed, or still being written), so not indexed yet: index a copy of
        # our own, in this connection's temporary database, rather than let every query build
        # one. Workloads described after this point are not in it.
        try:
            self._db.execute(
                "CREATE TEMP TABLE workloads_indexed AS SELECT * FROM main.workloads WHERE rowid "
                "IN (SELECT max(rowid) FROM main.workloads GROUP BY process, tag_id)"
            )
            self._db.execute(
                "CREATE UNIQUE INDEX temp.workloads_indexed_by_tag "
                "ON workloads_indexed (process, tag_id)"
            )
        except sqlite3.Error as exc:
            raise _translate(self.path, exc) from None
        self._workloads = "temp.workloads_indexed"
        return self._workloads

    def submitted_frames(self) -> list[tuple[int, int | None, int | None]]:
        """(process, device, frame) of every frame that has submits, in submission order."""
        sql = (
            "SELECT process, device, frame FROM submits GROUP BY process, device, frame "
            "ORDER BY min(id)"
        )
        return [(r[0], r[1], r[2]) for r in self._rows(sql)]

    def workload_count(self) -> int:
        return next(self._rows("SELECT count(*) FROM workload_instances"))[0]  # type: ignore[no-any-return]

    def check(self) -> None:
        """Reads every page (slow on big files); raises CorruptCaptureError on damage."""
        result = [r[0] for r in self._rows("PRAGMA quick_check")]
        if result != ["ok"]:
            raise CorruptCaptureError(self.path, "damaged: " + "; ".join(result[:5]))
