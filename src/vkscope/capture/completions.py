"""SUBMIT_DONE messages: when the layer saw a submission complete, stored on its submit row.

A completion always follows its SUBMIT on the same connection, so it updates a row that is in
the file by the time the batch is applied (submits are inserted first in a commit). The rare one
that matches nothing (a layer bug, or a SUBMIT that was malformed and dropped) is diagnosed.
"""

from __future__ import annotations

import sqlite3
from typing import Any, Final, Protocol

from .messages import SUBMIT_DONE
from .schema import from_sql_id, to_sql_int


class Note(Protocol):
    def __call__(
        self,
        conn: Any,
        kind: str,
        reason: str,
        offset: int | None = ...,
        message_type: int | None = ...,
    ) -> None: ...


_UPDATE: Final = """
UPDATE submits SET cpu_complete_ns = ?
WHERE id = (SELECT max(id) FROM submits WHERE process = ? AND submit_id = ?)
"""
_EXISTS: Final = "SELECT 1 FROM submits WHERE process = ? AND submit_id = ? LIMIT 1"


class Completions:
    def __init__(self, note: Note) -> None:
        self._note = note
        self._rows: list[tuple[int | None, int, int | None]] = []  # (cpu_ns, process, submitID)
        self._where: list[tuple[Any, int]] = []  # (connection, stream offset), for diagnostics

    def __len__(self) -> int:
        return len(self._rows)

    def arrived(self, conn: Any, submit_id: int, cpu_ns: int, offset: int) -> None:
        self._rows.append((to_sql_int(cpu_ns), conn.process, to_sql_int(submit_id)))
        self._where.append((conn, offset))

    def apply(self, db: sqlite3.Connection) -> None:
        """Writes the batch's completions; call inside the commit, after submits are inserted."""
        rows, where = self._rows, self._where
        if not rows:
            return
        before = db.total_changes
        db.executemany(_UPDATE, rows)
        if db.total_changes - before < len(rows):
            for (_, process, submit_id), (conn, offset) in zip(rows, where, strict=True):
                if db.execute(_EXISTS, (process, submit_id)).fetchone() is None:
                    shown = "?" if submit_id is None else from_sql_id(submit_id)
                    reason = f"SUBMIT_DONE for submit {shown}, which no SUBMIT message listed"
                    self._note(conn, "submit_done_unmatched", reason, offset, SUBMIT_DONE)
        rows.clear()
        where.clear()
