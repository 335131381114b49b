"""Writes a capture file: creates it, commits batches of rows, and finalizes it.

Each commit is one transaction holding every row and journal entry ingested since the last
(ingest.py), made every `batch_messages` messages, `batch_bytes` bytes of payloads or
`commit_interval_s` seconds, so a capture killed at any point keeps everything up to its last
commit. WORKLOADs, SUBMITs' instances and ANNEXes wait in the journal until the capture is
finalized (journal.py); finalizing builds them into their tables (build.py) in one transaction,
so a capture killed while it is finalized is left as it was before. Then a finishing step given
by the caller may add to the committed file, in a transaction of its own (the instance columns:
read/column_store.py).
"""

from __future__ import annotations

import sqlite3
import time
import uuid
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

from ... import __version__
from ...gpu_state import GpuStateBatch
from .. import schema
from ..errors import CaptureError
from ..schema import storable
from .build import JournalBuild, Progress, index_workloads
from .checkpoint import Checkpointer
from .checks import final_checks
from .gpu_rows import SAMPLING_KEY, rows_of, sampling_meta
from .gpu_rows import SQL as GPU_SQL
from .ingest import SQL, Connection, GcPause, Rows, utc_now
from .journal import INSERT as JOURNAL_INSERT
from .wire import INVALID_PAYLOAD, MALFORMED_JSON, Decoder
from .workload_rows import insert_rows

EMPTY: Final = "empty"  # a connection that sent nothing: left out of the status
REFUSED_CONNECTION: Final = "refused_connection"  # the diagnostic's kind
FINISHING: Final = "finishing"  # the diagnostic's kind: the finishing step failed, and why
# A step run on the finalized file, through the writer's connection (in WAL mode, no transaction
# open): the capture package's API stores the instance columns this way (read/column_store.py),
# which the write side itself may not import.
Finishing = Callable[[sqlite3.Connection, Path], object]
# Refused connections said one by one in the diagnostics; past that, only counted (a flood of
# them would otherwise fill the capture).
_REFUSALS_SAID: Final = 20


@dataclass(frozen=True, slots=True)
class Counters:
    """A snapshot for a progress display."""

    connections: int
    open_connections: int
    bytes: int
    messages: int
    workloads: int
    instances: int
    submits: int
    frames: int
    dropped: int
    bad_messages: int
    skipped_messages: int
    uncommitted: int  # messages and diagnostics not yet committed to the file
    refused_connections: int = 0  # from processes of other users: closed unread


# The longest a batch waits for its commit: what a host that is killed can lose.
COMMIT_INTERVAL_S: Final = 0.25


def _dropped(conns: list[Connection]) -> int:
    # The layer's count runs for its whole life, across reconnections: one number per process.
    latest: dict[int, int] = {}
    for c in conns:
        latest[c.process] = max(latest.get(c.process, 0), c.dropped)
    return sum(latest.values())


def _process_row(c: Connection) -> tuple[Any, ...]:
    h = c.hello
    said = (h.pid, h.process, h.layer_version, h.protocol) if h else (None, None, None, None)
    who = (c.id, c.process, c.peer, *said)
    counts = (c.bytes, c.messages, c.bad, c.skipped, c.dropped)
    return tuple(map(storable, (*who, c.connected_utc, c.closed_utc, c.state, *counts)))


