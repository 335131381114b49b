"""`vkscope report CAPTURE`: GPU time per workload, frame and queue; the costliest workloads and
label subtrees (analysis/report.py writes it)."""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from rich.console import Console

from ..analysis.report import FORMATS, TerminalWriter, default_tables, write_report, writer_for
from ..analysis.rows import TABLES
from ..analysis.selection import SelectionError
from ..analysis.writers import ReportWriter
from ..guard import CommandError, guarded, say
from ..outputs import text_output
from .command import Command, opened
from .filters import add_filters, add_output, chosen_tables, selection


@dataclass(frozen=True)
class ReportOptions:
    capture: Path
    frames: str | None = None
    queue: str | None = None
    type: str | None = None
    label: str | None = None
    format: str = "table"
    tables: Sequence[str] | None = None  # None: the format's default tables
    output: Path | None = None
    top: int = 10
    max_frames: int | None = None
    max_workloads: int | None = None
    counters: str | None = None  # comma-separated names; None: every counter the capture has
    sort: str = "gpu_ns"
    everything: bool = False  # --all
    warmup: int | None = None  # --warmup N; None: the automatic rule

    @classmethod
    def from_args(cls, args: argparse.Namespace) -> ReportOptions:
        return cls(
            args.capture, args.frames, args.queue, args.type, args.label, args.format,
            args.table, args.output, args.top, args.max_frames, args.max_workloads,
            args.counters, args.sort, args.all, args.warmup,
        )  # fmt: skip


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("capture", type=Path, help="a capture file written by 'vkscope run'")
    add_filters(parser)
    add_output(parser, FORMATS, list(TABLES))
    parser.add_argument(
        "--top", type=int, default=10, metavar="N", help="costliest workloads listed (default 10)"
    )
    parser.add_argument(
        "--counters",
        metavar="NAMES",
        help="counter columns, comma-separated (default: every counter the capture has; "
        "'' for none)",
    )
    parser.add_argument(
        "--sort",
        default="gpu_ns",
        metavar="KEY",
        help="rank the costliest workloads by gpu_ns (default) or by a counter",
    )
    parser.add_argument(
        "--all",
        action="store_true",
        help="table and markdown: every frame's workloads queue by queue, and every row of the "
        "summary tables (default: a summary whose length does not grow with the capture)",
    )
    parser.add_argument(
        "--warmup",
        type=int,
        metavar="N",
        help="leave out the first N frames of each device as warm-up, and no others (default: "
        "the application's first frame and frames that compiled pipelines or shaders; 0: none)",
    )
    parser.add_argument(
        "--max-frames", type=int, metavar="N", help="terminal, with --all: list the first N frames"
    )
    parser.add_argument(
        "--max-workloads",
        type=int,
        metavar="N",
        help="terminal, with --all: list N workloads per queue",
    )


def report(options: ReportOptions) -> int:
    """Writes the report; returns the exit code (2 with one line on stderr for bad input)."""

    def body() -> None:
        chosen = selection(options.frames, options.queue, options.type, options.label)
        # A limit on the listing asks for one.
        limits = (options.max_frames, options.max_workloads)
        listing = options.everything or any(n is not None for n in limits)
        default = default_tables(options.format, listing)
        tables = chosen_tables(options.format, options.tables, default)
        if options.top < 0:
            raise CommandError("--top must be 0 or more")
        if options.warmup is not None and options.warmup < 0:
            raise CommandError(f"--warmup must be 0 or more, got {options.warmup}")
        names = None
        if options.counters is not None:
            names = [n.strip() for n in options.counters.split(",") if n.strip()]
        with opened(options.capture) as capture:
            if capture.workload_count() == 0:
                raise CommandError(
                    f"{options.capture}: the capture holds no workloads (status "
                    f"{capture.meta.status}, {capture.meta.connections} connection(s)): "
                    "nothing to report"
                )
            with text_output(options.output) as out:
                writer: ReportWriter
                if options.format == "table":
                    writer = TerminalWriter(
                        Console(file=out) if options.output else Console(),
                        max_frames=options.max_frames,
                        max_workloads_per_queue=options.max_workloads,
                    )
                else:
                    writer = writer_for(options.format, out, tables)
                summary = write_report(
                    capture, writer, selection=chosen, top=options.top, tables=tables,
                    counters=names, sort=options.sort, warmup=options.warmup,
                    everything=options.everything,
                )  # fmt: skip
            if not (summary.workloads or summary.warmup_workloads or summary.listed):
                # each filter matches something, but not all at once
                say(f"no workload of {options.capture} matches {chosen.describe()}")

    return guarded(body, SelectionError, reading=[options.capture])


def run(args: argparse.Namespace) -> int:
    return report(ReportOptions.from_args(args))


COMMAND = Command(
    name="report",
    help="GPU time and counters per workload, frame and queue; distributions over frames, "
    "costliest workloads and label subtrees",
    description="A summary of the capture whose length does not grow with it: each queue's GPU "
    "time per frame, the costliest workloads (by GPU time or a counter), each workload's "
    "distribution over frames (min, p50, p90, p99, max) and GPU time by label subtree, warm-up "
    "frames left out. --all (and JSON, CSV) adds every frame's workloads in submission order "
    "with type, label path, key metadata, GPU time, share of the frame and counters.",
    configure=configure,
    run=run,
)
