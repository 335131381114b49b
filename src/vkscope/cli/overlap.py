"""`vkscope overlap NONE SERIALIZED`: what the serialization removed, a `none` capture against a
`queue` one (analysis/overlap.py compares them)."""

from __future__ import annotations

import argparse
from pathlib import Path

from rich.console import Console

from ..analysis.overlap import OverlapError, order_captures
from ..analysis.overlap_report import TABLES, write_overlap
from ..analysis.report import FORMATS
from ..analysis.selection import SelectionError
from ..guard import guarded
from ..outputs import text_output
from .command import Command, opened
from .filters import add_filters, add_output, chosen_tables, selection


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("none", type=Path, help="a capture timed with serialization `none`")
    parser.add_argument("serialized", type=Path, help="one of the same application, `queue`")
    add_filters(parser)
    add_output(parser, FORMATS, list(TABLES))
    parser.add_argument(
        "--top", type=int, default=10, metavar="N", help="workloads that changed most (10)"
    )


def run(args: argparse.Namespace) -> int:
    def body() -> None:
        chosen = selection(args.frames, args.queue, args.type, args.label)
        every = frozenset(TABLES) if args.format == "json" else frozenset({"frames"})
        tables = chosen_tables(args.format, args.table, every)
        with opened(args.none) as a, opened(args.serialized) as b:
            none, serialized, mode = order_captures(a, b)
            with text_output(args.output) as out:
                console = Console(file=out) if args.output else Console()
                write_overlap(
                    none, serialized, mode, args.format, out, selection=chosen,
                    tables=tables, top=args.top, console=console,
                )  # fmt: skip

    return guarded(body, SelectionError, OverlapError, reading=[args.none, args.serialized])


COMMAND = Command(
    name="overlap",
    help="the overlap serialization removed: a `none` capture against a `queue` one",
    description="Compares two captures of the same application, timed with `none` and with "
    "`queue` (or `full`): per workload and per frame, what the overlap hid.",
    configure=configure,
    run=run,
)
