"""Reports as CSV, JSON and Markdown, written as the capture is read.

Every writer takes the report in three steps: begin (what the capture is), one call per queue
of each frame with that queue's workloads as a stream, and end (the summary). Rows go out as
they come; the one table that is only complete at the end while its rows come during the pass
(frames and queues) is kept in a temporary file that stays in memory while it is small. CSV
holds one table (workloads by default); JSON every table asked for, each a list of objects;
Markdown the same for people.
"""

from __future__ import annotations

import csv
import shutil
from collections.abc import Iterable
from tempfile import SpooledTemporaryFile
from typing import Any, Final, Protocol, TextIO

import msgspec

from ..capture import WorkloadInstance
from ..shown_text import csv_row
from ..shown_text import markdown_escaped as _md
from .context import ReportContext
from .frames import FrameKey, FrameWork, QueueWork
from .people_tables import people_tables
from .rows import (
    COSTLIEST,
    FRAMES,
    SUMMARY_TABLES,
    TABLES,
    Column,
    brief,
    command_buffer_cells,
    counter_columns,
    frame_row,
    json_object,
    people_cells,
    summary_rows,
    workload_columns,
    workload_rows,
)
from .summary import Summary
from .text import frame_title, header_lines, queue_heading, span_text

_SPOOL: Final = 8 << 20  # bytes of the frames table kept in memory before it goes to a file


class ReportWriter(Protocol):
    def begin(self, context: ReportContext) -> None: ...

    def queue(self, frame: FrameWork, queue: QueueWork, rows: Iterable[WorkloadInstance]) -> None:
        """One queue of one frame; may leave rows unread (the caller reads what is left)."""
        ...

    def end(self, summary: Summary) -> None: ...


def frame_row_of(context: ReportContext, frame: FrameWork, queue: QueueWork) -> tuple[Any, ...]:
    """A row of the frames table, with the queue's flags and why the frame is warm-up."""
    key = frame.key
    flags = context.flags(key.process, key.device, queue.queue)
    return frame_row(frame, queue, flags, context.warmup.frames.get(key.triple()))


def _columns(name: str, context: ReportContext) -> tuple[Column, ...]:
    """A table's columns, with its counter columns."""
    if name == "workloads":
        return workload_columns(context.counters, context.impacted())
    if name == "costliest":
        return COSTLIEST + counter_columns(context.sort_columns(), context.impacted())
    if name == "command_buffers":
        return TABLES[name] + counter_columns(context.command_buffer_counters, context.impacted())
    return TABLES[name]


class CsvWriter:
    """One table, with a header row; times in integer nanoseconds, shares as fractions."""

    def __init__(self, out: TextIO, table: str) -> None:
        self._csv = csv.writer(out, lineterminator="\n")
        self._table = table
        self._context: ReportContext | None = None

    def begin(self, context: ReportContext) -> None:
        self._context = context
        self._csv.writerow([c.name for c in _columns(self._table, context)])

    def _rows(self, rows: Iterable[tuple[Any, ...]]) -> None:
        self._csv.writerows(map(csv_row, rows))

    def queue(self, frame: FrameWork, queue: QueueWork, rows: Iterable[WorkloadInstance]) -> None:
        context = self._context
        assert context is not None
        if self._table == "workloads":
            self._rows(workload_rows(frame, queue, rows, context.counters))
        elif self._table == "frames":
            self._rows([frame_row_of(context, frame, queue)])

    def end(self, summary: Summary) -> None:
        assert self._context is not None
        if self._table in SUMMARY_TABLES:
            self._rows(summary_rows(self._table, summary, self._context))


