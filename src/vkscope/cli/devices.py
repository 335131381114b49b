"""`vkscope devices`: the Vulkan devices and what they support for profiling."""

from __future__ import annotations

import argparse

from .command import Command


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--json", action="store_true", help="print JSON instead of tables")


def run(args: argparse.Namespace) -> int:
    from .. import device_report

    return device_report.main(as_json=args.json)


COMMAND = Command(
    name="devices",
    help="list Vulkan devices and what they support for profiling",
    description="Lists every Vulkan device with what matters for profiling: versions, queue "
    "families and their timestamps, calibrated time domains, query and counter support.",
    configure=configure,
    run=run,
)
