"""SUBMIT_DONE messages: when the layer saw a submission complete, stored on its submit row.

A completion always follows its SUBMIT on the same connection, so when the journal is built
(build.py: submit rows and completions first, in the order they came) its submit row is already
in the table. The rare one that matches nothing (a layer bug, or a SUBMIT that was malformed
and dropped) is diagnosed.
"""

from __future__ import annotations

import sqlite3
from typing import Final

from ...protocol import SUBMIT_DONE
from ..schema import from_sql_id, to_sql_int
from .annexes import Note
from .journal import Completion


class Completions:
    """Applies a journal row's completions to the submits table of `target`."""

    def __init__(self, db: sqlite3.Connection, target: str, note: Note) -> None:
        self._db = db
        self._note = note
        self._update: Final = (
            f"UPDATE {target}.submits SET cpu_complete_ns = ? WHERE id = "
            f"(SELECT max(id) FROM {target}.submits WHERE process = ? AND submit_id = ?)"
        )
        self._exists: Final = (
            f"SELECT 1 FROM {target}.submits WHERE process = ? AND submit_id = ? LIMIT 1"
        )

    def apply(self, conn_id: int, process: int, entries: list[Completion]) -> None:
        db = self._db
        rows = [
            (None if cpu_ns is None else to_sql_int(cpu_ns), process, to_sql_int(submit_id))
            for submit_id, cpu_ns, _ in entries
        ]
        before = db.total_changes
        db.executemany(self._update, rows)
        if db.total_changes - before == len(rows):
            return
        for (_, _, submit_id), (_, _, offset) in zip(rows, entries, strict=True):
            if db.execute(self._exists, (process, submit_id)).fetchone() is None:
                shown = "?" if submit_id is None else from_sql_id(submit_id)
                reason = f"SUBMIT_DONE for submit {shown}, which no SUBMIT message listed"
                self._note(conn_id, "submit_done_unmatched", reason, offset, SUBMIT_DONE)
