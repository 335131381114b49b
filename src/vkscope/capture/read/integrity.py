"""What a capture file must be before a reader trusts it: checked once, when it is opened, so
that nothing downstream meets a value it cannot handle.

- The file: an SQLite header that SQLite itself would accept (a page size that is a power of two,
  a file format it knows, UTF-8 text), and not shorter than the header says.
- The structure: every table of the schema, as a table, with the columns its version has.
- The cells: each of the type its column is declared with (SQLite stores whatever it is given;
  a flipped bit or a foreign tool can leave text where a time belongs), and the JSON columns
  valid JSON of the right shape. One SQL pass per table, in SQLite: a small part of what any
  report or export of the same capture costs.
- The meta table: each known key of the type the records say.

Each problem is a CorruptCaptureError (or NotACaptureError) naming the file and what is wrong.
"""

from __future__ import annotations

import sqlite3
import struct
from collections.abc import Collection
from functools import cache
from pathlib import Path
from typing import Any, Final

from .. import schema
from ..errors import (
    CaptureError,
    CaptureNotFoundError,
    CorruptCaptureError,
    EmptyCaptureError,
    NotSQLiteError,
)
from .compat import ADDED, TABLES_ADDED
from .records import CaptureMeta

_UTF8: Final = 1

# Columns holding JSON, and the JSON type each must be.
_JSON: Final = {
    ("workloads", "metadata"): "object",
    ("workload_instances", "annex"): "object",
    ("annexes", "payload"): "object",
    ("label_stacks", "path"): "array",
    ("queues", "flags"): "array",
    ("command_buffer_counters", "counters"): "object",
    ("gpus", "origins"): "object",
    ("gpus", "absent"): "object",
    ("gpus", "lost"): "object",
    ("gpus", "throttle_reasons"): "array",
}
# JSON arrays whose elements must all be text.
_TEXT_ARRAYS: Final = {
    ("label_stacks", "path"), ("queues", "flags"), ("gpus", "throttle_reasons"),
}  # fmt: skip

_META_TYPES: Final[dict[str, tuple[type, ...]]] = {
    "schema_version": (int,),
    "capture_id": (str,),
    "vkscope_version": (str,),
    "created_utc": (str,),
    "finished_utc": (str,),
    "status": (str,),
    "protocol_version": (int,),
    "process_name": (str,),
    "pid": (int,),
    "connections": (int,),
    "messages": (int,),
    "bad_messages": (int,),
    "skipped_messages": (int,),
    "dropped": (int,),
    "refused_connections": (int,),
}
_COUNTERS: Final = (
    "connections", "messages", "bad_messages", "skipped_messages", "dropped", "refused_connections"
)  # fmt: skip


