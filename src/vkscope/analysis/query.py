"""`vkscope query CAPTURE "SQL"`: any SELECT over a capture, as a table, CSV or JSON.

The capture is opened read-only and locked (Capture.lock): a statement that is not a read (a
write, BEGIN, a PRAGMA that sets something, ATTACH, a function that does more than compute a
value, such as fts3_tokenizer) fails with SQLite's own message and what was refused. Rows stream
from SQLite to CSV and JSON; a terminal table shows the first `max_rows`.
"""

from __future__ import annotations

import csv
from collections.abc import Iterator
from typing import Any, Final, TextIO

import msgspec
from rich.console import Console
from rich.table import Table
from rich.text import Text

from ..capture import Capture, CaptureError
from ..shown_text import csv_row, terminal_text, visible

FORMATS: Final = ("table", "csv", "json")
_READ_ONLY: Final = ("readonly", "not authorized", "one statement", "authorization denied")


class QueryError(CaptureError):
    """SQLite refused the statement."""


def _why(message: str) -> str:
    said = message.split("SQLite says ", 1)[-1]
    text = f"the query failed: SQLite says {said}"
    if "(function " in said:
        text += "; a query may call only SQLite's functions that compute a value"
    elif any(word in said for word in _READ_ONLY):
        text += "; a query is one SELECT (or a PRAGMA that only reports), and cannot write"
    return text


def _plain(value: Any) -> Any:
    # BLOBs have no CSV or JSON form of their own: hex, as the capture's excerpts are shown.
    return value.hex() if isinstance(value, bytes) else value


def run_query(
    capture: Capture,
    sql: str,
    fmt: str,
    out: TextIO,
    *,
    console: Console | None = None,
    max_rows: int = 1000,
) -> int:
    """Runs `sql` on the locked capture and writes its rows; returns how many were written.

    Raises CaptureError when SQLite refuses the statement.
    """
    capture.lock()
    try:
        columns, rows = capture.execute(sql)
    except CaptureError as exc:
        if type(exc) is not CaptureError:  # the file is damaged: that, not the query, is wrong
            raise
        raise QueryError(capture.path, _why(str(exc))) from None
    return write_rows(columns, rows, fmt, out, console=console, max_rows=max_rows)


def write_rows(
    columns: list[str],
    rows: Iterator[Any],
    fmt: str,
    out: TextIO,
    *,
    console: Console | None = None,
    max_rows: int = 1000,
) -> int:
    """Writes rows as `fmt` (FORMATS): CSV and JSON whole, a terminal table its first
    `max_rows`; returns how many were written."""
    if fmt == "csv":
        return _csv(columns, rows, out)
    if fmt == "json":
        return _json(columns, rows, out)
    return _table(columns, rows, console or Console(file=out), max_rows)


def _csv(columns: list[str], rows: Iterator[Any], out: TextIO) -> int:
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(csv_row(columns))
    n = 0
    for row in rows:
        writer.writerow(csv_row(_plain(v) for v in row))
        n += 1
    return n


def _json(columns: list[str], rows: Iterator[Any], out: TextIO) -> int:
    encode = msgspec.json.Encoder().encode
    out.write("[")
    n = 0
    for row in rows:
        item = {c: _plain(v) for c, v in zip(columns, row, strict=True)}
        out.write(("\n" if n == 0 else ",\n") + encode(item).decode())
        n += 1
    out.write("\n]\n" if n else "]\n")
    return n


def _table(columns: list[str], rows: Iterator[Any], console: Console, max_rows: int) -> int:
    table = Table(expand=False, pad_edge=False)
    for c in columns:
        table.add_column(Text(visible(c)), overflow="fold")
    n = 0
    for row in rows:
        if n >= max_rows:
            rest = 1 + sum(1 for _ in rows)
            console.print(table)
            note = f"… {rest:,} more rows (--format csv or json writes them all)"
            console.print(Text(note, style="dim"))
            return n
        table.add_row(
            *(
                Text("NULL", style="dim") if v is None else Text(terminal_text(str(_plain(v))))
                for v in row
            )
        )
        n += 1
    console.print(table)
    console.print(Text(f"{n:,} row" + ("" if n == 1 else "s"), style="dim"))
    return n