class JsonWriter:
    """`{"capture": {...}, "workloads": [...], "frames": [...], ...}`, streamed."""

    def __init__(self, out: TextIO) -> None:
        self._out = out
        self._encode = msgspec.json.Encoder().encode
        # Closed by end(): the file lives as long as the report being written.
        self._frames = SpooledTemporaryFile(_SPOOL, mode="w+", encoding="utf-8")  # noqa: SIM115
        self._workloads = 0
        self._frame_rows = 0
        self._context: ReportContext | None = None

    def _object(self, columns: tuple[Column, ...], row: tuple[Any, ...]) -> str:
        return self._encode(json_object(columns, row)).decode()

    def begin(self, context: ReportContext) -> None:
        self._context = context
        self._out.write('{"capture": ' + self._encode(context.as_json()).decode())
        if "workloads" in context.tables:
            self._out.write(',\n"workloads": [')

    def queue(self, frame: FrameWork, queue: QueueWork, rows: Iterable[WorkloadInstance]) -> None:
        context = self._context
        assert context is not None
        if "frames" in context.tables:
            sep = ",\n" if self._frame_rows else "\n"
            self._frames.write(sep + self._object(FRAMES, frame_row_of(context, frame, queue)))
            self._frame_rows += 1
        if "workloads" in context.tables:
            write = self._out.write
            columns = workload_columns(context.counters)
            for row in workload_rows(frame, queue, rows, context.counters):
                write((",\n" if self._workloads else "\n") + self._object(columns, row))
                self._workloads += 1

    def end(self, summary: Summary) -> None:
        context = self._context
        assert context is not None
        out = self._out
        if "workloads" in context.tables:
            out.write("\n]" if self._workloads else "]")
        if "frames" in context.tables:
            out.write(',\n"frames": [')
            self._frames.seek(0)
            shutil.copyfileobj(self._frames, out)
            out.write("\n]" if self._frame_rows else "]")
        self._frames.close()
        for name in SUMMARY_TABLES:
            if name in context.tables and (name != "identities" or context.identities):
                columns = _columns(name, context)
                out.write(f',\n"{name}": [')
                sep = "\n"
                for row in summary_rows(name, summary, context):  # a row at a time: a table
                    out.write(sep + self._object(columns, row))  # may have a million
                    sep = ",\n"
                out.write("]" if sep == "\n" else "\n]")
        out.write("}\n")


class MarkdownWriter:
    """Headings and pipe tables: a section per frame and queue, then the summary tables."""

    def __init__(self, out: TextIO) -> None:
        self._out = out
        # Closed by end(): the file lives as long as the report being written.
        self._frames = SpooledTemporaryFile(_SPOOL, mode="w+", encoding="utf-8")  # noqa: SIM115
        self._frames_shown: list[int] = []
        self._last: FrameKey | None = None
        self._context: ReportContext | None = None

    def _head(
        self, columns: tuple[Column, ...], out: TextIO | SpooledTemporaryFile[str]
    ) -> list[int]:
        context = self._context
        assert context is not None
        shown = brief(columns, context.timing.any, context.has_floor)
        right = {"int", "ns", "share", "time", "counter"}
        out.write("| " + " | ".join(_md(columns[i].heading) for i in shown) + " |\n")
        out.write(
            "| " + " | ".join("---:" if columns[i].kind in right else "---" for i in shown) + " |\n"
        )
        return shown

    def _line(self, columns: tuple[Column, ...], row: tuple[Any, ...], shown: list[int]) -> str:
        return "| " + " | ".join(map(_md, people_cells(columns, row, shown))) + " |\n"

    def begin(self, context: ReportContext) -> None:
        self._context = context
        self._out.write(f"# vkscope capture {_md(context.path)}\n\n")
        for name, value in header_lines(context):
            self._out.write(f"- **{name}**: {_md(value)}\n" if name else f"- {_md(value)}\n")
        self._out.write("\n")
        if "frames" in context.tables:
            self._frames_shown = self._head(FRAMES, self._frames)

    def queue(self, frame: FrameWork, queue: QueueWork, rows: Iterable[WorkloadInstance]) -> None:
        context = self._context
        assert context is not None
        if "frames" in context.tables:
            row = frame_row_of(context, frame, queue)
            self._frames.write(self._line(FRAMES, row, self._frames_shown))
        if "workloads" not in context.tables:
            return
        columns = workload_columns(context.counters, context.impacted())
        out, shown = self._out, brief(columns, context.timing.any, context.has_floor)
        wrote = False
        for row in workload_rows(frame, queue, rows, context.counters):
            if not wrote:  # headings only above rows: a filter may leave a queue empty
                wrote = True
                if frame.key != self._last:
                    self._last = frame.key
                    out.write(f"## {_md(frame_title(context, frame))}\n\n")
                out.write(f"### {_md(queue_heading(context, frame, queue))}\n\n")
                out.write(f"{_md(span_text(queue.span))}\n\n")
                self._head(columns, out)
            out.write(self._line(columns, row, shown))
        if wrote:
            out.write("\n")

    def end(self, summary: Summary) -> None:
        context = self._context
        assert context is not None
        out = self._out
        if "frames" in context.tables:
            out.write("## Frames and queues\n\n")
            self._frames.seek(0)
            shutil.copyfileobj(self._frames, out)
            out.write("\n")
        self._frames.close()
        for t in people_tables(summary, context):
            out.write(f"## {_md(t.title)}\n\n")
            shown = self._head(t.columns, out)
            cells_of = command_buffer_cells if t.name == "command_buffers" else people_cells
            for row in t.rows:
                out.write("| " + " | ".join(map(_md, cells_of(t.columns, row, shown))) + " |\n")
            if more := t.rows.more():
                out.write(f"\n{_md(more)}\n")
            out.write("\n")
