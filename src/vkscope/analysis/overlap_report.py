"""The serialization comparison (overlap.py) written out: per frame and queue, per workload, and
the workloads whose time changed most. Same formats as the report: terminal tables, CSV (one
table), JSON, Markdown. Rows stream frame by frame; tables written after the totals wait in
temporary files, and a terminal shows the first rows of each.
"""

from __future__ import annotations

import csv
import dataclasses
import heapq
import shutil
from itertools import chain
from tempfile import SpooledTemporaryFile
from typing import Any, Final, TextIO

import msgspec
from rich.console import Console
from rich.table import Table
from rich.text import Text

from ..capture import Capture
from ..shown_text import csv_row, markdown_escaped, visible
from .describe import duration_text as d
from .overlap import OverlapTotals, QueuePair, WorkloadPair, compare
from .rows import Column, brief, people_cells
from .selection import Selection

_SPOOL: Final = 8 << 20  # bytes of a table kept in memory before it goes to a file
_SHOWN: Final = 1000  # rows of each table a terminal shows

FRAMES: Final = (
    Column("frame", "int"),
    Column("process", "int", wide=True),
    Column("device", "int", wide=True),
    Column("queue", "int"),
    Column("workloads_none", "int", wide=True),
    Column("workloads_serialized", "int", wide=True),
    Column("sum_none_ns", "ns", title="sum\nnone"),
    Column("sum_serialized_ns", "ns", title="sum\nserialized"),
    Column("span_none_ns", "ns", title="span\nnone"),
    Column("span_serialized_ns", "ns", title="span\nserialized"),
    Column("busy_none_ns", "ns", wide=True),
    Column("overlap_none_ns", "ns", title="overlap\nin none"),
    Column("removed_ns", "ns", title="span\nadded"),
)
WORKLOADS: Final = (
    Column("frame", "int"),
    Column("process", "int", wide=True),
    Column("device", "int", wide=True),
    Column("queue", "int"),
    Column("type"),
    Column("label_path", title="labels"),
    Column("occurrence", "int", title="n"),
    Column("none_ns", "ns", title="none"),
    Column("serialized_ns", "ns", title="serialized"),
    Column("delta_ns", "ns", title="change"),
    Column("in_none", wide=True),
    Column("in_serialized", wide=True),
)
TABLES: Final = {"frames": FRAMES, "workloads": WORKLOADS}


def frame_row(q: QueuePair) -> tuple[Any, ...]:
    a, b = q.none, q.serialized
    return (
        q.key.frame, q.key.process, q.key.device, q.queue, a.workloads, b.workloads, a.sum_ns,
        b.sum_ns, a.span_ns, b.span_ns, a.busy_ns, a.overlap_ns, q.removed_ns,
    )  # fmt: skip


def workload_row(p: WorkloadPair) -> tuple[Any, ...]:
    return (
        p.key.frame, p.key.process, p.key.device, p.queue, p.type or "unknown", p.label_path,
        p.occurrence, p.none_ns, p.serialized_ns, p.delta_ns, p.in_none, p.in_serialized,
    )  # fmt: skip


class _Biggest:
    """The N workload pairs whose time changed most, either way."""

    def __init__(self, n: int) -> None:
        self.n = n
        self._heap: list[tuple[int, int, WorkloadPair]] = []
        self._count = 0

    def add(self, p: WorkloadPair) -> None:
        if p.delta_ns is None or self.n <= 0:
            return
        self._count += 1
        item = (abs(p.delta_ns), -self._count, p)
        if len(self._heap) < self.n:
            heapq.heappush(self._heap, item)
        elif item[:2] > self._heap[0][:2]:
            heapq.heapreplace(self._heap, item)

    def result(self) -> list[WorkloadPair]:
        return [p for _, _, p in sorted(self._heap, key=lambda e: (-e[0], -e[1]))]


class _Tables:
    """Where each table's rows go during the pass: a CSV writer, JSON objects or Markdown lines
    in a temporary file (in memory while small), or up to `_SHOWN` rows for the terminal."""

    def __init__(self, fmt: str, tables: frozenset[str]) -> None:
        self.fmt = fmt
        names = [name for name in TABLES if name in tables]  # always in the same order
        self.spools = {
            name: SpooledTemporaryFile(_SPOOL, mode="w+", encoding="utf-8")  # noqa: SIM115
            for name in names
        }  # closed by close()
        self.counts = dict.fromkeys(names, 0)
        self.shown: dict[str, list[tuple[Any, ...]]] = {name: [] for name in names}
        self._encode = msgspec.json.Encoder().encode

    def add(self, name: str, row: tuple[Any, ...]) -> None:
        if name not in self.counts:
            return
        columns, n = TABLES[name], self.counts[name]
        self.counts[name] = n + 1
        if self.fmt == "json":
            item = self._encode({c.name: v for c, v in zip(columns, row, strict=True)}).decode()
            self.spools[name].write((",\n" if n else "\n") + item)
        elif self.fmt == "markdown":
            self.spools[name].write(_md_line(columns, row))
        elif n < _SHOWN:
            self.shown[name].append(row)

    def close(self) -> None:
        for spool in self.spools.values():
            spool.close()


def _md_line(columns: tuple[Column, ...], row: tuple[Any, ...]) -> str:
    cells = map(markdown_escaped, people_cells(columns, row, brief(columns)))
    return "| " + " | ".join(cells) + " |\n"


