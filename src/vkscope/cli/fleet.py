"""`vkscope fleet query|summary|generate`: SQL over a fleet dataset's views, the percentiles of
every workload identity, and generated histories (fleet/)."""

from __future__ import annotations

import argparse
import decimal
from pathlib import Path

from rich.console import Console

from ..guard import CommandError, say
from ..outputs import text_output
from .command import Command
from .fleet_options import add_engine, add_output, run_fleet


def configure(parser: argparse.ArgumentParser) -> None:
    sub = parser.add_subparsers(dest="fleet_verb", metavar="VERB", required=True)
    query = sub.add_parser(
        "query",
        help="run one SQL SELECT over a dataset's views",
        description="Runs one SELECT over the views captures, frames, instances and "
        "capture_tags (docs/fleet.md), on DuckDB or Spark.",
    )
    query.add_argument("dataset", type=Path)
    query.add_argument("sql", help="one SELECT statement")
    add_engine(query)
    add_output(query)
    summary = sub.add_parser(
        "summary",
        help="count and p50/p90/p99 of every workload identity, per group",
        description="Count and p50/p90/p99 of GPU time (or a counter) of every workload "
        "identity over the whole dataset, per --group.",
    )
    summary.add_argument("dataset", type=Path)
    summary.add_argument("--group", action="append", default=[], metavar="KEY",
                         help="a tag or capture column (device); repeatable")  # fmt: skip
    summary.add_argument("--metric", default="gpu_ns")
    add_engine(summary)
    add_output(summary)
    generate = sub.add_parser(
        "generate",
        help="write a generated history (for trying the analyses out)",
        description="Writes a made-up nightly history into DATASET: every build on every "
        "device, noise, and the regressions planted with --regression.",
    )
    generate.add_argument("dataset", type=Path)
    generate.add_argument("--builds", type=int, default=50)
    generate.add_argument("--devices", default="gpu-a,gpu-b", metavar="A,B")
    generate.add_argument("--frames", type=int, default=10)
    generate.add_argument("--workloads", type=int, default=40, help="per frame")
    generate.add_argument("--seed", type=int, default=1)
    generate.add_argument(
        "--regression", action="append", default=[], metavar="BUILD:DEVICE:WORKLOAD:FACTOR",
        help="planted: from BUILD on, WORKLOAD (its number in a frame) on DEVICE costs FACTOR "
        "times as much (30:gpu-b:1:1.15); repeatable",
    )  # fmt: skip


def _regression(text: str) -> object:
    from ..fleet.generate import Regression

    try:
        build, device, workload, factor = text.split(":")
        return Regression(int(build), device, (int(workload),), float(factor))
    except ValueError:
        raise CommandError(
            f"--regression {text!r}: expected BUILD:DEVICE:WORKLOAD:FACTOR (30:gpu-b:1:1.15)"
        ) from None


def _query(args: argparse.Namespace) -> None:
    from ..fleet.engines import open_engine
    from ..fleet.layout import Dataset

    dataset = Dataset(args.dataset)
    dataset.manifest()
    engine = open_engine(args.engine, dataset, master=args.master)
    try:
        table = engine.sql(args.sql)
    finally:
        engine.close()
    _write(args, table)


def _write(args: argparse.Namespace, table: object) -> None:
    from ..analysis.query import write_rows

    rows = table.to_pylist()  # type: ignore[attr-defined]
    columns: list[str] = table.column_names  # type: ignore[attr-defined]
    with text_output(args.output) as out:
        console = Console(file=out) if args.output else Console()
        values = (tuple(_plain(v) for v in r.values()) for r in rows)
        write_rows(columns, values, args.format, out, console=console, max_rows=args.max_rows)


def _plain(value: object) -> object:
    """DuckDB sums integers as 128-bit decimals: as the numbers they are in JSON and CSV."""
    if isinstance(value, decimal.Decimal):
        return int(value) if value == value.to_integral_value() else float(value)
    return value


def _summary(args: argparse.Namespace) -> None:
    from ..fleet.engines import open_engine
    from ..fleet.layout import Dataset
    from ..fleet.trend import check_metric, resolve_key, run_summary

    dataset = Dataset(args.dataset)
    dataset.manifest()
    engine = open_engine(args.engine, dataset, master=args.master)
    try:
        groups = tuple(resolve_key(engine, g) for g in args.group)
        table = run_summary(engine, groups, check_metric(engine, args.metric))
    finally:
        engine.close()
    _write(args, table)


def _generate(args: argparse.Namespace) -> None:
    from ..fleet import generate
    from ..fleet.layout import Dataset

    devices = tuple(d for d in args.devices.split(",") if d)
    if args.builds < 1 or args.frames < 1 or args.workloads < 1 or not devices:
        raise CommandError("--builds, --frames and --workloads must be at least 1, with a device")
    history = generate.History(
        builds=args.builds, devices=devices, frames=args.frames, workloads=args.workloads,
        seed=args.seed, regressions=tuple(_regression(r) for r in args.regression),  # type: ignore[misc]
    )  # fmt: skip
    written = generate.write(Dataset(args.dataset), history)
    say(
        f"{args.dataset}: {written} captures written ({history.captures - written} there "
        f"already), {history.frames * history.workloads:,} workload instances each"
    )


def run(args: argparse.Namespace) -> int:
    body = {"query": _query, "summary": _summary, "generate": _generate}[args.fleet_verb]
    return run_fleet(lambda: body(args))


COMMAND = Command(
    name="fleet",
    help="query, summarize or generate a fleet dataset",
    description="Work with a fleet dataset: a folder of Parquet tables of many captures "
    "(vkscope export --parquet; docs/fleet.md).",
    configure=configure,
    run=run,
)
