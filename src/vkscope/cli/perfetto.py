"""`vkscope perfetto CAPTURE`: the capture as a Perfetto trace (export/perfetto.py)."""

from __future__ import annotations

import argparse
from pathlib import Path

from ..guard import guarded
from .command import Command


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("capture", type=Path)
    parser.add_argument("-o", "--output", type=Path, default=None, help="default: CAPTURE.pftrace")
    parser.add_argument("--merge", type=Path, default=None, metavar="DEVICE_TRACE")


def run(args: argparse.Namespace) -> int:
    from ..export import PerfettoExportError, export_perfetto

    output: Path = args.output or args.capture.with_suffix(".pftrace")

    def body() -> None:
        summary = export_perfetto(args.capture, output, merge=args.merge)
        print(f"vkscope: wrote {output} ({summary.workloads:,} workloads)")

    return guarded(body, PerfettoExportError, reading=[args.capture])


COMMAND = Command(
    name="perfetto",
    help="export a capture as a Perfetto trace",
    description="Writes a Perfetto trace: a GPU track per queue with a slice per workload "
    "(named by type and label, metadata as arguments) under its label slices, and CPU-side "
    "submits and frames. --merge attaches the capture's metadata to the GPU render stage "
    "events of a device trace whose labels carry vkscope's t<tagID> tags (docs/perfetto.md).",
    configure=configure,
    run=run,
)
