"""Builds a capture's workloads, workload_instances and annexes tables from its journal.

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

from . import journal
from . import messages as m
from .annexes import InstanceMerger, Note
from .wire import bad_payload, header_bytes, split_workloads
from .workload_rows import WorkloadRows

CHUNK_INSTANCES: Final = 100_000  # instance rows held in memory before they are inserted

Progress = Callable[[int, int], None]  # (messages built, messages in the journal)

_WORKLOAD_LIST: Final = msgspec.json.Decoder(list[m.Workload])
_WORKLOAD: Final = msgspec.json.Decoder(m.Workload)


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
        self._instances = InstanceMerger(db, source, target, note, final=final)

    def size(self) -> int:
        """Messages in the journal still to build."""
        found = self._db.execute(f"SELECT total(count) FROM {self._source}.journal").fetchone()
        return int(found[0])

    def run(self, progress: Progress | None = None) -> None:
        db, source = self._db, self._source
        total = self.size() if progress is not None else 0
        done = 0
        ids = [r[0] for r in db.execute(f"SELECT id FROM {source}.journal ORDER BY id")]
        select = f"SELECT connection, process, kind, count, data FROM {source}.journal WHERE id = ?"
        for row_id in ids:
            conn_id, process, kind, count, data = db.execute(select, (row_id,)).fetchone()
            if not isinstance(data, bytes):
                raise journal.JournalError(f"journal row {row_id} holds no data")
            entries = journal.decode(row_id, kind, data)
            if kind == journal.SUBMITS:
                # A chunk ends before SUBMITs rather than after: the ANNEXes that follow them
                # then meet their instances in memory.
                if len(self._instances) >= CHUNK_INSTANCES:
                    self._instances.flush()
                self._instances.submits(process, entries)
            elif kind == journal.ANNEXES:
                self._instances.annexes(conn_id, process, entries)
            else:
                self._build_workloads(row_id, conn_id, process, entries)
            if self._final:
                db.execute(f"DELETE FROM {source}.journal WHERE id = ?", (row_id,))
            if progress is not None:
                done += count
                progress(done, total)
        self._instances.finish()

    def _build_workloads(
        self, row_id: int, conn_id: int, process: int, runs: list[journal.WorkloadEntry]
    ) -> None:
        try:
            entries = [w for run in runs for w in split_workloads(*run)]
        except ValueError as exc:
            raise journal.JournalError(f"journal row {row_id}: {exc}") from None
        rows = self._workloads
        add = rows.add
        decoded = self._decode(conn_id, entries)
        for (tag, _, payload), w in zip(entries, decoded, strict=True):
            if w is not None:
                add(process, tag, w, payload.decode("utf-8", "replace"))
        rows.insert(self._db)

    def _decode(self, conn_id: int, entries: list[tuple[int, int, bytes]]) -> list[Any]:
        """The payloads decoded in one call; one by one only if one of them fails, to say which:
        WORKLOADs are checked against the protocol here (wire.Frames)."""
        payloads = [e[2] for e in entries]
        try:
            decoded = _WORKLOAD_LIST.decode(b"[" + b",".join(payloads) + b"]")
            if len(decoded) == len(payloads):
                return decoded
        except (msgspec.DecodeError, ValueError):
            pass
        out: list[Any] = []
        for tag, offset, payload in entries:
            try:
                out.append(_WORKLOAD.decode(payload))
            except (msgspec.DecodeError, ValueError) as exc:
                frame = header_bytes(m.WORKLOAD, None, tag, len(payload)) + payload
                bad = bad_payload(frame, offset, m.WORKLOAD, exc)
                self._note(conn_id, bad.kind, bad.reason, offset, m.WORKLOAD, bad.excerpt)
                out.append(None)
        return out
