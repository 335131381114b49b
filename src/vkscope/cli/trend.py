"""`vkscope trend DATASET --by KEY --group KEY --gate`: the trend of every workload identity
over an ordering key (a build number, a commit date) and the regressions in it (fleet/)."""

from __future__ import annotations

import argparse
from pathlib import Path

from rich.console import Console

from ..guard import say
from ..outputs import text_output
from .command import Command
from .fleet_options import add_engine, add_output, run_fleet

GATE_FAILED = 1


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("dataset", type=Path, help="a fleet dataset (vkscope export --parquet)")
    parser.add_argument(
        "--by", required=True, metavar="KEY", help="the ordering key: a tag (build) or a "
        "capture column (date); its values are the runs, numbers in numeric order",
    )  # fmt: skip
    parser.add_argument(
        "--group", action="append", default=[], metavar="KEY",
        help="a tag or capture column giving each group its own history (device); repeatable",
    )  # fmt: skip
    parser.add_argument(
        "--metric", default="gpu_ns", help="gpu_ns (default) or a counter column (counter_...)"
    )
    parser.add_argument(
        "--gate", action="store_true", help="exit 1 when a regression held (for CI)"
    )
    parser.add_argument(
        "--gate-new", action="store_true",
        help="with --gate: also exit 1 on a regression in the latest runs, not confirmed yet",
    )  # fmt: skip
    parser.add_argument(
        "--all", action="store_true", help="also list transient changes (one run, then back)"
    )
    parser.add_argument("--window", type=int, default=10, metavar="N",
                        help="runs before a point that give its baseline (10)")  # fmt: skip
    parser.add_argument("--min-runs", type=int, default=5, metavar="N",
                        help="runs before a point needed to judge it (5)")  # fmt: skip
    parser.add_argument("--noise", type=float, default=5.0, metavar="K",
                        help="a change counts beyond K times the runs' noise (5)")  # fmt: skip
    parser.add_argument("--min-change", type=float, default=0.05, metavar="F",
                        help="and beyond this fraction of the baseline (0.05)")  # fmt: skip
    parser.add_argument("--confirm", type=int, default=2, metavar="N",
                        help="runs after a change that must agree for it to hold (2)")  # fmt: skip
    add_engine(parser)
    add_output(parser)


def run(args: argparse.Namespace) -> int:
    failed = False

    def body() -> None:
        nonlocal failed
        from ..fleet import report
        from ..fleet.analyses import Grouping, Params
        from ..fleet.engines import open_engine
        from ..fleet.layout import Dataset
        from ..fleet.trend import AnalysisError, check_metric, resolve_key, run_trend

        for name, value in (("window", args.window), ("min-runs", args.min_runs),
                            ("confirm", args.confirm)):  # fmt: skip
            if value < 1:
                raise AnalysisError(f"--{name} must be at least 1")
        dataset = Dataset(args.dataset)
        dataset.manifest()
        engine = open_engine(args.engine, dataset, master=args.master)
        try:
            grouping = Grouping(
                resolve_key(engine, args.by),
                tuple(resolve_key(engine, g) for g in args.group),
                check_metric(engine, args.metric),
            )
            params = Params(args.window, args.min_runs, args.noise, args.min_change, args.confirm)
            result = run_trend(engine, grouping, params)
        finally:
            engine.close()
        with text_output(args.output) as out:
            console = Console(file=out) if args.output else Console()
            report.write(result, args.format, out, everything=args.all, console=console,
                         max_rows=args.max_rows)  # fmt: skip
        line, fails = report.verdict(result, args.gate_new)
        say(line)
        failed = args.gate and fails

    code = run_fleet(body)
    return GATE_FAILED if code == 0 and failed else code


COMMAND = Command(
    name="trend",
    help="trends and regressions over a fleet dataset's history",
    description="The median GPU time (or a counter) of every workload identity in every run "
    "of a dataset, ordered by --by, per --group; lists where a change beyond the noise of the "
    "runs before it appeared, and whether it held (docs/fleet.md).",
    configure=configure,
    run=run,
)
