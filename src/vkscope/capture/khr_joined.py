"""khr counters (VK_KHR_performance_query) joined over their pass cycle, as every reader sees
them. A captured frame collects one pass of the selection, so an instance's own annex holds only
that pass's counters; the reader joins the passes per workload (counters/khr_join.py) when it
opens a capture that has khr counters, into a temporary table of its connection (the file is
not changed):

    temp.khr_joined (id, counters, missing): per instance id, the JSON object of its joined
    values and the one of the counters it lacks, each with why.

The reader's workloads(), the `instance_counters` view and the report's sums read the joined
values in place of the annex's own; `counters_pass` in the annex still says which pass the
instance itself collected.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Iterable
from typing import Final

import msgspec

from .records import WorkloadInstance

TABLE: Final = "temp.khr_joined"
SOURCE: Final = "performance_query"

_encode = msgspec.json.encode


def create(db: sqlite3.Connection) -> None:
    """The empty table, made on every reader's connection so SQL may always name it."""
    db.execute(
        "CREATE TEMP TABLE khr_joined (id INTEGER PRIMARY KEY, counters TEXT NOT NULL, "
        "missing TEXT NOT NULL)"
    )


def has_khr_counters(db: sqlite3.Connection) -> bool:
    found = db.execute(
        "SELECT 1 FROM device_counters WHERE source = ? AND name IS NOT NULL LIMIT 1", (SOURCE,)
    ).fetchone()
    return found is not None


def fill(db: sqlite3.Connection, workloads: Callable[[], Iterable[WorkloadInstance]]) -> int:
    """Joins the passes of every instance of `workloads()` into the table; how many rows."""
    from ..counters.khr_join import join_passes

    passes: dict[str, int] = {}
    scopes: dict[str, str] = {}
    sql = (
        "SELECT name, min(pass_index), max(pass_index), max(scope) FROM device_counters "
        "WHERE source = ? AND name IS NOT NULL GROUP BY name"
    )
    for name, low, high, scope in db.execute(sql, (SOURCE,)):
        if low is not None and low == high:  # families that split a selection alike
            passes[name] = low
        if scope is not None:
            scopes[name] = scope
    joined = join_passes(workloads(), passes, scopes)
    db.executemany(
        f"INSERT INTO {TABLE} VALUES (?, ?, ?)",
        ((i, _encode(j.values).decode(), _encode(j.missing).decode()) for i, j in joined.items()),
    )
    return len(joined)
