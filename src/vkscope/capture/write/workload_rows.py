"""WORKLOAD messages as rows of the workloads table, one INSERT per workload type.

Each type binds only the extracted columns it has (a dispatch its groups and invocations, a
render pass its draws and size, ...) and leaves the others to their NULL default, so a row binds
8 to 10 values instead of 16. Types this vkscope does not know bind every column.
"""

from __future__ import annotations

import sqlite3
from typing import Any, Final

from ... import protocol as m
from ..schema import storable

_BASE: Final = "process, tag_id, device, type, api, metadata"
_EXTRACTED: Final = (
    "draws", "width", "height", "groups_x", "groups_y", "groups_z", "invocations", "bytes",
    "pixels", "kind",
)  # fmt: skip
_COLUMNS: Final = {
    "renderpass": ("draws", "width", "height"),
    "dispatch": ("groups_x", "groups_y", "groups_z", "invocations"),
    "buffer_transfer": ("bytes", "kind"),
    "image_transfer": ("pixels", "kind"),
    "trace_rays": ("width", "height"),
    "other": _EXTRACTED,
}
_NO_GROUPS: Final = (m.ABSENT, m.ABSENT, m.ABSENT)


def _insert(schema: str, columns: tuple[str, ...]) -> str:
    # Absent fields arrive as messages.ABSENT (or '' for kind), turned back into NULL here.
    values = [f"NULLIF(?,{m.ABSENT})" if c != "kind" else "NULLIF(?,'')" for c in columns]
    names = ", ".join((_BASE, *columns))
    return f"INSERT INTO {schema}.workloads ({names}) VALUES (?,?,?,?,?,?,{','.join(values)})"


class WorkloadRows:
    """Rows for the workloads table of `schema`, grouped by the INSERT that takes them."""

    def __init__(self, schema: str) -> None:
        self._sql = {kind: _insert(schema, columns) for kind, columns in _COLUMNS.items()}
        self._lists: dict[str, list[tuple[Any, ...]]] = {kind: [] for kind in _COLUMNS}
        self._renderpass = self._lists["renderpass"].append
        self._dispatch = self._lists["dispatch"].append
        self._buffer = self._lists["buffer_transfer"].append
        self._image = self._lists["image_transfer"].append
        self._rays = self._lists["trace_rays"].append
        self._other = self._lists["other"].append

    def __len__(self) -> int:
        return sum(map(len, self._lists.values()))

    def add(self, process: int, tag: int, w: m.Workload, meta: str) -> None:
        t = w.type
        if t == "dispatch":
            gx, gy, gz = w.groups or _NO_GROUPS
            self._dispatch((process, tag, w.device, t, w.api, meta, gx, gy, gz, w.invocations))
        elif t == "renderpass":
            self._renderpass((process, tag, w.device, t, w.api, meta, w.draws, w.width, w.height))
        elif t == "buffer_transfer":
            self._buffer((process, tag, w.device, t, w.api, meta, w.nbytes, w.kind))
        elif t == "image_transfer":
            self._image((process, tag, w.device, t, w.api, meta, w.pixels, w.kind))
        elif t == "trace_rays":
            self._rays((process, tag, w.device, t, w.api, meta, w.width, w.height))
        else:
            gx, gy, gz = w.groups or _NO_GROUPS
            self._other(
                (process, tag, w.device, t, w.api, meta, w.draws, w.width, w.height, gx, gy, gz,
                 w.invocations, w.nbytes, w.pixels, w.kind)
            )  # fmt: skip

    def insert(self, db: sqlite3.Connection) -> None:
        for kind, rows in self._lists.items():
            if rows:
                insert_rows(db, self._sql[kind], rows)
                rows.clear()


def insert_rows(db: sqlite3.Connection, sql: str, rows: list[tuple[Any, ...]]) -> None:
    """executemany, with values SQLite cannot take (an integer past i64, a string that is not
    valid UTF-8) made storable rather than the batch lost. Rare, so the fast path pays nothing
    for it."""
    db.execute("SAVEPOINT rows")
    try:
        db.executemany(sql, rows)
    except (OverflowError, ValueError):
        db.execute("ROLLBACK TO rows")
        db.executemany(sql, [tuple(map(storable, r)) for r in rows])
    db.execute("RELEASE rows")
