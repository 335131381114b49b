"""`vkscope run -- APP ARGS`: runs an application with the layer, captures what it streams into a
capture file, then writes the default outputs (a short report, a Perfetto trace, an HTML page).

Names: the *capture server* is the part of vkscope the layer connects to (the layer's `host`
setting is its address); a *capture* is the file it writes; the frames the layer records are
*selected* (`--frames`), and with `--frames host` the capture server *requests* them.
"""

from __future__ import annotations

import argparse
import datetime
import sys
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from rich.console import Console

from .. import launch, paths, recording
from ..capture import CaptureServerError
from ..settings import SettingError, parse_assignment
from .command import Command, say
from .report import ReportOptions, report


@dataclass(frozen=True)
class RunOptions:
    command: Sequence[str]  # the application and its arguments
    settings: Sequence[str] = ()  # NAME=VALUE, as -s gives them
    output: Path | None = None
    timing: str | None = None
    frames: str | None = None
    capture_after: float | None = None
    capture_frames: int = 1
    no_capture: bool = False
    no_report: bool = False
    report_all: bool = False
    no_trace: bool = False
    no_html: bool = False
    extra: dict[str, str] = field(default_factory=dict)

    @classmethod
    def from_args(cls, args: argparse.Namespace) -> RunOptions:
        command: list[str] = args.command
        if command and command[0] == "--":
            command = command[1:]
        return cls(
            command, args.setting, args.output, args.timing, args.frames, args.capture_after,
            args.capture_frames, args.no_capture, args.no_report, args.report_all, args.no_trace,
            args.no_html,
        )  # fmt: skip


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "-s",
        "--setting",
        action="append",
        default=[],
        metavar="NAME=VALUE",
        help="a layer setting (see 'vkscope settings'); repeatable",
    )
    parser.add_argument(
        "-o",
        "--output",
        type=Path,
        default=None,
        metavar="CAPTURE",
        help="capture file to write (default: APP-DATE-TIME.vkscope in this folder)",
    )
    parser.add_argument(
        "--timing",
        choices=("none", "queue", "full"),
        default=None,
        help="GPU time of every workload from timer queries: none (timestamps only), queue "
        "(workloads of a queue serialized), full (also across queues); off without it",
    )
    parser.add_argument(
        "--frames",
        default=None,
        metavar="SEL",
        help="frames to capture: 3,10-20,100-  every:N  trigger:PATH  host (default: all); "
        "host: the frames vkscope asks for, --capture-after S or SIGUSR1 to vkscope",
    )
    parser.add_argument(
        "--capture-after",
        type=float,
        default=None,
        metavar="S",
        help="with --frames host: ask for a capture S seconds after the start",
    )
    parser.add_argument(
        "--capture-frames",
        type=int,
        default=1,
        metavar="N",
        help="with --frames host: frames each request captures (default 1)",
    )
    parser.add_argument(
        "--no-capture",
        action="store_true",
        help="load the layer without the timeline and write no capture",
    )
    parser.add_argument(
        "--no-report", action="store_true", help="print no report summary after the run"
    )
    parser.add_argument(
        "--report-all",
        action="store_true",
        help="print the whole report (every workload of every frame) instead of its summary",
    )
    parser.add_argument("--no-trace", action="store_true", help="write no Perfetto trace")
    parser.add_argument("--no-html", action="store_true", help="write no HTML timeline")
    parser.add_argument(
        "command", nargs=argparse.REMAINDER, help="the application and its arguments"
    )


def _default_capture_path(program: str) -> Path:
    stamp = datetime.datetime.now().strftime("%Y%m%d-%H%M%S")
    path = Path(f"{Path(program).name}-{stamp}.vkscope")
    n = 1
    while path.exists():  # several runs within one second
        n += 1
        path = Path(f"{Path(program).name}-{stamp}-{n}.vkscope")
    return path


def _after_capture(options: RunOptions, capture: Path) -> None:
    """The default outputs of a capture: a short report, a Perfetto trace and an HTML page."""
    from ..export import PerfettoExportError, export_perfetto
    from ..html import write_html

    if not options.no_report:
        tables = None if options.report_all else ("frames", "costliest")
        report(ReportOptions(capture, tables=tables))
    written = [capture]
    try:
        if not options.no_trace:
            export_perfetto(capture, capture.with_suffix(".pftrace"))
            written.append(capture.with_suffix(".pftrace"))
        if not options.no_html:
            write_html(capture, capture.with_suffix(".html"))
            written.append(capture.with_suffix(".html"))
    except (PerfettoExportError, OSError) as exc:
        say(f"could not write every output: {exc}")
    for path in written:
        print(f"vkscope: wrote {path}")


