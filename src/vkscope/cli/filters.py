"""Options that `report` and `overlap` share: which workloads to look at, and what to write."""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from pathlib import Path

from ..analysis.selection import Selection, SelectionError
from ..guard import CommandError


def add_filters(parser: argparse.ArgumentParser) -> None:
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


def add_output(parser: argparse.ArgumentParser, formats: Sequence[str], tables: list[str]) -> None:
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


def chosen_tables(fmt: str, asked: Sequence[str] | None, default: frozenset[str]) -> frozenset[str]:
    tables = frozenset(asked) if asked else default
    if fmt == "csv" and len(tables) != 1:
        raise CommandError(f"--format csv writes one table; choose one --table of {sorted(tables)}")
    return tables


def selection(
    frames: str | None, queue: str | None, types: str | None, label: str | None
) -> Selection:
    try:
        return Selection.parse(frames, queue, types, label)
    except SelectionError as exc:
        raise CommandError(str(exc)) from None
