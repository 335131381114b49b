"""`vkscope export --parquet DATASET CAPTURE...`: captures (files, or folders of them) into a
fleet dataset (fleet/export.py; docs/fleet.md)."""

from __future__ import annotations

import argparse
from pathlib import Path

from ..guard import CommandError, say
from .command import Command
from .fleet_options import run_fleet


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--parquet", required=True, type=Path, metavar="DATASET",
        help="the dataset folder to add the captures to (made when it does not exist)",
    )  # fmt: skip
    parser.add_argument(
        "captures", nargs="+", type=Path, metavar="CAPTURE",
        help="capture files, or folders: every *.vkscope file under them",
    )  # fmt: skip
    parser.add_argument(
        "--partition-by", default="date", metavar="KEY",
        help="a new dataset's partition key: date (default), device, application, status, "
        "vkscope_version, tag:NAME or none",
    )  # fmt: skip


def run(args: argparse.Namespace) -> int:
    damaged = False

    def body() -> None:
        nonlocal damaged
        from ..fleet.missing import require

        for module in ("numpy", "adbc_driver_sqlite"):  # the columnar read's (fleet/export.py)
            require(module)
        from ..fleet.export import export

        result = export(args.parquet, args.captures, args.partition_by)
        for path, reason in result.damaged:
            say(f"{path}: skipped: {reason}")
        if not (result.written or result.present or result.damaged):
            raise CommandError(f"no captures in {', '.join(map(str, args.captures))}")
        say(
            f"{args.parquet}: {len(result.written)} captures added ({result.instances:,} "
            f"workload instances), {len(result.present)} there already, "
            f"{len(result.damaged)} damaged and skipped"
        )
        damaged = bool(result.damaged)

    code = run_fleet(body)
    return 2 if code == 0 and damaged else code


COMMAND = Command(
    name="export",
    help="add captures to a fleet dataset (Parquet)",
    description="Adds captures to a fleet dataset, a folder of Parquet tables (docs/fleet.md): "
    "those already in it are skipped, damaged ones reported and skipped (exit code 2).",
    configure=configure,
    run=run,
)
