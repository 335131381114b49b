"""`vkscope query CAPTURE SQL`: one SELECT over a capture (analysis/query.py runs it)."""

from __future__ import annotations

import argparse
from pathlib import Path

from rich.console import Console

from ..analysis import query
from ..guard import guarded
from ..outputs import text_output
from .command import Command, opened


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("capture", type=Path, help="a capture file")
    parser.add_argument("sql", help="one SELECT statement (docs/capture-schema.md)")
    parser.add_argument("--format", choices=query.FORMATS, default="table")
    parser.add_argument(
        "--max-rows", type=int, default=1000, metavar="N", help="terminal: rows shown (1000)"
    )
    parser.add_argument(
        "-o", "--output", type=Path, metavar="FILE", help="write to FILE instead of stdout"
    )


def run(args: argparse.Namespace) -> int:
    def body() -> None:
        # SQL sees the values as stored, so a damaged cell is shown rather than refused.
        with opened(args.capture, check_cells=False) as capture, text_output(args.output) as out:
            console = Console(file=out) if args.output else Console()
            query.run_query(
                capture, args.sql, args.format, out, console=console, max_rows=args.max_rows
            )

    return guarded(body, reading=[args.capture])


COMMAND = Command(
    name="query",
    help="run one SQL SELECT on a capture",
    description="Runs one SELECT on the capture, opened read-only (docs/capture-schema.md).",
    configure=configure,
    run=run,
)
