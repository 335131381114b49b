"""Stores a finalized capture's instance columns in the file itself (`instance_columns`), once,
so that every later columnar read (the fleet export above all) takes them as they are instead of
reading every row out of SQLite again (stored_columns.py).

The capture server runs store_instance_columns as its finishing step (write/store.py; the
capture package's API hands it over, as the write side may not import the read side). The
columns are computed by the columnar read of the rows (columns.py), through a reader connection
of its own on the file the writer has just committed: the stored columns are the row path's
answer, by construction. The blobs and meta.instance_columns go in one transaction, so a capture
killed while they are written has none and is read row by row.

Arrow is the `fleet` extra's: a host without pyarrow stores nothing, and its captures are read
row by row.
"""

from __future__ import annotations

import sqlite3
import zlib
from dataclasses import dataclass
from pathlib import Path
from typing import Final

_INSERT: Final = "INSERT INTO instance_columns VALUES (?,?,?,?,?)"
_BATCH_ROWS: Final = 131_072  # columns.BATCH_ROWS, without importing Arrow


@dataclass(frozen=True, slots=True)
class Stored:
    rows: int
    blobs: int
    bytes: int  # of the blobs, compressed


def store_instance_columns(
    db: sqlite3.Connection, path: Path, batch_rows: int = _BATCH_ROWS
) -> Stored | None:
    """Writes the columns of the capture at `path` (committed, finalized) through `db`, a
    connection to it in autocommit mode with no transaction open; replaces any stored before.
    A blob holds at most `batch_rows` instances. None: the fleet's libraries (pyarrow, the ADBC
    SQLite driver: the `fleet` extra) are not installed, and nothing is stored.

    The file must be in WAL mode, so that the reader's connection reads while `db` writes, and
    nothing else may checkpoint it meanwhile (the read-only reader's connection then fails with
    SQLite's "locking protocol")."""
    try:
        import adbc_driver_sqlite.dbapi  # noqa: F401  (instance_batches reads the rows through it)
        import msgspec

        from .columns import SCHEMA, instance_batches
        from .reader import open_capture
        from .stored_columns import META_KEY, StoredMeta, encode, stored_schema
    except ImportError:
        return None
    rows = blobs = size = 0
    db.execute("BEGIN")
    try:
        db.execute("DELETE FROM instance_columns")
        # The reader is closed before the commit: the writer then commits alone in the file.
        with open_capture(path, check_cells=False) as capture:
            counters = list(capture.counter_names())
            stored = stored_schema(counters, SCHEMA)
            for batch in instance_batches(capture, counters, batch_rows, stored=False):
                blob = encode(batch, stored)
                first = batch.column(0)[0].as_py()
                db.execute(_INSERT, (blobs, first, batch.num_rows, zlib.crc32(blob), blob))
                rows += batch.num_rows
                blobs += 1
                size += len(blob)
        said = msgspec.json.encode(StoredMeta(rows, blobs, counters)).decode()
        db.execute("INSERT OR REPLACE INTO meta VALUES (?, ?)", (META_KEY, said))
        db.execute("COMMIT")
    except BaseException:
        if db.in_transaction:
            db.execute("ROLLBACK")
        raise
    return Stored(rows, blobs, size)


def restore_instance_columns(path: Path, batch_rows: int = _BATCH_ROWS) -> Stored | None:
    """Stores the columns again, for a finalized capture whose rows were changed afterwards
    (the benchmarks give their synthetic captures GPU times that way)."""
    db = sqlite3.connect(path, isolation_level=None)
    try:
        db.execute("PRAGMA journal_mode=WAL")
        stored = store_instance_columns(db, path, batch_rows)
        db.execute("PRAGMA journal_mode=DELETE")
        return stored
    finally:
        db.close()
