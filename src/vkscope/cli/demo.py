"""`vkscope demo`: the bundled workload program, every scenario, run and captured under the
layer (a `vkscope run` with the demo's options)."""

from __future__ import annotations

import argparse
from pathlib import Path

from .. import paths
from .command import Command, say
from .run import RunOptions, execute


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--frames", type=int, default=3, help="frames to run (default 3)")
    parser.add_argument(
        "-o",
        "--output",
        type=Path,
        default=Path("vkscope-demo.vkscope"),
        metavar="CAPTURE",
        help="capture file to write (default: vkscope-demo.vkscope)",
    )
    parser.add_argument("-s", "--setting", action="append", default=[], metavar="NAME=VALUE")


def run(args: argparse.Namespace) -> int:
    try:
        program = paths.workload_program()
    except paths.NotBuilt as exc:
        say(str(exc))
        return 2
    output: Path = args.output
    for suffix in (".vkscope", ".pftrace", ".html"):  # the demo's own files from an earlier demo
        output.with_suffix(suffix).unlink(missing_ok=True)
    command = [str(program), "--all", "--frames", str(args.frames)]
    return execute(RunOptions(command, args.setting, output, timing="queue"))


COMMAND = Command(
    name="demo",
    help="run the bundled workload program under the layer",
    description="Runs vkscope-workload (every scenario: render passes, dynamic rendering, "
    "secondaries, multiview, compute, transfers, labels, several submits and queues) under "
    "the vkscope layer; each scenario checks its own results.",
    configure=configure,
    run=run,
)
