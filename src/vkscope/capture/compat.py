"""Reading captures of older schema versions: they are presented in the current shape.

A reader connection is read-only, so an older file is never changed. Instead, for each table
that gained columns since the file's version, a temporary view of the same name is created in
the connection's temp schema, with the new columns as NULL. SQLite resolves an unqualified
table name to the temp schema first, so every query (the Python API's and SQL typed by a user)
sees the current columns; the views are simple enough for SQLite to flatten, so rowid ranges and
indexes are used as on the tables themselves.

Migration rule, version by version (docs/capture-schema.md, "Versioning"):

- 1 -> 2: timing. A version 1 file has no GPU timing: `devices.clock_domain`,
  `devices.clock_max_deviation_ns`, `frames.captured`, `submits.cpu_complete_ns`,
  `workload_instances.timing`, `timing_reason` and `serialization` read as NULL, and
  `instances_view` gains the same columns.
- 2 -> 3: the journal. Nothing to present: a version 2 file has no journal, its rows are in the
  tables (a killed one's too), and the tables kept their columns.
"""

from __future__ import annotations

import sqlite3
from typing import Final

from .schema import INSTANCES_VIEW_SELECT

# Columns added by each version, by table, in the order the current schema has them.
ADDED: Final[dict[int, dict[str, tuple[str, ...]]]] = {
    2: {
        "devices": ("clock_domain", "clock_max_deviation_ns"),
        "frames": ("captured",),
        "submits": ("cpu_complete_ns",),
        "workload_instances": ("timing", "timing_reason", "serialization"),
    },
}


def present_current_schema(db: sqlite3.Connection, version: int) -> None:
    """Makes a file of schema `version` read like the current one, through temp views."""
    missing: dict[str, list[str]] = {}
    for since, tables in sorted(ADDED.items()):
        if version < since:
            for table, added in tables.items():
                missing.setdefault(table, []).extend(added)
    if not missing:
        return
    for table, columns in missing.items():
        have = {r[1] for r in db.execute(f"PRAGMA main.table_info({table})")}
        if not have:
            continue  # no such table: the reader's own checks say what is wrong with the file
        nulls = "".join(f", NULL AS {c}" for c in columns if c not in have)
        db.execute(f"CREATE TEMP VIEW {table} AS SELECT *{nulls} FROM main.{table}")
    db.execute(f"CREATE TEMP VIEW instances_view AS {INSTANCES_VIEW_SELECT}")
