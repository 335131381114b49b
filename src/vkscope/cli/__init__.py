"""The `vkscope` command line: one module per command (command.py says what a command is), and
this registry of them in the order `vkscope --help` lists them."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from .. import __version__
from ..guard import command_line
from . import (
    counters,
    demo,
    devices,
    diff,
    export,
    fleet,
    html,
    overlap,
    perfetto,
    query,
    report,
    run,
    settings,
    trend,
)
from .command import Command

COMMANDS: tuple[Command, ...] = tuple(
    m.COMMAND
    for m in (
        run,
        demo,
        report,
        query,
        overlap,
        perfetto,
        html,
        diff,
        export,
        trend,
        fleet,
        devices,
        counters,
        settings,
    )
)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="vkscope",
        description="Per-workload Vulkan GPU profiling: run an application under the vkscope "
        "layer, then report on what it captured.",
    )
    parser.add_argument("--version", action="version", version=f"vkscope {__version__}")
    sub = parser.add_subparsers(dest="verb", metavar="COMMAND", required=True)
    for command in COMMANDS:
        p = sub.add_parser(
            command.name,
            help=command.help,
            description=command.description,
            usage=command.usage,
        )
        command.configure(p)
        p.set_defaults(run=command.run)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    def run() -> int:
        args = build_parser().parse_args(argv)
        code: int = args.run(args)
        return code

    return command_line(run)


__all__ = ["COMMANDS", "Command", "build_parser", "main"]

if __name__ == "__main__":
    sys.exit(main())
