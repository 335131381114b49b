"""`vkscope diff BASE NEW`: compares two captures workload by workload (diff/ does the work);
exit 1 on a regression, 2 on bad input."""

from __future__ import annotations

import argparse
from collections.abc import Callable
from pathlib import Path

from rich.console import Console

from .command import Command, guarded


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


def configure(parser: argparse.ArgumentParser) -> None:
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
        "--metric",
        default="gpu_ns",
        metavar="gpu_ns|COUNTER",
        help="what is compared: GPU time (default) or a counter such as "
        "fragment_shader_invocations (captures recorded with --counters)",
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


def run(args: argparse.Namespace) -> int:
    from ..diff import run_diff

    code = 0

    def body() -> None:
        nonlocal code
        code = run_diff(
            args.base,
            args.new,
            threshold_pct=args.threshold,
            min_frames=args.min_frames,
            fmt=args.fmt,
            console=Console(),
            noise_k=args.noise_k,
            limit=args.limit or None,
            metric=args.metric,
        )

    failed = guarded(body, reading=[args.base, args.new])
    return failed or code


COMMAND = Command(
    name="diff",
    help="compare two captures workload by workload; exit 1 on a regression",
    description="Matches NEW's workloads to BASE's by stable identity (docs/diff.md), lists "
    "added and removed workloads and cost changes beyond a noise-aware threshold; exits 1 on "
    "a regression, 2 on bad input.",
    configure=configure,
    run=run,
)
