"""The `report`, `query` and `overlap` commands: their options and what they run.

Each `add_*_arguments` fills an argparse parser and each `run_*` takes its parsed arguments and
returns the exit code: 0, or 2 with one line on stderr saying what is wrong (a capture that
cannot be read, an option that does not parse, frames the capture does not have, a capture with
nothing to report). cli.py wires them in; `python -m vkscope.analysis.commands` runs them alone.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import sys
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import TextIO

from rich.console import Console

from ..capture import Capture, CaptureError, open_capture
from ..report import FORMATS, TerminalWriter, default_tables, write_report, writer_for
from . import query
from .overlap import OverlapError, order_captures
from .overlap_report import TABLES as OVERLAP_TABLES
from .overlap_report import write_overlap
from .rows import TABLES
from .selection import Selection, SelectionError
from .writers import ReportWriter


class CommandError(Exception):
    """Ends the command with exit code 2 and this message."""


def _err(message: str) -> None:
    print(f"vkscope: {message}", file=sys.stderr)


def _add_filters(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--frames", metavar="LIST", help="frames to look at: numbers and ranges, e.g. 3,5-9 or 10-"
    )
    parser.add_argument("--queue", metavar="LIST", help="queue ids, e.g. 0 or 0,2")
    parser.add_argument("--type", metavar="TYPES", help="workload types, e.g. dispatch,renderpass")
    parser.add_argument(
        "--label",
        metavar="PATTERN",
        help="label path: a substring (shadow), or a glob on the whole path (frame/*/bloom)",
    )


def _add_output(parser: argparse.ArgumentParser, formats: Sequence[str], tables: list[str]) -> None:
    parser.add_argument(
        "--format", choices=formats, default="table", help="output format (default: table)"
    )
    parser.add_argument(
        "--table",
        action="append",
        choices=tables,
        metavar="TABLE",
        help=f"table(s) to write: {', '.join(tables)} (repeatable; CSV takes one)",
    )
    parser.add_argument(
        "-o", "--output", type=Path, metavar="FILE", help="write to FILE instead of stdout"
    )


def add_report_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("capture", type=Path, help="a capture file written by 'vkscope run'")
    _add_filters(parser)
    _add_output(parser, FORMATS, list(TABLES))
    parser.add_argument(
        "--top", type=int, default=10, metavar="N", help="costliest workloads listed (default 10)"
    )
    parser.add_argument(
        "--max-frames", type=int, metavar="N", help="terminal: list the first N frames"
    )
    parser.add_argument(
        "--max-workloads", type=int, metavar="N", help="terminal: list N workloads per queue"
    )


def add_query_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("capture", type=Path, help="a capture file")
    parser.add_argument("sql", help="one SELECT statement (docs/capture-schema.md)")
    parser.add_argument("--format", choices=query.FORMATS, default="table")
    parser.add_argument(
        "--max-rows", type=int, default=1000, metavar="N", help="terminal: rows shown (1000)"
    )
    parser.add_argument(
        "-o", "--output", type=Path, metavar="FILE", help="write to FILE instead of stdout"
    )


def add_overlap_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("none", type=Path, help="a capture timed with serialization `none`")
    parser.add_argument("serialized", type=Path, help="one of the same application, `queue`")
    _add_filters(parser)
    _add_output(parser, FORMATS, list(OVERLAP_TABLES))
    parser.add_argument(
        "--top", type=int, default=10, metavar="N", help="workloads that changed most (10)"
    )


def _tables(fmt: str, asked: list[str] | None, default: frozenset[str]) -> frozenset[str]:
    tables = frozenset(asked) if asked else default
    if fmt == "csv" and len(tables) != 1:
        raise CommandError(f"--format csv writes one table; choose one --table of {sorted(tables)}")
    return tables


def _selection(args: argparse.Namespace) -> Selection:
    try:
        return Selection.parse(args.frames, args.queue, args.type, args.label)
    except SelectionError as exc:
        raise CommandError(str(exc)) from None


@contextlib.contextmanager
def _opened(path: Path) -> Iterator[Capture]:
    try:
        capture = open_capture(path)
    except CaptureError as exc:
        raise CommandError(str(exc)) from None
    with capture:
        yield capture


@contextlib.contextmanager
def _output(path: Path | None) -> Iterator[TextIO]:
    if path is None:
        yield sys.stdout
        return
    try:
        out = path.open("w", encoding="utf-8", newline="")
    except OSError as exc:
        raise CommandError(f"cannot write {path}: {exc.strerror}") from None
    with out:
        yield out


def _guarded(run: Callable[[], None]) -> int:
    """Runs a command body: its errors become one line and exit code 2, never a traceback."""
    try:
        run()
    except (CommandError, CaptureError, SelectionError, OverlapError) as exc:
        _err(str(exc))
        return 2
    except BrokenPipeError:  # `vkscope report ... | head`: the reader has all it wanted
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return 0
    return 0


def run_report(args: argparse.Namespace) -> int:
    def body() -> None:
        selection = _selection(args)
        tables = _tables(args.format, args.table, default_tables(args.format))
        if args.top < 0:
            raise CommandError("--top must be 0 or more")
        with _opened(args.capture) as capture:
            if capture.workload_count() == 0:
                raise CommandError(
                    f"{args.capture}: the capture holds no workloads (status "
                    f"{capture.meta.status}, {capture.meta.connections} connection(s)): "
                    "nothing to report"
                )
            with _output(args.output) as out:
                writer: ReportWriter
                if args.format == "table":
                    writer = TerminalWriter(
                        Console(file=out) if args.output else Console(),
                        max_frames=args.max_frames,
                        max_workloads_per_queue=args.max_workloads,
                    )
                else:
                    writer = writer_for(args.format, out, tables)
                write_report(capture, writer, selection=selection, top=args.top, tables=tables)

    return _guarded(body)


def run_query(args: argparse.Namespace) -> int:
    def body() -> None:
        with _opened(args.capture) as capture, _output(args.output) as out:
            console = Console(file=out) if args.output else Console()
            query.run_query(
                capture, args.sql, args.format, out, console=console, max_rows=args.max_rows
            )

    return _guarded(body)


def run_overlap(args: argparse.Namespace) -> int:
    def body() -> None:
        selection = _selection(args)
        every = frozenset(OVERLAP_TABLES) if args.format == "json" else frozenset({"frames"})
        tables = _tables(args.format, args.table, every)
        with _opened(args.none) as a, _opened(args.serialized) as b:
            none, serialized, mode = order_captures(a, b)
            with _output(args.output) as out:
                console = Console(file=out) if args.output else Console()
                write_overlap(
                    none, serialized, mode, args.format, out, selection=selection,
                    tables=tables, top=args.top, console=console,
                )  # fmt: skip

    return _guarded(body)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m vkscope.analysis.commands")
    sub = parser.add_subparsers(dest="verb", required=True)
    for name, add, run in (
        ("report", add_report_arguments, run_report),
        ("query", add_query_arguments, run_query),
        ("overlap", add_overlap_arguments, run_overlap),
    ):
        p = sub.add_parser(name)
        add(p)
        p.set_defaults(func=run)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    code: int = args.func(args)
    return code


if __name__ == "__main__":
    sys.exit(main())
