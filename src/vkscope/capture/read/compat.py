"""Reading captures of older schema versions and captures that were never finalized: both are
presented in the current, finalized shape.

A reader connection is read-only, so a file is never changed. Instead, for each table that
gained columns since the file's version, a temporary view is created in the connection's temp
schema, with the new columns as NULL. The view has the table's own name: SQLite resolves an
unqualified name to the temp schema first, so every query (the Python API's and SQL typed by a
user) sees the current columns. The views are simple enough for SQLite to flatten, so rowid
ranges and indexes are used as on the tables themselves.

Migration rule, version by version (docs/capture-schema.md, "Versioning"):

- 1 -> 2: timing. A version 1 file has no timing columns: `devices.clock_domain`,
  `devices.clock_max_deviation_ns`, `frames.captured`, `submits.cpu_complete_ns`,
  `workload_instances.timing`, `timing_reason` and `serialization` read as NULL, and
  `instances_view` gains the same columns. A version 1 host kept the timing annex's fields in
  the annex JSON rather than copying them into `gpu_begin_ns` and `gpu_end_ns`: an integer time
  there reads in the column's place where the column is NULL.
- 2 -> 3: the journal. Nothing to present: a version 2 file has no journal, its rows are in the
  tables (a killed one's too), and the tables kept their columns.
- 3 -> 4: counters. An older file has no counters: `device_counters` reads as an empty table (and
  the readers' `instance_counters` view has no rows: its instances' annexes have no `counters`).
- 4 -> 5: what performance_query says of each counter. `device_counters.storage`, `scope`,
  `uuid`, `pass_index` and `concurrently_impacted` read as NULL (a version 4 file with khr
  counters still has their values and passes in its annexes, so they are joined as in a newer one).
- 5 -> 6: COMMAND_BUFFER-scope counters. An older file has none: `command_buffer_counters` reads
  as an empty table.
- 6 -> 7: submits and frames in the journal. Nothing to present: an older file's submits and
  frames are in their tables, and its journal holds none of the kinds that build them.
- 7 -> 8: provenance. An older file has no tags: `tags` reads as an empty table; its meta has
  no `capture_id` (a fleet dataset identifies it by its contents instead).
- 8 -> 9: the GPU's state sampled by the host. An older file has none: `gpus`, `device_gpus` and
  `gpu_samples` read as empty tables, `devices.pci` as NULL.
- 9 -> 10: stored instance columns. Nothing to present: a file without `instance_columns` (older,
  or never finalized, or killed while they were written) is read row by row (columns.py).
- 10 -> 11: the cost budget. An older file was captured without one: `devices.budget_percent`
  reads as NULL and `budget_frames` as an empty table, and every instance was left to its
  instruments (none says `budget`).
- 11 -> 12: the timer's floor and what each frame compiled. An older file has no floors:
  `timer_floors` reads as an empty table (its workloads' times carry no uncertainty and none is
  marked near the floor), and `frames.pipelines` and `frames.shader_modules` read as NULL (the
  warm-up rule then knows only the first frame).
- 12 -> 13: what the budget's controller took out of each frame's time. `budget_frames.recording_ns`
  and `recording_share` read as NULL (its controller compared the frames' times as they were).

A capture that was never finalized (its writer was killed, or is still writing) has no index on
`workloads` yet and may hold a superseded WORKLOAD row per tagID: `indexed_workloads` gives
readers an indexed copy of the rows that stand.
"""

from __future__ import annotations

import sqlite3
from typing import Final

from ..schema import (
    INSTANCE_COLUMNS_SINCE,
    INSTANCES_VIEW_SELECT,
    WORKLOADS_INDEX,
    table_definition,
)

# Tables added by each version: a file of an earlier version has none of them.
TABLES_ADDED: Final[dict[int, tuple[str, ...]]] = {
    3: ("journal",),
    4: ("device_counters",),
    6: ("command_buffer_counters",),
    8: ("tags",),
    9: ("gpus", "device_gpus", "gpu_samples"),
    INSTANCE_COLUMNS_SINCE: ("instance_columns",),
    11: ("budget_frames",),
    12: ("timer_floors",),
}
# Of those, the ones readers query: an older file gets an empty one (the journal is read only
# where a file has one).
_READ_EMPTY: Final = (
    "device_counters", "command_buffer_counters", "tags", "gpus", "device_gpus", "gpu_samples",
    "budget_frames", "timer_floors",
)  # fmt: skip

