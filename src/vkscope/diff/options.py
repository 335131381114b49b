"""The options of `vkscope diff BASE NEW` (and of `python -m vkscope.diff`, which is the same
command), and running it from them."""

from __future__ import annotations

import argparse
from collections.abc import Callable
from pathlib import Path

from rich.console import Console

from ..guard import guarded
from .run import run_diff


def percentage(text: str) -> float:
    """An argparse type: `5`, `5%` or `2.5 %`."""
    try:
        value = float(text.strip().removesuffix("%"))
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a percentage: {text!r}") from None
    if not value >= 0:
        raise argparse.ArgumentTypeError(f"must be 0% or more: {text!r}")
    return value


def at_least(minimum: int) -> Callable[[str], int]:
    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"not a whole number: {text!r}") from None
        if value < minimum:
            raise argparse.ArgumentTypeError(f"must be {minimum} or more: {text!r}")
        return value

    return parse


def non_negative(text: str) -> float:
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
        type=non_negative,
        default=3.0,
        metavar="K",
        dest="noise_k",
        help="a change must also exceed K times the per-frame noise (robust sigma) of the "
        "noisier capture (default 3)",
    )
    parser.add_argument(
        "--min-frames",
        type=at_least(1),
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
        "--warmup",
        type=at_least(0),
        metavar="N",
        help="leave out the first N frames of each capture as warm-up, and no others (default: "
        "the first frame and frames that compiled pipelines or shaders; docs/timing.md)",
    )
    parser.add_argument(
        "--normalize-clock",
        action="store_true",
        help="scale the new capture's GPU times to the base capture's graphics clock (both "
        "sampled by vkscope run): an approximation, right for work the graphics clock bounds "
        "(docs/gpu-state.md)",
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
        type=at_least(0),
        default=20,
        metavar="N",
        help="rows per table (default 20; 0: all); JSON always lists everything",
    )


def run(args: argparse.Namespace) -> int:
    """Runs the diff the options ask for; its exit code (2 on bad input, said in one line)."""
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
            warmup=args.warmup,
            normalize_clock=args.normalize_clock,
        )

    failed = guarded(body, reading=[args.base, args.new])
    return failed or code
