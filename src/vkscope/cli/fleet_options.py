"""Options and error handling shared by the commands that read a fleet dataset (`trend`,
`fleet`, `export`): which engine, where Spark runs, and the one-line errors they end with.

The fleet's modules are imported when such a command runs, not when the CLI starts: they need
the `vkscope[fleet]` extra, and every other command works without it."""

from __future__ import annotations

import argparse
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ..analysis.query import FORMATS
from ..guard import BAD_INPUT, guarded, say


def add_engine(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--engine",
        choices=("duckdb", "spark"),
        default="duckdb",
        help="DuckDB in this process (default), or Apache Spark (needs vkscope[spark] and Java)",
    )
    parser.add_argument(
        "--master",
        default=None,
        metavar="URL",
        help="with --engine spark: the cluster (spark://HOST:7077, yarn, k8s://...); "
        "default local[2], or what spark-submit set",
    )


def add_output(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--format", choices=FORMATS, default="table")
    parser.add_argument(
        "--max-rows", type=int, default=1000, metavar="N", help="terminal: rows shown (1000)"
    )
    parser.add_argument(
        "-o", "--output", type=Path, metavar="FILE", help="write to FILE instead of stdout"
    )


def fleet_errors() -> tuple[type[Exception], ...]:
    """What the fleet's modules raise for bad input: one line, exit code 2."""
    from ..fleet.engines import EngineError, QueryError
    from ..fleet.layout import DatasetError
    from ..fleet.trend import AnalysisError

    return (DatasetError, AnalysisError, QueryError, EngineError)


def run_fleet(body: Callable[[], Any]) -> int:
    """Runs a fleet command's body: a missing extra or bad input is one line and exit 2."""
    from ..fleet.missing import MissingDependency

    missing: str | None = None
    try:
        errors = fleet_errors()
    except ImportError as exc:  # pyarrow itself: the fleet's modules import it
        missing = (
            f"this needs the Python package {exc.name}, which is not installed: "
            "pip install 'vkscope[fleet]'"
        )
    if missing is not None:
        say(missing)
        return BAD_INPUT
    return guarded(body, MissingDependency, *errors)