def _frame_requests(
    options: RunOptions, settings: dict[str, str]
) -> tuple[recording.FrameRequests | None, str | None]:
    """What the capture server asks the layer for under `--frames host`, or why the options do
    not fit together."""
    after, frames = options.capture_after, options.capture_frames
    requested = settings.get("frames", "").strip() == "host"
    if not requested:
        if after is not None or frames != 1:
            return None, "--capture-after and --capture-frames need --frames host"
        return None, None
    if options.no_capture:
        return None, "--frames host needs a capture (drop --no-capture)"
    if frames < 1:
        return None, f"--capture-frames must be at least 1, got {frames}"
    if after is not None and not 0 <= after < 1e9:
        return None, f"--capture-after must be a number of seconds >= 0, got {after}"
    return recording.FrameRequests(frames, after), None


def execute(options: RunOptions) -> int:
    """Runs the application as `options` say; returns its exit code (2: bad options)."""
    command = list(options.command)
    if not command:
        say("run: no application given; usage: vkscope run [OPTIONS] -- APP [ARGS...]")
        return 2
    try:
        settings = dict(parse_assignment(s) for s in options.settings)
        if options.timing:
            settings["timing"] = parse_assignment(f"timing={options.timing}")[1]
        if options.frames:
            settings["frames"] = options.frames
        layer_dir = paths.layer_dir()
    except (SettingError, paths.NotBuilt) as exc:
        say(str(exc))
        return 2
    requests, why = _frame_requests(options, settings)
    if why:
        say(f"run: {why}")
        return 2
    console = Console(stderr=True)
    try:
        launch.resolve_program(command[0])  # before a capture file is created for nothing
    except launch.LaunchError as exc:
        say(str(exc))
        return exc.exit_code
    with tempfile.TemporaryDirectory(prefix="vkscope-run-") as tmp:
        log_file = Path(settings.get("log_file") or Path(tmp) / "layer.log")
        try:
            if options.no_capture:
                result = launch.run(command, layer_dir, settings, log_file)
                summary = None
            else:
                output = options.output or _default_capture_path(command[0])
                if output.exists():
                    say(f"{output} already exists; choose another -o or remove it")
                    return 2
                recorded = recording.record(
                    command, layer_dir, settings, output, console, log_file, requests
                )
                result, summary = recorded.launch, recorded.summary
        except launch.LaunchError as exc:
            say(str(exc))
            return exc.exit_code
        except (CaptureServerError, FileExistsError, OSError) as exc:
            say(f"capture: {exc}")
            return 2
    for line in result.layer_messages:
        print(line, file=sys.stderr)
    if not result.layer_loaded:
        say(launch.not_loaded_reason(command[0]))
    if summary is not None and summary.counters.connections == 0:
        # Nothing ever connected (not a Vulkan application, or the layer did not load): an
        # empty capture would only be clutter next to the message above.
        summary.path.unlink(missing_ok=True)
        say(f"no capture written to {summary.path}: the layer never connected")
        summary = None
    if summary is not None:
        c = summary.counters
        console.print(
            f"vkscope: capture {summary.path} ({summary.status}): {c.frames:,} frames, "
            f"{c.instances:,} workloads, {c.submits:,} submits, {c.dropped:,} dropped, "
            f"{c.bad_messages:,} bad messages",
            highlight=False,
            soft_wrap=True,
        )
    if summary is not None and summary.counters.instances:
        _after_capture(options, summary.path)
    return result.exit_code


def run(args: argparse.Namespace) -> int:
    return execute(RunOptions.from_args(args))


COMMAND = Command(
    name="run",
    help="run an application with the vkscope layer",
    description="Runs APP with the vkscope layer enabled for it alone (nothing is installed "
    "system-wide) and exits with the application's exit code.",
    configure=configure,
    run=run,
    usage="vkscope run [OPTIONS] -- APP [ARGS...]",
)