class CaptureStore:
    """One capture file being written. Not thread-safe: one thread calls everything."""

    def __init__(
        self,
        path: Path,
        *,
        batch_messages: int = 50_000,
        batch_bytes: int = 32 << 20,
        commit_interval_s: float = COMMIT_INTERVAL_S,
        max_diagnostics_per_connection: int = 1000,
        tags: Mapping[str, str] | None = None,
        finishing: Finishing | None = None,
    ) -> None:
        self.path = Path(path)
        self._tags = dict(tags or {})
        if self.path.exists():
            raise FileExistsError(f"capture file {self.path} already exists")
        self.batch_messages = batch_messages
        self.batch_bytes = batch_bytes
        self.commit_interval_s = commit_interval_s
        self.max_diagnostics = max_diagnostics_per_connection
        self.status: str = schema.STATUS_CAPTURING
        self.connections: list[Connection] = []
        self.refused_connections = 0
        self._db = sqlite3.connect(self.path, isolation_level=None, check_same_thread=False)
        # What the connections sent, waiting for the next commit: the capture server hands each
        # piece of a stream to it (Rows.ingest_frames), and each commit takes it from there.
        self.rows = Rows(self.connections, max_diagnostics_per_connection)
        self._finishing = finishing
        self._bytes_at_commit = 0  # connection bytes received up to the last commit
        # What the host's GPU sampler gave since the last commit (gpu_rows.py).
        self._gpu_rows: dict[str, list[tuple[Any, ...]]] = {name: [] for name in GPU_SQL}
        self._gpu_sampling: str | None = None
        self._last_commit = time.monotonic()
        self._create()
        self._checkpointer = Checkpointer(self.path)

    def _create(self) -> None:
        db = self._db
        for pragma in schema.WRITER_PRAGMAS:
            db.execute(pragma)
        db.execute("BEGIN")
        for statement in schema.TABLES.split(";\n"):
            if statement.strip():
                db.execute(statement)
        db.execute(f"PRAGMA user_version={schema.SCHEMA_VERSION}")
        db.execute(f"PRAGMA application_id={schema.APPLICATION_ID}")
        meta = {
            "schema_version": schema.SCHEMA_VERSION,
            "capture_id": uuid.uuid4().hex,
            "vkscope_version": __version__,
            "created_utc": utc_now(),
            "finished_utc": None,
            "protocol_version": None,
            "process_name": None,
            "pid": None,
        }
        db.executemany("INSERT INTO meta VALUES (?,?)", meta.items())
        db.executemany(
            "INSERT INTO tags VALUES (?,?)",
            [(storable(k), storable(v)) for k, v in self._tags.items()],
        )
        self._write_counters()
        db.execute("COMMIT")

    # -- connections and messages -----------------------------------------------------------

    def connect(self, peer: str) -> Connection:
        number = len(self.connections) + 1
        conn = Connection(number, peer, utc_now(), process=number)
        self.connections.append(conn)
        self.rows.uncommitted += 1
        return conn

    def disconnect(self, conn: Connection) -> None:
        if conn.state == schema.OPEN:
            idle = conn.messages == 0 and conn.bad == 0 and conn.skipped == 0
            conn.state = EMPTY if idle else schema.DISCONNECTED
        conn.closed_utc = utc_now()
        self.rows.uncommitted += 1

    def refuse(self, why: str) -> None:
        """Counts a connection the server closed unread (a process of another user), and says
        why in the diagnostics, for the first few."""
        self.refused_connections += 1
        if self.refused_connections <= _REFUSALS_SAID:
            self.rows.note(None, REFUSED_CONNECTION, f"connection refused: {why}")
        self.rows.uncommitted += 1

    def counters(self) -> Counters:
        conns = list(self.connections)
        count = self.rows.count
        return Counters(
            connections=len(conns),
            open_connections=sum(1 for c in conns if c.closed_utc is None),
            bytes=sum(c.bytes for c in conns),
            messages=sum(c.messages for c in conns),
            workloads=count("workloads"),
            instances=count("instances"),
            submits=count("submits"),
            frames=count("frames"),
            dropped=_dropped(conns),
            bad_messages=sum(c.bad for c in conns),
            skipped_messages=sum(c.skipped for c in conns),
            uncommitted=self.rows.uncommitted,
            refused_connections=self.refused_connections,
        )

    def gpu_state(self, batch: GpuStateBatch) -> None:
        """Takes what the host's GPU sampler gave, for the next commit."""
        for name, rows in rows_of(batch).items():
            self._gpu_rows[name] += rows
            self.rows.uncommitted += len(rows)
        summary = sampling_meta(batch)
        if summary is not None:
            self._gpu_sampling = summary
            self.rows.uncommitted += 1

    # -- commits ----------------------------------------------------------------------------

    def maybe_commit(self) -> bool:
        """Commits when the batch is full or old enough; True when it did.

        Full: `batch_messages` messages and instances (a SUBMIT's list of them is what makes a
        batch big in memory), or `batch_bytes` of stream received."""
        waiting = self.rows.uncommitted
        if not waiting:
            return False
        young = time.monotonic() - self._last_commit < self.commit_interval_s
        if waiting + self.rows.pending_instances < self.batch_messages and young:
            received = sum(c.bytes for c in self.connections)
            if received - self._bytes_at_commit < self.batch_bytes:
                return False
        self.commit()
        return True

    def commit(self) -> None:
        db = self._db
        db.execute("BEGIN")
        try:
            tables = (
                "labels", "devices", "device_counters", "queues", "timer_floors",
                "command_buffer_counters",
            )  # fmt: skip
            for name in tables:
                self._insert(name)
            journal = self.rows.take_journal()
            if journal:
                db.executemany(JOURNAL_INSERT, journal)
            self._insert("logs")
            self._insert("diagnostics")
            self._insert_gpu_state()
            self._write_counters()
            db.execute("COMMIT")
        except BaseException:
            if db.in_transaction:
                db.execute("ROLLBACK")
            raise
        self.rows.uncommitted = 0
        self._last_commit = time.monotonic()
        self._bytes_at_commit = sum(c.bytes for c in self.connections)

    def _insert(self, name: str) -> None:
        rows = self.rows.lists[name]
        if not rows:
            return
        insert_rows(self._db, SQL[name], rows)
        rows.clear()

    def _insert_gpu_state(self) -> None:
        for name, rows in self._gpu_rows.items():
            if rows:
                insert_rows(self._db, GPU_SQL[name], rows)
                rows.clear()
        if self._gpu_sampling is not None:
            self._db.execute(
                "INSERT OR REPLACE INTO meta VALUES (?,?)", (SAMPLING_KEY, self._gpu_sampling)
            )
            self._gpu_sampling = None

    def _write_counters(self) -> None:
        conns = self.connections
        meta: dict[str, Any] = {
            "status": self.status,
            "messages": sum(c.messages for c in conns),
            "bad_messages": sum(c.bad for c in conns),
            "skipped_messages": sum(c.skipped for c in conns),
            "dropped": _dropped(conns),
            "connections": len(conns),
            "refused_connections": self.refused_connections,
        }
        first = next((c.hello for c in conns if c.hello is not None), None)
        if first is not None:
            meta.update(process_name=first.process, pid=first.pid, protocol_version=first.protocol)
        db = self._db
        pairs = [(key, storable(value)) for key, value in meta.items()]
        db.executemany("INSERT OR REPLACE INTO meta VALUES (?,?)", pairs)
        db.executemany(
            "INSERT OR REPLACE INTO processes VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
            [_process_row(c) for c in conns],
        )

    # -- the end ----------------------------------------------------------------------------

    def finalize(self, progress: Progress | None = None) -> str:
        """Closes every connection, builds the journal into the tables, settles the status, and
        leaves a self-contained file. `progress(done, total)` follows the build, in messages."""
        for conn in self.connections:
            if conn.closed_utc is None:
                self.disconnect(conn)
        self.commit()
        db = self._db
        db.execute("BEGIN")
        try:
            JournalBuild(db, self._build_note, final=True).run(progress)
            index_workloads(db, "main")
            final_checks(db, self.connections, self.rows.note)
            for conn in self.connections:
                left_out = conn.diagnostics - self.max_diagnostics
                if left_out > 0:
                    conn.diagnostics = 0  # lets this summary past the cap
                    self.rows.note(
                        conn, "suppressed", f"{left_out} more diagnostics were not recorded"
                    )
            unsaid = self.refused_connections - _REFUSALS_SAID
            if unsaid > 0:
                self.rows.note(None, REFUSED_CONNECTION, f"{unsaid} more connections were refused")
            counted = [c for c in self.connections if c.state != EMPTY]
            complete = bool(counted) and all(c.state == schema.GOODBYE for c in counted)
            self.status = schema.STATUS_COMPLETE if complete else schema.STATUS_INCOMPLETE
            db.execute("INSERT OR REPLACE INTO meta VALUES ('finished_utc', ?)", (utc_now(),))
            self._insert("diagnostics")
            self._write_counters()
            db.execute("COMMIT")
        except BaseException:
            if db.in_transaction:
                db.execute("ROLLBACK")
            raise
        self.rows.uncommitted = 0
        self._checkpointer.stop()
        self._finish()
        # One file again: fold the write-ahead log back in so the capture can be copied as is.
        db.execute("PRAGMA journal_mode=DELETE")
        db.close()
        return self.status

    def _finish(self) -> None:
        """The step after the build, on the committed file (CaptureStore's `finishing`): one
        whose reading of the file fails leaves it as built, and says why in a diagnostic. It is
        an addition to a capture that is whole without it (the stored instance columns): no
        failure of it, expected or not, may cost the capture."""
        if self._finishing is None:
            return
        try:
            self._finishing(self._db, self.path)
        except Exception as exc:  # said in the capture, never lost
            if self._db.in_transaction:
                self._db.execute("ROLLBACK")
            reason = exc.reason if isinstance(exc, CaptureError) else f"{type(exc).__name__}: {exc}"
            self.rows.note(None, FINISHING, f"not finished: {reason}")
            self._db.execute("BEGIN")
            self._insert("diagnostics")
            self._db.execute("COMMIT")

    def _build_note(
        self,
        conn_id: int | None,
        kind: str,
        reason: str,
        offset: int | None = None,
        message_type: int | None = None,
        excerpt: bytes = b"",
    ) -> None:
        conn = self.connections[conn_id - 1] if conn_id else None
        if conn is not None and kind in (INVALID_PAYLOAD, MALFORMED_JSON):
            conn.bad += 1  # a WORKLOAD the protocol does not allow: counted as bad, not stored
            conn.messages -= 1
        self.rows.note(conn, kind, reason, offset, message_type, excerpt)

    def abandon(self) -> None:
        """Closes the file without finalizing; what was committed stays."""
        self._checkpointer.stop()
        self._db.close()


def ingest_stream(store: CaptureStore, peer: str, chunks: Iterable[bytes]) -> Connection:
    """Feeds one whole connection's bytes through a decoder into the store, in process."""
    conn = store.connect(peer)
    decoder = Decoder()
    pause = GcPause()
    try:
        for chunk in chunks:
            conn.bytes += len(chunk)
            pause.hold()
            store.rows.ingest_frames(conn, decoder.feed_frames(chunk))
            if store.maybe_commit():
                pause.release()
    finally:
        pause.release()
    store.rows.ingest(conn, decoder.finish())
    store.disconnect(conn)
    return conn