def check_header(path: Path) -> bool:
    """Classifies the file from its first bytes, before SQLite gets a say. Returns whether it
    must be opened as immutable: a header that says WAL with no log beside it (SQLite would
    otherwise make a -wal and -shm next to a file it only reads)."""
    try:
        size = path.stat().st_size
        with path.open("rb") as f:
            header = f.read(100)
    except FileNotFoundError:
        raise CaptureNotFoundError(path, "no such file") from None
    except IsADirectoryError:
        raise NotSQLiteError(path, "is a directory, not a capture file") from None
    except OSError as exc:
        raise CaptureError(path, f"cannot read: {exc.strerror}") from None
    wal = Path(f"{path}-wal")
    has_wal = wal.exists()
    if size == 0 and not (has_wal and wal.stat().st_size):
        raise EmptyCaptureError(path, "the file is empty (0 bytes): no capture was ever written")
    if not header.startswith(schema.SQLITE_MAGIC):
        raise NotSQLiteError(
            path, f"not a vkscope capture: not an SQLite database (it starts {header[:16]!r})"
        )
    if len(header) < 100:
        raise CorruptCaptureError(path, f"truncated: {size} bytes, shorter than an SQLite header")
    raw_page_size = struct.unpack_from(">H", header, 16)[0]
    page_size = 65536 if raw_page_size == 1 else raw_page_size
    if page_size < 512 or page_size & (page_size - 1):
        raise CorruptCaptureError(
            path, f"damaged: its header gives a page size of {raw_page_size} bytes"
        )
    write_version, read_version = header[18], header[19]
    if write_version not in (1, 2) or read_version not in (1, 2):
        raise CorruptCaptureError(
            path, f"damaged: its header gives file format {write_version}.{read_version}"
        )
    encoding = struct.unpack_from(">I", header, 56)[0]
    if encoding not in (0, _UTF8):  # 0: not set yet (a capture still being written)
        raise CorruptCaptureError(
            path, f"damaged: its header gives text encoding {encoding} (vkscope writes UTF-8)"
        )
    if has_wal:
        return False  # until the log is folded back in, the main file's size says little
    pages, valid_for = struct.unpack_from(">I", header, 28)[0], header[92:96]
    expected = pages * page_size if valid_for == header[24:28] else None
    if size % page_size or (expected is not None and size < expected):
        what = f"its header says {expected} bytes" if expected else f"{page_size}-byte pages"
        raise CorruptCaptureError(path, f"truncated or damaged: {size} bytes, but {what}")
    return read_version == 2


