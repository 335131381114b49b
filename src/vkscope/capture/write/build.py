"""Builds a capture's submits, workloads, workload_instances, annexes, frames and budget_frames
tables from its journal.

The store runs this when it finalizes a capture, into the file itself, consuming the journal
(each row is deleted once built, so the pages it held take the tables' rows and the file does
not grow by the journal's size). A reader of a capture that was not finalized runs it into its
own temporary schema and leaves the file as it is (present.py). Either way the journal is read
row by row in the order it was written and instances are written a chunk at a time, so the
memory it takes does not grow with the capture (annexes.py).
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from typing import Any, Final

import msgspec

from ... import protocol as m
from ...protocol import header_bytes
from .. import schema
from ..errors import JournalError
from . import journal
from .annexes import InstanceMerger, Note
from .completions import Completions
from .wire import bad_payload
from .workload_rows import WorkloadRows, insert_rows

CHUNK_INSTANCES: Final = 100_000  # instance rows held in memory before they are inserted
# The columns of a journal.SubmitRow; cpu_complete_ns is a completion's to set.
SUBMIT_COLUMNS: Final = (
    "id, process, submit_id, device, queue, frame, cpu_ns, api, batch, first_instance, "
    "instance_count"
)
# Built before the rest, in the order they came: every SUBMIT is then in the submits table when
# the first ANNEX is placed (one may name a SUBMIT that came after it), and each completion
# finds the row of a SUBMIT that came before it.
_SUBMIT_KINDS: Final = (journal.SUBMIT_ROWS, journal.COMPLETIONS)

Progress = Callable[[int, int], None]  # (messages built, messages in the journal)

# Payloads of one type, decoded in one call, and one at a time to say which one is bad.
_LIST_DECODERS: Final[dict[int, msgspec.json.Decoder[Any]]] = {
    m.WORKLOAD: msgspec.json.Decoder(list[m.Workload]),
    m.FRAME: msgspec.json.Decoder(list[m.Frame]),
}
_DECODERS: Final[dict[int, msgspec.json.Decoder[Any]]] = {
    m.WORKLOAD: msgspec.json.Decoder(m.Workload),
    m.FRAME: msgspec.json.Decoder(m.Frame),
}


def has_journal(db: sqlite3.Connection, schema: str = "main") -> bool:
    """Whether the capture attached as `schema` has journal rows to build."""
    try:
        return db.execute(f"SELECT 1 FROM {schema}.journal LIMIT 1").fetchone() is not None
    except sqlite3.OperationalError:  # a capture of an earlier schema: no journal
        return False


class JournalBuild:
    """Builds the journal of `source` into the tables of `target` (both schema names).

    `final` says the journal is complete: an annex whose SUBMIT is not in the capture is then
    reported (a reader of a capture still being written may see that SUBMIT later), and each
    journal row is deleted once built.
    """

    def __init__(
        self,
        db: sqlite3.Connection,
        note: Note,
        *,
        source: str = "main",
        target: str = "main",
        final: bool = False,
    ) -> None:
        self._db = db
        self._note = note
        self._source = source
        self._final = final
        self._workloads = WorkloadRows(target)
        self._insert_frame = f"INSERT INTO {target}.frames VALUES (NULL,?,?,?,?,?,?,?,?,?)"
        self._insert_budget = (
            f"INSERT INTO {target}.budget_frames VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)"
        )
        self._insert_submit = (
            f"INSERT INTO {target}.submits ({SUBMIT_COLUMNS}) VALUES (?,?,?,?,?,?,?,?,?,?,?)"
        )
        self._completions = Completions(db, target, note)
        self._instances = InstanceMerger(db, target, note, final=final)

    def size(self) -> int:
        """Messages in the journal still to build."""
        found = self._db.execute(f"SELECT total(count) FROM {self._source}.journal").fetchone()
        return int(found[0])

    def run(self, progress: Progress | None = None) -> None:
        db, source = self._db, self._source
        total = self.size() if progress is not None else 0
        done = 0
        kinds = db.execute(f"SELECT id, kind FROM {source}.journal ORDER BY id").fetchall()
        ids = [i for i, kind in kinds if kind in _SUBMIT_KINDS]
        ids += [i for i, kind in kinds if kind not in _SUBMIT_KINDS]
        select = f"SELECT connection, process, kind, count, data FROM {source}.journal WHERE id = ?"
        for row_id in ids:
            conn_id, process, kind, count, data = db.execute(select, (row_id,)).fetchone()
            if not isinstance(data, bytes):
                raise JournalError(f"journal row {row_id} holds no data")
            entries = journal.decode(row_id, kind, data)
            if kind == journal.SUBMIT_ROWS:
                insert_rows(db, self._insert_submit, entries)
            elif kind == journal.COMPLETIONS:
                self._completions.apply(conn_id, process, entries)
            elif kind == journal.SUBMITS:
                # A chunk ends before SUBMITs rather than after: the ANNEXes that follow them
                # then meet their instances in memory.
                if len(self._instances) >= CHUNK_INSTANCES:
                    self._instances.flush()
                self._instances.submits(process, entries)
            elif kind == journal.ANNEXES:
                self._instances.annexes(conn_id, process, entries)
            elif kind == journal.FRAMES:
                self._build_frames(row_id, conn_id, process, entries)
            else:
                self._build_workloads(row_id, conn_id, process, entries)
            if self._final:
                db.execute(f"DELETE FROM {source}.journal WHERE id = ?", (row_id,))
            if progress is not None:
                done += count
                progress(done, total)
        self._instances.finish()

    def _build_workloads(
        self, row_id: int, conn_id: int, process: int, runs: list[journal.RunEntry]
    ) -> None:
        entries = journal.frames(row_id, journal.WORKLOADS, runs)
        rows = self._workloads
        add = rows.add
        decoded = self._decode(conn_id, entries, m.WORKLOAD)
        for (tag, _, payload), w in zip(entries, decoded, strict=True):
            if w is not None:
                add(process, tag, w, payload.decode("utf-8", "replace"))
        rows.insert(self._db)

    def _build_frames(
        self, row_id: int, conn_id: int, process: int, runs: list[journal.RunEntry]
    ) -> None:
        entries = journal.frames(row_id, journal.FRAMES, runs)
        decoded = self._decode(conn_id, entries, m.FRAME)
        rows = [
            (
                process,
                f.device,
                tag,
                f.queue,
                f.cpu_ns,
                f.reason,
                f.captured,
                f.pipelines,
                f.shader_modules,
            )
            for (tag, _, _), f in zip(entries, decoded, strict=True)
            if f is not None
        ]
        if rows:
            insert_rows(self._db, self._insert_frame, rows)
        budgets = [
            (process, f.device, tag, *_budget_columns(f.budget))
            for (tag, _, _), f in zip(entries, decoded, strict=True)
            if f is not None and f.budget is not None
        ]
        if budgets:
            insert_rows(self._db, self._insert_budget, budgets)

    def _decode(
        self, conn_id: int, entries: list[tuple[int, int, bytes]], message_type: int
    ) -> list[Any]:
        """The payloads decoded in one call; one by one only if one of them fails, to say which:
        WORKLOADs and FRAMEs are checked against the protocol here (wire.Frames)."""
        payloads = [e[2] for e in entries]
        try:
            decoded = _LIST_DECODERS[message_type].decode(b"[" + b",".join(payloads) + b"]")
            if len(decoded) == len(payloads):
                return decoded  # type: ignore[no-any-return]
        except (msgspec.DecodeError, ValueError):
            pass
        decode = _DECODERS[message_type].decode
        out: list[Any] = []
        for tag, offset, payload in entries:
            try:
                out.append(decode(payload))
            except (msgspec.DecodeError, ValueError) as exc:
                frame = header_bytes(message_type, None, tag, len(payload)) + payload
                bad = bad_payload(frame, offset, message_type, exc)
                self._note(conn_id, bad.kind, bad.reason, offset, message_type, bad.excerpt)
                out.append(None)
        return out


def _budget_columns(b: m.BudgetFrame) -> tuple[Any, ...]:
    """A FRAME's `budget` as the columns of budget_frames after (process, device, number)."""
    return (
        b.state, b.workloads, b.measured, b.interval_ns, b.sample, b.base_ns, b.unit_ns,
        b.frame_ns, b.rotation, b.next, b.recording_ns, b.recording_share,
    )  # fmt: skip


def index_workloads(db: sqlite3.Connection, target: str) -> None:
    """The unique index on workloads; a tagID described twice keeps its later WORKLOAD."""
    try:
        db.execute("SAVEPOINT indexing")
        db.execute(schema.final_index(target))
    except sqlite3.IntegrityError:
        db.execute("ROLLBACK TO indexing")
        db.execute(schema.deduplicate_workloads(target))
        db.execute(schema.final_index(target))
    db.execute("RELEASE indexing")
