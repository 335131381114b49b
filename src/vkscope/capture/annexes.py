"""Merges ANNEX fields into workload instances, whenever the annex arrives.

An annex may name an instance whose SUBMIT is in the batch being built (merged in memory and
written with the row), one already committed (merged in the file with an UPDATE), or one not sent
yet (kept pending and merged when the SUBMIT comes). Fields are applied in arrival order, so the
last annex to set a field wins, as the protocol says. The timing fields go to their own columns
rather than into the annex JSON (timing_fields.py), and merge the same way.

What waits here holds connection ids, not connection objects: tuples of plain values are dropped
by the garbage collector's tracking, so a batch of them costs it nothing.
"""

from __future__ import annotations

import sqlite3
from typing import Any, Final, Protocol

import msgspec

from .messages import ANNEX
from .schema import to_sql_int
from .timing_fields import NO_TIMING, TIMING_COLUMNS, take_timing, timing_fields

MAX_PENDING: Final = 100_000  # annexes waiting for a SUBMIT; past this a broken layer is assumed

# (connection id, tagID, fields, stream offset of the ANNEX frame)
Annex = tuple[int, int, dict[str, Any], int]
Key = tuple[int, int]  # (process id, submitID)

_INSTANCES_OF_SUBMIT: Final = (
    f"SELECT id, tag_id, annex, {TIMING_COLUMNS} FROM workload_instances "
    "WHERE id >= ? AND id < ? ORDER BY id"
)
_UPDATE: Final = (
    "UPDATE workload_instances SET annex = ?, gpu_begin_ns = ?, gpu_end_ns = ?, timing = ?, "
    "timing_reason = ?, serialization = ? WHERE id = ?"
)


class Note(Protocol):
    def __call__(
        self,
        conn: Any,
        kind: str,
        reason: str,
        offset: int | None = ...,
        message_type: int | None = ...,
    ) -> None: ...


class AnnexMerger:
    def __init__(
        self,
        db: sqlite3.Connection,
        instances: list[tuple[Any, ...] | None],
        connections: list[Any],
        note: Note,
    ):
        self._db = db
        self._instances = instances  # the store's pending instance rows, shared
        self._connections = connections  # the store's, shared; connection id n is at n - 1
        self._note = note
        self._batch_submits: dict[Key, tuple[int, int]] = {}  # -> (first row, count) in batch
        self._tag_rows: dict[Key, dict[int, int]] = {}  # built on a submit's first annex
        self._merged: dict[int, dict[str, Any]] = {}  # batch row -> fields merged so far
        self._unresolved: dict[Key, list[Annex]] = {}  # this batch, submit not in this batch
        self.pending: dict[Key, list[Annex]] = {}  # earlier batches, submit not seen yet
        self._pending_count = 0

    def submitted(self, process: int, submit_id: int, first_row: int, count: int) -> None:
        key = (process, submit_id)
        self._batch_submits[key] = (first_row, count)
        if self.pending or self._unresolved:
            early = self.pending.pop(key, []) + self._unresolved.pop(key, [])
            self._pending_count -= len(early)
            for annex in early:
                self._merge_in_batch(key, annex)

    def arrived(
        self, conn: Any, submit_id: int, tag_id: int, fields: dict[str, Any], offset: int
    ) -> None:
        key = (conn.process, submit_id)
        annex = (conn.id, tag_id, fields, offset)
        if key in self._batch_submits:
            self._merge_in_batch(key, annex)
        else:
            self._unresolved.setdefault(key, []).append(annex)
            self._pending_count += 1

    def _merge_in_batch(self, key: Key, annex: Annex) -> None:
        rows = self._tag_rows.get(key)
        if rows is None:
            first, count = self._batch_submits[key]
            instances = self._instances
            # Built backwards so that a tag listed twice resolves to its first listing.
            rows = {instances[i][4]: i for i in range(first + count - 1, first - 1, -1)}  # type: ignore[index]
            self._tag_rows[key] = rows
        row = rows.get(annex[1])
        if row is None:
            self._unmatched(key, annex)
        else:
            self._merged.setdefault(row, {}).update(annex[2])

    def _unmatched(self, key: Key, annex: Annex) -> None:
        conn_id, tag, _, offset = annex
        reason = f"ANNEX names tagID {tag}, which SUBMIT {key[1]} does not list; not applied"
        self._note(self._connections[conn_id - 1], "annex_unmatched", reason, offset, ANNEX)

    def take_annexed(self) -> tuple[list[tuple[Any, ...]], list[tuple[Any, ...]]]:
        """Removes the batch's instances that have annexes, returned with their annex columns.

        The rest are inserted without those columns (binding NULL for each row is slow), these
        with them: first those without timing fields, then those with. Their places in the batch
        become None.
        """
        instances = self._instances
        encode = msgspec.json.encode
        annexed, timed = [], []
        for row, fields in self._merged.items():
            timing = take_timing(fields)
            text = encode(fields).decode() if fields else None
            if timing == NO_TIMING:
                annexed.append((*instances[row], text))  # type: ignore[misc]
            else:
                timed.append((*instances[row], text, *timing))  # type: ignore[misc]
            instances[row] = None
        self._merged.clear()
        self._batch_submits.clear()
        self._tag_rows.clear()
        return annexed, timed

    def flushed(self) -> None:
        """Merges annexes whose instance is in the file, once the batch has been inserted."""
        unresolved, self._unresolved = self._unresolved, {}
        for key, annexes in unresolved.items():
            self._pending_count -= len(annexes)
            self._merge_in_file(key, annexes)

    def _merge_in_file(self, key: Key, annexes: list[Annex]) -> None:
        # One query for the submit and one for its instances, however many annexes name them:
        # with timing on, every instance gets an annex, mostly after its submit was committed.
        db = self._db
        found = db.execute(
            "SELECT first_instance, instance_count FROM submits WHERE process = ? AND "
            "submit_id = ? ORDER BY id DESC LIMIT 1",
            (key[0], to_sql_int(key[1])),
        ).fetchone()
        if found is None:
            self._keep_pending(key, annexes)
            return
        first, count = found
        rows = db.execute(_INSTANCES_OF_SUBMIT, (first, first + count)).fetchall()
        by_tag = {r[1]: r for r in reversed(rows)}  # a tag listed twice: its first listing
        merged: dict[int, dict[str, Any]] = {}
        for annex in annexes:
            hit = by_tag.get(to_sql_int(annex[1]))
            if hit is None:
                self._unmatched(key, annex)
                continue
            fields = merged.get(hit[0])
            if fields is None:
                fields = msgspec.json.decode(hit[2]) if hit[2] else {}
                fields.update(timing_fields(hit[3:]))
                merged[hit[0]] = fields
            fields.update(annex[2])
        encode = msgspec.json.encode
        updates = []
        for row_id, fields in merged.items():
            timing = take_timing(fields)
            updates.append((encode(fields).decode() if fields else None, *timing, row_id))
        db.executemany(_UPDATE, updates)

    def _keep_pending(self, key: Key, annexes: list[Annex]) -> None:
        for annex in annexes:
            if self._pending_count >= MAX_PENDING:
                reason = (
                    f"over {MAX_PENDING} annexes wait for SUBMITs that have not arrived; "
                    "this one (for a submit never seen) is not applied"
                )
                conn = self._connections[annex[0] - 1]
                self._note(conn, "annex_unmatched", reason, annex[3], ANNEX)
                continue
            self.pending.setdefault(key, []).append(annex)
            self._pending_count += 1