@cache
def _expected() -> dict[str, list[tuple[str, str, bool]]]:
    """(column, declared type, not null) of every table of the current schema."""
    db = sqlite3.connect(":memory:")
    try:
        db.executescript(schema.TABLES)
        tables = [r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type='table'")]
        return {
            t: [
                (r[1], r[2].upper(), bool(r[3] or r[5]))
                for r in db.execute(f"PRAGMA table_info({t})")
            ]
            for t in tables
        }
    finally:
        db.close()


def _since(version: int) -> dict[str, set[str]]:
    """Columns of the current schema that a file of `version` does not have yet."""
    later: dict[str, set[str]] = {}
    for since, tables in ADDED.items():
        if version < since:
            for table, columns in tables.items():
                later.setdefault(table, set()).update(columns)
    return later


def _tables(version: int) -> dict[str, list[tuple[str, str, bool]]]:
    """The current schema's tables that a file of `version` has."""
    later = {t for since, names in TABLES_ADDED.items() if version < since for t in names}
    return {t: columns for t, columns in _expected().items() if t not in later}


def check_structure(db: sqlite3.Connection, path: Path, version: int) -> None:
    """Every table of the schema is there, as a table, with every column its version has."""
    kinds = dict(db.execute("SELECT name, type FROM main.sqlite_master"))
    later = _since(version)
    for table, columns in _tables(version).items():
        kind = kinds.get(table)
        if kind is None:
            raise CorruptCaptureError(path, f"damaged: it has no {table} table")
        if kind != "table":
            raise CorruptCaptureError(path, f"damaged: its {table} is a {kind}, not a table")
        have = {r[1] for r in db.execute(f"PRAGMA main.table_info({table})")}
        for column, _, _ in columns:
            if column not in have and column not in later.get(table, ()):
                raise CorruptCaptureError(path, f"damaged: its {table} table has no {column}")


def _allowed(declared: str, not_null: bool) -> tuple[str, ...]:
    types: tuple[str, ...] = ("integer",) if "INT" in declared else ("text",)
    if "BLOB" in declared:
        types = ("blob",)
    if "REAL" in declared:
        types = ("real", "integer")
    return types if not_null else (*types, "null")


def _conditions(table: str, columns: list[tuple[str, str, bool]]) -> list[tuple[str, str]]:
    """(column, SQL that is true when the column's cell is right) for each checked column."""
    out = []
    for column, declared, not_null in columns:
        if not declared:
            continue  # no type: anything goes (meta.value)
        c = f't."{column}"'  # qualified: json_each has a column of its own named path
        kinds = ", ".join(f"'{k}'" for k in _allowed(declared, not_null))
        good = f"typeof({c}) IN ({kinds})"
        shape = _JSON.get((table, column))
        if shape is not None:
            json = f"json_valid({c}) AND json_type({c}) = '{shape}'"
            if (table, column) in _TEXT_ARRAYS:
                json += f" AND NOT EXISTS (SELECT 1 FROM json_each({c}) WHERE type != 'text')"
            good += f" AND ({c} IS NULL OR ({json}))"
        if (table, column) == ("diagnostics", "excerpt"):  # hex, read back as bytes
            good += f" AND ({c} IS NULL OR (length({c}) % 2 = 0 AND {c} NOT GLOB '*[^0-9a-fA-F]*'))"
        out.append((column, good))
    return out


def check_cells(
    db: sqlite3.Connection, path: Path, version: int, skip: Collection[str] = ()
) -> None:
    """Every cell of the type its column is declared with, every JSON cell of its shape; but
    those of the tables in `skip`."""
    later = _since(version)
    for table, columns in _tables(version).items():
        if table in skip:
            continue
        present = [c for c in columns if c[0] not in later.get(table, ())]
        conditions = _conditions(table, present)
        if not conditions:
            continue
        every = " AND ".join(f"({good})" for _, good in conditions)
        row = db.execute(f"SELECT rowid FROM main.{table} t WHERE NOT ({every}) LIMIT 1").fetchone()
        if row is None:
            continue
        for column, good in conditions:
            bad = db.execute(
                f'SELECT typeof(t."{column}"), substr(CAST(t."{column}" AS BLOB), 1, 40) '
                f"FROM main.{table} t WHERE rowid = ? AND NOT ({good})",
                (row[0],),
            ).fetchone()
            if bad is not None:
                kind, start = bad
                shown = "" if start is None else f" {bytes(start)!r}"
                raise CorruptCaptureError(
                    path,
                    f"damaged: row {row[0]} of its {table} table holds {kind}{shown} in "
                    f"{column}, which is not what that column holds",
                )


def meta_record(path: Path, meta: dict[str, Any], version: int) -> CaptureMeta:
    """The meta table's rows as a record; CorruptCaptureError for a known key of the wrong
    type. A missing schema_version is the file's (PRAGMA user_version)."""
    known: dict[str, Any] = {}
    for key, types in _META_TYPES.items():
        value = meta.get(key)
        if value is not None and (not isinstance(value, types) or isinstance(value, bool)):
            kind = "a number" if types == (int,) else "a text"
            raise CorruptCaptureError(path, f"damaged: its meta {key} is {value!r}, not {kind}")
        known[key] = value
    for counter in _COUNTERS:
        known[counter] = known[counter] or 0
    known["status"] = known["status"] or schema.STATUS_CAPTURING
    if known["schema_version"] is None:
        known["schema_version"] = version
    extra = {k: v for k, v in meta.items() if k not in known}
    return CaptureMeta(**known, extra=extra)


def damage_found(path: Path) -> str | None:
    """What SQLite's integrity check finds wrong with the file (None: nothing). For a reader
    that met a value it could not handle: was the file damaged, or is the reader wrong?"""
    try:
        immutable = check_header(path)
    except CaptureError as exc:
        return exc.reason
    uri = path.resolve().as_uri() + "?mode=ro" + ("&immutable=1" if immutable else "")
    try:
        db = sqlite3.connect(uri, uri=True)
    except sqlite3.Error as exc:
        return f"SQLite cannot open it ({exc})"
    try:
        found = [" ".join(str(r[0]).split()) for r in db.execute("PRAGMA integrity_check(3)")]
    except (sqlite3.Error, UnicodeDecodeError) as exc:
        return f"SQLite's integrity check fails ({exc})"
    finally:
        db.close()
    if found == ["ok"]:
        return None
    said = "; ".join(found)
    return "SQLite's integrity check says " + (said if len(said) < 300 else said[:297] + "...")