# Columns that a file older than the version given reads through an expression of its own.
_ANNEX_TIME: Final = (
    "coalesce({c}, CASE WHEN json_type(annex, '$.{c}') = 'integer' "
    "THEN json_extract(annex, '$.{c}') END)"
)
REPLACED: Final[dict[int, dict[str, dict[str, str]]]] = {
    2: {
        "workload_instances": {c: _ANNEX_TIME.format(c=c) for c in ("gpu_begin_ns", "gpu_end_ns")},
    },
}

# Columns added by each version, by table, in the order the current schema has them.
ADDED: Final[dict[int, dict[str, tuple[str, ...]]]] = {
    2: {
        "devices": ("clock_domain", "clock_max_deviation_ns"),
        "frames": ("captured",),
        "submits": ("cpu_complete_ns",),
        "workload_instances": ("timing", "timing_reason", "serialization"),
    },
    5: {
        "device_counters": ("storage", "scope", "uuid", "pass_index", "concurrently_impacted"),
    },
    9: {"devices": ("pci",)},
    11: {"devices": ("budget_percent",)},
    12: {"frames": ("pipelines", "shader_modules")},
    13: {"budget_frames": ("recording_ns", "recording_share")},
}


def present_current_schema(db: sqlite3.Connection, version: int) -> None:
    """Makes the capture (of schema `version`) read like the current one, through temp views."""
    # A table added after the file's version reads as an empty one of the current shape (below),
    # whatever a file that says it is older holds under that name.
    later = {t for since, names in TABLES_ADDED.items() if version < since for t in names}
    missing: dict[str, list[str]] = {}
    for since, tables in sorted(ADDED.items()):
        if version < since:
            for table, added in tables.items():
                if table not in later:
                    missing.setdefault(table, []).extend(added)
    replaced: dict[str, dict[str, str]] = {}
    for before, replacing in REPLACED.items():
        if version < before:
            for table, expressions in replacing.items():
                replaced.setdefault(table, {}).update(expressions)
                missing.setdefault(table, [])
    presented = False
    for table, columns in missing.items():
        have = [r[1] for r in db.execute(f"PRAGMA main.table_info({table})")]
        if not have:
            continue  # no such table: the reader's own checks say what is wrong with the file
        own = replaced.get(table, {})
        kept = ", ".join(f"{own[c]} AS {c}" if c in own else c for c in have) if own else "*"
        nulls = "".join(f", NULL AS {c}" for c in columns if c not in have)
        db.execute(f"CREATE TEMP VIEW {table} AS SELECT {kept}{nulls} FROM main.{table}")
        presented = True
    if presented:
        db.execute(f"CREATE TEMP VIEW instances_view AS {INSTANCES_VIEW_SELECT}")
    for empty in sorted(later & set(_READ_EMPTY)):
        # Empty, as the file's version had none of it; in temp, so the file is not changed.
        db.execute(table_definition(empty, "temp"))


def indexed_workloads(db: sqlite3.Connection) -> str:
    """The name of a workloads table of the capture that is indexed by (process, tag_id) with
    one row per tagID: the capture's own once finalized, else a temp copy."""
    # temp first: a capture with a journal has its workloads built there (present.py)
    for where in ("temp", "main"):
        found = db.execute(
            f"SELECT 1 FROM {where}.sqlite_master WHERE type = 'index' AND name = ?",
            (WORKLOADS_INDEX,),
        ).fetchone()
        if found:
            return f"{where}.workloads"
    # Not indexed yet: index a copy of our own, in this connection's temporary database, rather
    # than let every query build one. Workloads described after this point are not in it.
    db.execute(
        "CREATE TEMP TABLE workloads_indexed AS SELECT * FROM main.workloads WHERE rowid "
        "IN (SELECT max(rowid) FROM main.workloads GROUP BY process, tag_id)"
    )
    db.execute("CREATE UNIQUE INDEX temp.workloads_indexed_by_tag ON workloads_indexed "
               "(process, tag_id)")  # fmt: skip
    return "temp.workloads_indexed"
