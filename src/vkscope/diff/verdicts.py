"""Where a diff keeps its verdicts: a table of a private temporary database (diff's own rows, not
a capture's), which SQLite sorts and counts for the output in whatever order it needs, so that a
million identities never sit in memory at once (docs/bench/diff-memory.md)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any, Final

from ..capture.read.scratch import scratch_database

_TABLE: Final = """
CREATE TABLE result (
    kind TEXT NOT NULL,
    status TEXT,
    qk TEXT NOT NULL,
    path TEXT NOT NULL,
    type TEXT NOT NULL,
    ordinal INTEGER NOT NULL,
    b_frames INTEGER NOT NULL,
    b_samples INTEGER NOT NULL,
    b_median REAL,
    b_noise REAL,
    b_left_out INTEGER NOT NULL,
    n_frames INTEGER NOT NULL,
    n_samples INTEGER NOT NULL,
    n_median REAL,
    n_noise REAL,
    n_left_out INTEGER NOT NULL,
    delta REAL,
    delta_pct REAL,
    bound REAL,
    b_min REAL,
    b_p90 REAL,
    b_p99 REAL,
    b_max REAL,
    n_min REAL,
    n_p90 REAL,
    n_p99 REAL,
    n_max REAL,
    b_near INTEGER,
    n_near INTEGER
)
"""
COLUMNS: Final = (
    "kind, status, qk, path, type, ordinal, b_frames, b_samples, b_median, b_noise, b_left_out, "
    "n_frames, n_samples, n_median, n_noise, n_left_out, delta, delta_pct, bound, "
    "b_min, b_p90, b_p99, b_max, n_min, n_p90, n_p99, n_max, b_near, n_near"
)
_IDENTITY_ORDER: Final = "qk, path, type, ordinal"
_INSERT: Final = f"INSERT INTO result VALUES ({', '.join('?' * 29)})"
BATCH: Final = 10_000  # verdict rows per INSERT


class Verdicts:
    """The verdict table (rows in the order of COLUMNS). Use as a context manager, or close()."""

    def __init__(self) -> None:
        self._db = scratch_database()
        self._db.execute(_TABLE)

    def __enter__(self) -> Verdicts:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        self._db.close()

    def fill(self, rows: Iterator[tuple[Any, ...]]) -> None:
        """Inserts every row, a batch at a time, in one transaction."""
        db = self._db
        batch: list[tuple[Any, ...]] = []
        db.execute("BEGIN")
        for row in rows:
            batch.append(row)
            if len(batch) >= BATCH:
                db.executemany(_INSERT, batch)
                batch.clear()
        db.executemany(_INSERT, batch)
        db.execute("COMMIT")

    def rows(
        self, kind: str, order: str, statuses: tuple[str, ...] = (), limit: int | None = None
    ) -> Iterator[tuple[Any, ...]]:
        """The rows of one kind, of `statuses` if given, by `order` ("delta": |delta| largest
        first; a column: that column largest first), ties by identity."""
        where, params = ["kind = ?"], [kind]
        if statuses:
            where.append(f"status IN ({', '.join('?' * len(statuses))})")
            params.extend(statuses)
        by = (
            "delta IS NULL, abs(delta) DESC"
            if order == "delta"
            else f"{order} IS NULL, {order} DESC"
        )
        sql = f"SELECT {COLUMNS} FROM result WHERE {' AND '.join(where)} "
        sql += f"ORDER BY {by}, {_IDENTITY_ORDER}"
        if limit is not None:
            sql += f" LIMIT {int(limit)}"
        yield from self._db.execute(sql, params)

    def counts(self) -> Iterator[tuple[str, str | None, int]]:
        """(kind, status, rows) of every kind and status present."""
        yield from self._db.execute(
            "SELECT kind, status, count(*) FROM result GROUP BY kind, status"
        )

    def queues(self) -> int:
        """How many queues the identities are on."""
        return int(self._db.execute("SELECT count(DISTINCT qk) FROM result").fetchone()[0])
