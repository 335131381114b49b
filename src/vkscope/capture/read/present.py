"""Reading a capture that was never finalized (still being written, or its host was killed).

Until it is finalized, a capture's SUBMITs, WORKLOADs, ANNEXes and FRAMEs are in its journal
(journal.py), not in their tables. A reader presents them in the usual shape without changing the
file: it builds the journal (build.py) into temporary tables of the same names, which SQLite looks
up before the file's own (the same way compat.py presents older schema versions). Everything
that reads through the connection, the Python API and SQL typed by a user alike, then sees every
message up to the capture's last commit, annexes merged.

The build reads one snapshot of the file (a single read transaction), so what it presents is
consistent even while the capture host goes on writing. It costs about what finalizing costs,
each time such a capture is opened; a finalized capture has an empty journal and costs nothing.
"""

from __future__ import annotations

import sqlite3
from typing import Final

from .. import schema
from ..write.build import JournalBuild, has_journal, index_workloads

# The tables the journal builds into: copied (whatever the file already holds), then built into.
BUILT: Final = (
    "submits", "workloads", "workload_instances", "annexes", "frames", "budget_frames",
    "diagnostics",
)  # fmt: skip

_DIAGNOSTIC: Final = "INSERT INTO temp.diagnostics VALUES (NULL,?,?,?,?,?,?)"


class _Found:
    """What a build reports, as rows for the diagnostics table."""

    def __init__(self) -> None:
        self.rows: list[tuple[int | None, int | None, str, int | None, str, str]] = []

    def note(
        self,
        conn_id: int | None,
        kind: str,
        reason: str,
        offset: int | None = None,
        message_type: int | None = None,
        excerpt: bytes = b"",
    ) -> None:
        self.rows.append((conn_id, offset, kind, message_type, reason, excerpt.hex()))


def present_journal(db: sqlite3.Connection) -> bool:
    """Builds the journal of the connection's main database, if it has one, into temporary
    tables that stand in for the file's; True when it did. Raises journal.JournalError for a
    journal that cannot be read back, sqlite3.Error for what SQLite refuses."""
    if not has_journal(db):
        return False
    db.execute("BEGIN")
    try:
        for table in BUILT:
            if not db.execute(
                "SELECT 1 FROM main.sqlite_master WHERE type = 'table' AND name = ?", (table,)
            ).fetchone():
                continue  # newer than the file: compat.py made it, empty, in temp already
            db.execute(schema.table_definition(table, "temp"))
            db.execute(f"INSERT INTO temp.{table} SELECT * FROM main.{table}")
            for index in schema.index_definitions(table, "temp"):
                db.execute(index)
        found = _Found()
        JournalBuild(db, found.note, source="main", target="temp").run()
        index_workloads(db, "temp")
        db.executemany(_DIAGNOSTIC, found.rows)
        db.execute(f"CREATE TEMP VIEW instances_view AS {schema.INSTANCES_VIEW_SELECT}")
        db.execute("COMMIT")
    except BaseException:
        if db.in_transaction:
            db.execute("ROLLBACK")
        raise
    return True