def _md_head(columns: tuple[Column, ...]) -> str:
    shown = brief(columns)
    names = " | ".join(markdown_escaped(columns[i].heading) for i in shown)
    return f"| {names} |\n| " + " | ".join("---" for _ in shown) + " |\n"


def write_overlap(
    none: Capture,
    serialized: Capture,
    mode: str,
    fmt: str,
    out: TextIO,
    *,
    selection: Selection,
    tables: frozenset[str],
    top: int = 10,
    console: Console | None = None,
) -> OverlapTotals:
    """Compares the captures and writes the result; returns the totals.

    Raises SelectionError, before writing anything, for frames missing from either capture.
    """
    totals, biggest = OverlapTotals(), _Biggest(top)
    frames = compare(none, serialized, selection)
    first = next(frames, None)  # checks the frame selection
    writer = csv.writer(out, lineterminator="\n") if fmt == "csv" else None
    if writer is not None:
        (only,) = tables
        writer.writerow([c.name for c in TABLES[only]])
    kept = _Tables(fmt, frozenset() if writer else tables)
    try:
        for f in chain([first] if first else [], frames):
            totals.add_frame(f)
            for q in f.queues:
                row = frame_row(q)
                kept.add("frames", row)
                if writer is not None and only == "frames":
                    writer.writerow(csv_row(row))
            for p in f.workloads:
                totals.add(p)
                biggest.add(p)
                row = workload_row(p)
                kept.add("workloads", row)
                if writer is not None and only == "workloads":
                    writer.writerow(csv_row(row))
        if fmt == "json":
            _json(none, serialized, mode, out, kept, totals, biggest)
        elif fmt == "markdown":
            _markdown(_totals_lines(none, serialized, mode, totals), out, kept, biggest)
        elif fmt != "csv":
            lines = _totals_lines(none, serialized, mode, totals)
            _terminal(console or Console(file=out), lines, kept, biggest, mode)
    finally:
        kept.close()
    return totals


def _totals_lines(none: Capture, serialized: Capture, mode: str, t: OverlapTotals) -> list[str]:
    return [
        f"none: {none.path}",
        f"{mode}: {serialized.path}",
        f"{t.frames:,} frames compared, {t.matched:,} workloads timed in both, "
        f"{t.only_one:,} found in one capture only",
        f"sum of workload times: {d(t.sum_none_ns)} without serialization, "
        f"{d(t.sum_serialized_ns)} with",
        f"busy spans: {d(t.span_none_ns)} without serialization, {d(t.span_serialized_ns)} with "
        f"({d(t.span_serialized_ns - t.span_none_ns)} added)",
        f"overlap counted twice by the `none` times: {d(t.overlap_none_ns)}",
    ]


_TITLES: Final = {"frames": "Frames and queues", "workloads": "Every workload"}
_CHANGED: Final = "Workloads whose time changed most"


def _terminal(
    console: Console, lines: list[str], kept: _Tables, biggest: _Biggest, mode: str
) -> None:
    for line in lines:
        console.print(Text(visible(line)), highlight=False)
    sections = [(_TITLES[n], TABLES[n], kept.shown[n], kept.counts[n]) for n in kept.shown]
    changed = [workload_row(p) for p in biggest.result()]
    sections.append((_CHANGED, WORKLOADS, changed, len(changed)))
    for title, columns, rows, count in sections:
        table = Table(title=f"{title} (`none` against `{mode}`)", title_justify="left",
                      pad_edge=False)  # fmt: skip
        shown = brief(columns)
        for i in shown:
            c = columns[i]
            if c.name == "type":
                table.add_column(c.heading, no_wrap=True)
            elif c.kind == "text":
                table.add_column(c.heading, overflow="fold")
            else:
                table.add_column(c.heading, justify="right", no_wrap=True)
        for row in rows:
            table.add_row(*map(Text, people_cells(columns, row, shown)))
        if count > len(rows):
            more = f"… {count - len(rows):,} more rows (--format csv or json writes them all)"
            table.add_row(Text(more, style="dim"))
        console.print(table)


def _markdown(lines: list[str], out: TextIO, kept: _Tables, biggest: _Biggest) -> None:
    out.write("# Overlap removed by serialization\n\n")
    out.writelines(f"- {markdown_escaped(line)}\n" for line in lines)
    out.write("\n")
    for name, spool in kept.spools.items():
        out.write(f"## {_TITLES[name]}\n\n" + _md_head(TABLES[name]))
        spool.seek(0)
        shutil.copyfileobj(spool, out)
        out.write("\n")
    out.write(f"## {_CHANGED}\n\n" + _md_head(WORKLOADS))
    out.writelines(_md_line(WORKLOADS, workload_row(p)) for p in biggest.result())


def _json(
    none: Capture,
    serialized: Capture,
    mode: str,
    out: TextIO,
    kept: _Tables,
    totals: OverlapTotals,
    biggest: _Biggest,
) -> None:
    encode = msgspec.json.Encoder().encode
    head = {"none": str(none.path), "serialized": str(serialized.path), "mode": mode}
    out.write(encode(head).decode()[:-1])  # the object stays open for the tables
    out.write(',\n"totals": ' + encode(dataclasses.asdict(totals)).decode())
    for name, spool in kept.spools.items():
        out.write(f',\n"{name}": [')
        spool.seek(0)
        shutil.copyfileobj(spool, out)
        out.write("\n]" if kept.counts[name] else "]")
    changed = [
        {c.name: v for c, v in zip(WORKLOADS, workload_row(p), strict=True)}
        for p in biggest.result()
    ]
    out.write(',\n"changed_most": ' + encode(changed).decode() + "}\n")
