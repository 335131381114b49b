"""`vkscope demo`: the bundled workload program's `game` scenario (frames of labelled passes:
compute, transfers, a secondary, a split render pass, a second queue where the device has one),
run and captured under the layer with GPU timing, as `vkscope run` does it; then where the
outputs are and what to try next."""

from __future__ import annotations

import argparse
import os
import shutil
import sys
from pathlib import Path

from .. import paths
from ..guard import say
from .command import Command
from .run import RunOptions, execute

SCENARIO = "game"
# The scenario makes exactly this many queue submissions per frame: the layer ends a frame
# after each of them, as a headless application has no present to end frames at.
SUBMITS_PER_FRAME = 2


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--frames", type=int, default=5, help="frames to run (default 5)")
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
    if args.frames < 1:
        say(f"demo: --frames must be at least 1, got {args.frames}")
        return 2
    output: Path = args.output
    for suffix in (".vkscope", ".pftrace", ".html"):  # the demo's own files from an earlier demo
        output.with_suffix(suffix).unlink(missing_ok=True)
    command = [str(program), "--scenario", SCENARIO, "--frames", str(args.frames), "--quiet"]
    # The user's -s come after the demo's own, so they win.
    settings = [f"frame_submits={SUBMITS_PER_FRAME}", *args.setting]
    code = execute(RunOptions(command, settings, output, timing="queue"))
    if code == 0 and output.exists():
        print(next_steps(output, _vkscope()))
    return code


def next_steps(capture: Path, vkscope: str) -> str:
    """Where each output is and the commands to try next."""
    trace, page = capture.with_suffix(".pftrace"), capture.with_suffix(".html")
    rows = [("capture", capture, "")]
    if trace.exists():
        rows.append(("Perfetto trace", trace, "open it in https://ui.perfetto.dev"))
    if page.exists():
        rows.append(("HTML timeline", page, "open it in a browser (it works offline)"))
    width = max(len(str(path.resolve())) for _, path, _ in rows)
    lines = ["", "The demo's outputs:"]
    for what, path, how in rows:
        lines.append(f"  {what:<15} {path.resolve()!s:<{width}}  {how}".rstrip())
    commands = [
        (f"{vkscope} report {capture} --label GBuffer", "every GBuffer pass"),
        (f"{vkscope} html {capture} -o timeline.html", "the timeline page again"),
        (f"{vkscope} run -- ./your_app", "your own Vulkan application"),
    ]
    width = max(len(text) for text, _ in commands)
    lines.append("Next:")
    lines += [f"  {text:<{width}}  # {why}" for text, why in commands]
    return "\n".join(lines)


def _vkscope() -> str:
    """How the user can run vkscope again: `vkscope` when that is what PATH finds, else the
    command they ran."""
    typed = sys.argv[0]
    if Path(typed).name != "vkscope":  # python -m vkscope, say
        return "vkscope"
    found = shutil.which("vkscope")
    if found and Path(found).resolve() == Path(typed).resolve():
        return "vkscope"
    relative = os.path.relpath(typed)
    return relative if not relative.startswith("..") else typed


COMMAND = Command(
    name="demo",
    help="capture a game-like frame loop of the bundled workload program",
    description="Runs the bundled workload program's game scenario (frames of labelled passes: "
    "particles and post-processing in compute, uploads and readbacks, shadows drawn by a "
    "secondary, a G-buffer pass split over two command buffers, lighting; a second queue where "
    "the device has one) under the vkscope layer with GPU timing, and writes a capture, a "
    "Perfetto trace and an HTML timeline. The scenario checks its own results.",
    configure=configure,
    run=run,
)
