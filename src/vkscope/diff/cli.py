"""`vkscope diff BASE NEW`: the entry point, its exit codes and its command-line options."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Final, Literal, TextIO

from rich.console import Console

from .compare import Diff, DiffInputError
from .output import render_table, write_json
from .stats import Rule

NO_REGRESSION: Final = 0
REGRESSION: Final = 1
BAD_INPUT: Final = 2

Format = Literal["table", "json"]


def run_diff(
    base: Path | str,
    new: Path | str,
    threshold_pct: float = 5.0,
    min_frames: int = 3,
    fmt: Format = "table",
    console: Console | None = None,
    *,
    noise_k: float = 3.0,
    limit: int | None = 20,
    stderr: TextIO | None = None,
) -> int:
    """Compares capture NEW against capture BASE and prints the result.

    Returns 0 (no regression), 1 (a matched workload, or the GPU time per frame, got slower
    beyond the threshold and the noise) or 2 (bad input: the reason is written to `stderr`).
    Tables go to `console`; JSON is written to `console.file` as it is, without rich markup.
    `limit` caps the rows of each table (None or 0: all); JSON always lists everything.
    """
    err = stderr if stderr is not None else sys.stderr
    console = console if console is not None else Console()

    def bad(message: str) -> int:
        print(f"vkscope diff: {message}", file=err)
        return BAD_INPUT

    if fmt not in ("table", "json"):
        return bad(f"unknown format {fmt!r} (table or json)")
    if not threshold_pct >= 0:  # also refuses NaN
        return bad(f"the threshold must be a percentage of 0 or more, not {threshold_pct}")
    if not noise_k >= 0:
        return bad(f"the noise multiple must be 0 or more, not {noise_k}")
    if min_frames < 1:
        return bad(f"the minimum number of frames must be at least 1, not {min_frames}")
    if limit == 0:
        limit = None  # as on the command line: no limit
    if limit is not None and limit < 0:
        return bad(f"the row limit must be 0 or more, not {limit}")
    rule = Rule(threshold_pct=threshold_pct, noise_k=noise_k, min_frames=min_frames)
    try:
        diff = Diff(base, new, rule)
    except DiffInputError as exc:
        return bad(str(exc))
    with diff:
        code = REGRESSION if diff.regressed else NO_REGRESSION
        if fmt == "json":
            write_json(diff, console.file, code)
            console.file.flush()
        else:
            render_table(diff, console, limit)
    return code


def percentage(text: str) -> float:
    """An argparse type: `5`, `5%` or `2.5 %`."""
    try:
        value = float(text.strip().removesuffix("%"))
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a percentage: {text!r}") from None
    if not value >= 0:
        raise argparse.ArgumentTypeError(f"must be 0% or more: {text!r}")
    return value


def _at_least(minimum: int) -> Callable[[str], int]:
    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"not a whole number: {text!r}") from None
        if value < minimum:
            raise argparse.ArgumentTypeError(f"must be {minimum} or more: {text!r}")
        return value

    return parse


def _non_negative(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number: {text!r}") from None
    if not value >= 0:
        raise argparse.ArgumentTypeError(f"must be 0 or more: {text!r}")
    return value


def configure_parser(parser: argparse.ArgumentParser) -> None:
    """Adds the diff options to a (sub)parser and makes `command` its function."""
    parser.add_argument("base", type=Path, help="the capture to compare against")
    parser.add_argument("new", type=Path, help="the capture to judge")
    parser.add_argument(
        "--threshold",
        type=percentage,
        default=5.0,
        metavar="PCT",
        help="smallest change of a workload's median GPU time that counts, as a share of the "
        "base median (default 5%%)",
    )
    parser.add_argument(
        "--noise",
        type=_non_negative,
        default=3.0,
        metavar="K",
        dest="noise_k",
        help="a change must also exceed K times the per-frame noise (robust sigma) of the "
        "noisier capture (default 3)",
    )
    parser.add_argument(
        "--min-frames",
        type=_at_least(1),
        default=3,
        metavar="N",
        help="timed frames each capture needs before a workload is judged (default 3)",
    )
    parser.add_argument(
        "--format",
        choices=("table", "json"),
        default="table",
        dest="fmt",
        help="tables for people (default) or one JSON document (docs/diff.md)",
    )
    parser.add_argument(
        "--limit",
        type=_at_least(0),
        default=20,
        metavar="N",
        help="rows per table (default 20; 0: all); JSON always lists everything",
    )
    parser.set_defaults(func=command)


def command(args: argparse.Namespace) -> int:
    """What `vkscope diff` runs with the options configure_parser added."""
    return run_diff(
        args.base,
        args.new,
        threshold_pct=args.threshold,
        min_frames=args.min_frames,
        fmt=args.fmt,
        console=Console(),
        noise_k=args.noise_k,
        limit=args.limit or None,
    )


def main(argv: list[str] | None = None) -> int:
    """Runs the diff alone, as `python -m vkscope.diff` (the vkscope CLI wires in the same)."""
    parser = argparse.ArgumentParser(
        prog="vkscope diff",
        description="Compares two captures workload by workload; exits 1 on a regression.",
    )
    configure_parser(parser)
    args = parser.parse_args(argv)
    code: int = args.func(args)
    return code
