"""The report on a capture: a header; with --all (and in JSON and CSV) each frame's workloads
queue by queue with their GPU time and share of the frame; then the summary: each queue's GPU
time per frame, the costliest workloads, distributions over frames and label subtrees.

`write_report` drives any format (analysis/writers.py for CSV, JSON and Markdown; the terminal
writer here). The summary is one pass over the capture (analysis/summary.py); the listing reads
frames one at a time and streams each queue's workloads from SQLite to the output, so a report
takes the same memory for a capture of any length (docs/bench/report-memory.md,
docs/bench/report-summary.md). `render_report` is the terminal report on its own.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from typing import Any, Final, TextIO

from rich.console import Console
from rich.panel import Panel
from rich.table import Table
from rich.text import Text

from ..capture import Capture, WorkloadInstance
from ..capture.read.warmup import warmup_frames
from ..shown_text import terminal_text, visible
from .context import ReportContext, report_context
from .describe import describe
from .frames import FrameKey, FrameWork, QueueWork, frame_keys, queue_rows, read_frame
from .gpu_text import WARNING
from .people_tables import people_tables
from .rows import (
    FRAMES,
    SUMMARY_TABLES,
    TABLES,
    WORKLOADS,
    Column,
    brief,
    command_buffer_cells,
    people_cells,
    workload_columns,
    workload_rows,
)
from .selection import Selection
from .summary import Summary
from .text import header_lines, queue_title, span_text
from .writers import CsvWriter, JsonWriter, MarkdownWriter, ReportWriter, frame_row_of

__all__ = [
    "FORMATS",
    "TerminalWriter",
    "default_tables",
    "describe",
    "render_report",
    "write_report",
    "writer_for",
]

FORMATS: Final = ("table", "csv", "json", "markdown")
_STATUS_STYLE: Final = {"complete": "green", "incomplete": "yellow", "capturing": "red"}
_FRAME_ROWS: Final = 1000  # rows of the frames table a terminal shows
_CHUNK: Final = 500  # workloads per printed table
# How each column of a people's table may give way when the console is narrow.
_FOLD: Final = {"label_path": 1, "details": 2}


def default_tables(fmt: str, everything: bool = False) -> frozenset[str]:
    """CSV holds one table; JSON every one; for people, the summary tables, and with
    `everything` (--all) each frame's workloads queue by queue too (whose titles say what the
    frames table would)."""
    if fmt == "csv":
        return frozenset({"workloads"})
    if fmt == "json":
        return frozenset(TABLES)
    summary = frozenset(SUMMARY_TABLES)
    return summary | {"workloads"} if everything else summary


def _rich_table(
    columns: tuple[Column, ...], shown: list[int], title: str | None = None, header: bool = True
) -> Table:
    table = Table(
        title=Text(title) if title else None,  # Text: a name with [brackets] is not markup
        title_justify="left",
        expand=False,
        pad_edge=False,
        show_header=header,
    )
    for i in shown:
        c = columns[i]
        if c.name in _FOLD:
            table.add_column(c.heading, overflow="fold", ratio=_FOLD[c.name])
        elif c.name in ("type", "queue"):  # short names, which read badly broken
            table.add_column(c.heading, no_wrap=True)
        elif c.kind in ("int", "ns", "share", "time", "counter"):
            table.add_column(c.heading, justify="right", no_wrap=True)
        else:
            table.add_column(c.heading, overflow="fold")
    return table


class TerminalWriter:
    """Rich tables that fit the console's width (long labels and details wrap).

    A queue's workloads are printed in tables of at most `_CHUNK` rows, so that a queue of a
    million workloads is never one table in memory.
    """

    def __init__(
        self,
        console: Console,
        *,
        max_frames: int | None = None,
        max_workloads_per_queue: int | None = None,
    ) -> None:
        self._console = console
        self._max_frames = max_frames
        self._max_rows = max_workloads_per_queue
        self._frames = 0
        self._last: FrameKey | None = None
        self._frame_rows: list[tuple[Any, ...]] = []
        self._more_frame_rows = 0
        self._context: ReportContext | None = None

    def begin(self, context: ReportContext) -> None:
        self._context = context
        grid = Table.grid(padding=(0, 2))
        grid.add_column(style="bold", no_wrap=True)
        grid.add_column(overflow="fold")
        for name, value in header_lines(context):
            style = _STATUS_STYLE.get(context.status, "") if name == "status" else ""
            style = "yellow" if name in ("diagnostic", WARNING) else style
            grid.add_row(name, Text(visible(value), style=style))
        title = f"vkscope capture {terminal_text(context.path.rsplit('/', 1)[-1])}"
        self._console.print(Panel(grid, title=title, title_align="left"))

    def queue(self, frame: FrameWork, queue: QueueWork, rows: Iterable[WorkloadInstance]) -> None:
        context = self._context
        assert context is not None
        if frame.key != self._last:
            self._last = frame.key
            self._frames += 1
        if "frames" in context.tables:
            if len(self._frame_rows) < _FRAME_ROWS:
                self._frame_rows.append(frame_row_of(context, frame, queue))
            else:
                self._more_frame_rows += 1
        if "workloads" not in context.tables:
            return
        if self._max_frames is not None and self._frames > self._max_frames:
            return
        self._workloads(frame, queue, rows)

    def _workloads(
        self, frame: FrameWork, queue: QueueWork, rows: Iterable[WorkloadInstance]
    ) -> None:
        context = self._context
        assert context is not None
        columns = workload_columns(context.counters, context.impacted())
        shown = brief(columns, context.timing.any, context.has_floor)
        type_at = shown.index(_TYPE)
        limit = self._max_rows
        table: Table | None = None
        it = iter(rows)
        for n, row in enumerate(workload_rows(frame, queue, it, context.counters)):
            if limit is not None and n >= limit:
                rest = 1 + sum(1 for _ in it)
                assert table is not None
                more = Text(f"{rest:,} more", style="dim")
                table.add_row("…", *([""] * (len(shown) - 2)), more)
                break
            if table is None or table.row_count >= _CHUNK:
                if table is not None:
                    self._console.print(table)
                title = visible(queue_title(context, frame, queue)) if n == 0 else None
                table = _rich_table(columns, shown, title, header=n == 0)
            cells = [Text(c) for c in people_cells(columns, row, shown)]
            if row[_TYPE] == "unknown":
                cells[type_at] = Text("unknown", style="red")
            table.add_row(*cells)
        if table is not None:
            table.caption, table.caption_justify = Text(span_text(queue.span)), "left"
            self._console.print(table)

    def end(self, summary: Summary) -> None:
        context = self._context
        assert context is not None
        console = self._console
        hidden = self._frames - (self._max_frames or self._frames)
        if hidden > 0 and "workloads" in context.tables:
            console.print(Text(f"… {hidden:,} more frames not shown", style="dim"))
        if "frames" in context.tables:
            self._frames_table()
        for t in people_tables(summary, context):
            shown = brief(t.columns, context.timing.any, context.has_floor)
            console.print(Text(t.title, style="italic"))  # as wide as the console, not the table
            table = _rich_table(t.columns, shown)
            cells_of = command_buffer_cells if t.name == "command_buffers" else people_cells
            for row in t.rows:
                cells = cells_of(t.columns, row, shown)
                if t.name == "labels" and row[1]:  # a tree: the last label, indented; the
                    last = row[0].rsplit("/", 1)[-1]  # path: CSV, JSON
                    cells[0] = "  " * (row[1] - 1) + terminal_text(last)
                table.add_row(*map(Text, cells))
            if more := t.rows.more():
                table.add_row(Text(more, style="dim"))
            console.print(table)

    def _frames_table(self) -> None:
        context = self._context
        assert context is not None
        shown = brief(FRAMES, context.timing.any, context.has_floor)
        table = _rich_table(FRAMES, shown, "Frames and queues")
        for row in self._frame_rows:
            table.add_row(*map(Text, people_cells(FRAMES, row, shown)))
        if self._more_frame_rows:
            more = f"… {self._more_frame_rows:,} more (--format csv --table frames: all)"
            table.add_row(Text(more, style="dim"))
        self._console.print(table)


_TYPE: Final = next(i for i, c in enumerate(WORKLOADS) if c.name == "type")


def write_report(
    capture: Capture,
    writer: ReportWriter,
    *,
    selection: Selection | None = None,
    top: int = 10,
    tables: Iterable[str] | None = None,
    counters: Sequence[str] | None = None,
    sort: str = "gpu_ns",
    warmup: int | None = None,
    everything: bool = False,
) -> Summary:
    """Streams the report of `capture` through `writer`; returns what it summed up.

    `counters` picks the counter columns (default: every counter the capture has); `sort`
    ranks the costliest workloads by GPU time or by a counter; `warmup` replaces the warm-up
    rule by the first N frames (capture/read/warmup.py); `everything` shows people every row
    of the summary tables. Raises SelectionError (analysis/selection.py), before writing
    anything, for frames the capture does not have or counters it has no values of.
    """
    selection = selection or Selection()
    chosen = frozenset(tables) if tables is not None else default_tables("table")
    context = report_context(
        capture, chosen, counters, sort, selection, warmup_frames(capture, warmup), everything
    )
    frames = frame_keys(capture, selection)  # checks the selection before anything is written
    summary = Summary(top, sort, selection, context.warmup)
    if chosen & set(SUMMARY_TABLES):
        summary.run(capture, counters=bool(capture.counter_names()))
    gpu = context.gpu.join if context.gpu else None
    writer.begin(context)
    if chosen & set(LISTINGS):
        for key, captured in frames:
            frame = read_frame(capture, key, selection, captured, gpu)
            for queue in frame.queues:
                rows = _counted(summary, queue_rows(capture, frame, queue, selection))
                writer.queue(frame, queue, rows)
                for _ in rows:  # what the writer left unread still counts
                    pass
    writer.end(summary)
    return summary


# The tables listed frame by frame as the capture is read.
LISTINGS: Final = ("workloads", "frames")


def _counted(summary: Summary, rows: Iterable[WorkloadInstance]) -> Iterator[WorkloadInstance]:
    for w in rows:
        summary.listed += 1
        yield w


def writer_for(fmt: str, out: TextIO, tables: frozenset[str]) -> ReportWriter:
    if fmt == "csv":
        (table,) = tables
        return CsvWriter(out, table)
    if fmt == "json":
        return JsonWriter(out)
    if fmt == "markdown":
        return MarkdownWriter(out)
    raise ValueError(f"unknown report format {fmt!r}")


def render_report(
    capture: Capture,
    console: Console,
    *,
    max_frames: int | None = None,
    max_workloads_per_queue: int | None = None,
    selection: Selection | None = None,
    top: int = 10,
    everything: bool = False,
    warmup: int | None = None,
) -> None:
    """Prints the capture's summary as `vkscope report` does; `everything` (--all) adds every
    frame's workloads, queue by queue, and every row of the summary tables."""
    writer = TerminalWriter(
        console, max_frames=max_frames, max_workloads_per_queue=max_workloads_per_queue
    )
    listing = everything or max_frames is not None or max_workloads_per_queue is not None
    write_report(
        capture, writer, selection=selection, top=top, tables=default_tables("table", listing),
        warmup=warmup, everything=everything,
    )  # fmt: skip
