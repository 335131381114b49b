"""`vkscope run -- APP ARGS`: runs an application with the layer, captures what it streams into a
capture file, then writes the default outputs (a short report, a Perfetto trace, an HTML page).

Names: the *capture server* is the part of vkscope the layer connects to (the layer's `host`
setting is its address); a *capture* is the file it writes; the frames the layer records are
*selected* (`--frames`), and with `--frames host` the capture server *requests* them.
"""

from __future__ import annotations

import argparse
import datetime
import os
import sqlite3
import sys
import tempfile
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from rich.console import Console

from .. import launch, paths, recording
from ..capture import CaptureError, CaptureServerError, CaptureSummary, open_capture
from ..capture_summary import FrameCounts
from ..frame_selection import FrameSelectionError, parse_frame_selection
from ..gpu_state import DEFAULT_RATE_HZ, normal_pci
from ..guard import say
from ..outputs import OutputError
from ..protocol import SERIALIZATION
from ..settings import ENV_PREFIX, SettingError, from_environment, parse_assignment
from ..supervisor import Stopped, Supervisor, signal_name
from ..tags import TagError, parse_tags
from .command import Command
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
    counters: str | None = None  # the counters setting (docs/counters.md)
    tags: Sequence[str] = ()  # KEY=VALUE, as --tag gives them (tags.py)
    no_gpu_state: bool = False  # no host sampling of the GPU's clocks and power
    gpu_state_rate: float = DEFAULT_RATE_HZ
    gpu_pci: str | None = None  # the GPU of devices that give no PCI address
    budget: str | None = None  # the budget setting (docs/budget.md)

    @classmethod
    def from_args(cls, args: argparse.Namespace) -> RunOptions:
        command: list[str] = args.command
        if command and command[0] == "--":
            command = command[1:]
        return cls(
            command, args.setting, args.output, args.timing, args.frames, args.capture_after,
            args.capture_frames, args.no_capture, args.no_report, args.report_all, args.no_trace,
            args.no_html, counters=args.counters, tags=args.tag, no_gpu_state=args.no_gpu_state,
            gpu_state_rate=args.gpu_state_rate, gpu_pci=args.gpu_pci, budget=args.budget,
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
        choices=SERIALIZATION,
        default=None,
        help="GPU time of every workload from timer queries: none (timestamps only), queue "
        "(workloads of a queue serialized), full (also across queues); off without it",
    )
    parser.add_argument(
        "--counters",
        default=None,
        metavar="LIST",
        help="counters around every workload: pipeline_statistics, or counter names "
        "(comma-separated; 'vkscope counters' lists what each device offers)",
    )
    parser.add_argument(
        "--budget",
        default=None,
        metavar="P%",
        help="hold what --timing and --counters add to each frame within P%% of the frame "
        "without them: each frame measures a rotating share of its workloads (docs/budget.md)",
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
    parser.add_argument(
        "--tag",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="a tag stored in the capture (build=1234, branch=main, scene=forest): what fleet "
        "analyses group and order by; repeatable",
    )
    parser.add_argument(
        "--no-gpu-state",
        action="store_true",
        help="do not sample the GPU's clocks, power and temperature from the host",
    )
    parser.add_argument(
        "--gpu-state-rate",
        type=float,
        default=DEFAULT_RATE_HZ,
        metavar="HZ",
        help=f"how often the host samples the GPU's state (default {DEFAULT_RATE_HZ:g})",
    )
    parser.add_argument(
        "--gpu-pci",
        default=None,
        metavar="ADDRESS",
        help="PCI address (0000:03:00.0) of the GPU to sample for Vulkan devices whose driver "
        "gives none (no VK_EXT_pci_bus_info)",
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
        report(ReportOptions(capture, everything=options.report_all))
    written = [capture]
    try:
        if not options.no_trace:
            export_perfetto(capture, capture.with_suffix(".pftrace"))
            written.append(capture.with_suffix(".pftrace"))
        if not options.no_html:
            write_html(capture, capture.with_suffix(".html"))
            written.append(capture.with_suffix(".html"))
    except (PerfettoExportError, OutputError) as exc:
        say(f"could not write every output: {exc}")
    for path in written:
        _tell(f"vkscope: wrote {path}")


def _tell(line: str) -> None:
    """A line on standard output. One that cannot be written (a full disk) is said on stderr,
    once (outputs.py), and the run goes on: its exit code stays the application's."""
    try:
        print(line)
    except OutputError as exc:
        say(str(exc))


def _gpu_sampling(options: RunOptions) -> recording.GpuSampling | None:
    """The host's GPU sampler as the options ask; _Refused for values that cannot work."""
    if options.no_gpu_state:
        return None
    rate = options.gpu_state_rate
    if not 1 <= rate <= 2000:
        raise _Refused(f"run: --gpu-state-rate must be 1 to 2000 samples a second, got {rate:g}")
    pci = None
    if options.gpu_pci is not None:
        try:
            pci = normal_pci(options.gpu_pci)
        except ValueError as exc:
            raise _Refused(f"run: --gpu-pci: {exc}") from None
    return recording.GpuSampling(rate, pci)


def _frame_requests(
    options: RunOptions, settings: dict[str, str]
) -> recording.FrameRequests | None:
    """What the capture server asks the layer for under `--frames host`; _Refused when the
    options do not fit together."""
    after, frames = options.capture_after, options.capture_frames
    requested = parse_frame_selection(settings.get("frames", "")).kind == "host"
    if not requested:
        if after is not None or frames != 1:
            raise _Refused("run: --capture-after and --capture-frames need --frames host")
        return None
    if options.no_capture:
        raise _Refused("run: --frames host needs a capture (drop --no-capture)")
    if frames < 1:
        raise _Refused(f"run: --capture-frames must be at least 1, got {frames}")
    if after is not None and not 0 <= after < 1e9:
        raise _Refused(f"run: --capture-after must be a number of seconds >= 0, got {after}")
    return recording.FrameRequests(frames, after)


class _Refused(Exception):
    """Options that cannot work together, or an output that cannot be written: exit 2."""


def _layer_settings(options: RunOptions) -> tuple[dict[str, str], list[str]]:
    """The settings the layer gets and notes on what vkscope run overrode.

    VK_VKSCOPE_* variables come first, then -s, then --timing and --frames, each checked as the
    layer checks it (a SettingError says which one is wrong). Under a capture, the layer must
    stream to vkscope run's own capture server with the timeline on: an option saying otherwise
    is refused, a variable saying otherwise is overridden with a note.
    """
    from_env = from_environment(os.environ)
    settings = dict(from_env)
    given: dict[str, str] = {}
    for text in options.settings:
        name, value = parse_assignment(text)
        given[name] = value
    settings.update(given)
    if options.timing:
        settings["timing"] = parse_assignment(f"timing={options.timing}")[1]
    if options.counters is not None:
        settings["counters"] = options.counters
    if options.budget is not None:
        try:
            settings["budget"] = parse_assignment(f"budget={options.budget}")[1]
        except SettingError as exc:
            raise SettingError(f"--budget {options.budget!r}: {exc}") from None
    if settings.get("budget", "").strip() and not _instrumented(settings):
        raise _Refused(
            "run: a budget holds what --timing and --counters cost, and neither is on: "
            "add one of them, or leave the budget out"
        )
    if options.frames is not None:
        try:
            parse_frame_selection(options.frames)
        except FrameSelectionError as exc:
            raise SettingError(f"--frames {options.frames!r}: {exc}") from None
        settings["frames"] = options.frames
    notes: list[str] = []
    if settings.get("counters", "").strip():
        _select_counters(settings, notes)
    if options.no_capture:
        return settings, notes
    # What a capture needs: the layer streams to vkscope run's server, with the timeline on.
    conflicts: dict[str, Callable[[str], bool]] = {
        "host": lambda _: True,
        "timeline": lambda value: not _as_bool(value),
    }
    needs = {"host": "to be vkscope run's own capture server", "timeline": "on"}
    for name, conflicting in conflicts.items():
        if name in given and conflicting(given[name]):
            raise _Refused(
                f"run: -s {name}={given[name]}: a capture needs the layer's {name} "
                f"{needs[name]} (add --no-capture to run without one)"
            )
        if name in from_env and name not in given and conflicting(from_env[name]):
            notes.append(
                f"{ENV_PREFIX}{name.upper()}={from_env[name]} from the environment is "
                f"overridden: a capture needs {name} {needs[name]} (--no-capture keeps it)"
            )
            del settings[name]
    return settings, notes


def _instrumented(settings: dict[str, str]) -> bool:
    """Some instrument measures the workloads: timing, or counters."""
    return settings.get("timing", "off") != "off" or bool(settings.get("counters", "").strip())


def _khr_counters(settings: dict[str, str], notes: list[str]) -> bool:
    """Checks and completes a setting with khr: counters (counters/performance_query.py); False
    when it names none."""
    from ..counters import CounterError
    from ..counters.performance_query import prepare
    from ..devices import VulkanUnavailable
    from ..settings import all_settings

    try:
        passes = int(settings.get("counter_passes", all_settings()["counter_passes"].default))
        prepared = prepare(settings, passes)
    except CounterError as exc:
        raise SettingError(str(exc)) from None
    except VulkanUnavailable as exc:
        raise SettingError(f"counters: cannot see what the devices count: {exc.message}") from None
    except ValueError:
        raise SettingError("counter_passes: expected a number") from None
    if prepared is None:
        return False
    settings["counters"], frames = prepared
    if frames is not None:
        notes.append(
            f"frames {settings['frames']} widened to {frames}: each frame collects one pass "
            "of the khr counters"
        )
        settings["frames"] = frames
    return True


def _check_counters(text: str) -> None:
    """The counters the setting names, each countable on some device here (before the
    application starts: the layer could only log what it cannot count)."""
    from ..counters import CounterError, check_counters
    from ..devices import VulkanUnavailable, probe

    try:
        check_counters(text, probe())
    except CounterError as exc:
        raise SettingError(str(exc)) from None
    except VulkanUnavailable as exc:
        raise SettingError(f"counters: cannot see what the devices count: {exc.message}") from None


def _select_counters(settings: dict[str, str], notes: list[str]) -> None:
    """Checks the `counters` setting before the application starts: its samplers (a name vkscope
    knows, a library that answers the interface), then the other sources. Samplers go first in
    the value the layer gets, so that no source's list can take them for its own names."""
    from ..counters.samplers import (
        SamplerError,
        check_devices,
        check_samplers,
        sampling_notes,
        without_samplers,
    )
    from ..devices import VulkanUnavailable, probe

    text = settings["counters"]
    try:
        samplers = check_samplers(text)
        if samplers:
            devices = probe()
            check_devices(samplers, devices)
            notes += sampling_notes(devices, settings.get("counter_sampling"))
    except SamplerError as exc:
        raise SettingError(str(exc)) from None
    except VulkanUnavailable as exc:
        raise SettingError(f"counters: cannot see what the devices count: {exc.message}") from None
    rest = without_samplers(text)
    settings["counters"] = rest
    if rest.strip(" ,") and not _khr_counters(settings, notes):
        _check_counters(settings["counters"])
    kept = [settings["counters"]] if settings["counters"].strip(" ,") else []
    settings["counters"] = ",".join([*(f"sampler:{s}" for s in samplers), *kept])


def _as_bool(text: str) -> bool:
    return text.strip().lower() in ("1", "true", "on", "yes")


def _check_writable(path: Path, what: str) -> None:
    """Refuses, before the application starts, a file that could not be created or appended
    to: a missing folder, a read-only file system, no permission."""
    existed = path.exists()
    try:
        with path.open("x" if not existed else "a"):
            pass
    except OSError as exc:
        folder = path.parent if str(path.parent) else Path(".")
        reason = exc.strerror or str(exc)
        if not folder.is_dir():
            reason = f"the folder {folder} does not exist"
        raise _Refused(f"cannot write {what} {path}: {reason}") from None
    if not existed:
        path.unlink()


def execute(options: RunOptions) -> int:
    """Runs the application as `options` say; returns its exit code (2: bad options), or 128 + N
    when vkscope was stopped by signal N (supervisor.py)."""
    command = list(options.command)
    if not command:
        say("run: no application given; usage: vkscope run [OPTIONS] -- APP [ARGS...]")
        return 2
    output: Path | None = None
    try:
        settings, notes = _layer_settings(options)
        tags = parse_tags(list(options.tags))
        layer_dir = paths.layer_dir()
        requests = _frame_requests(options, settings)
        gpu = _gpu_sampling(options)
        launch.resolve_program(command[0])  # before a capture is made for nothing
        if not options.no_capture:
            output = options.output or _default_capture_path(command[0])
            if output.exists():
                raise _Refused(f"{output} already exists; choose another -o or remove it")
            _check_writable(output, "the capture")
        if settings.get("log_file"):
            _check_writable(Path(settings["log_file"]), "the layer's log file")
    except launch.LaunchError as exc:
        say(str(exc))
        return exc.exit_code
    except (SettingError, paths.NotBuilt, _Refused, TagError) as exc:
        say(str(exc))
        return 2
    for note in notes:
        say(note)
    with Supervisor(say) as supervisor:
        return _supervised(options, settings, layer_dir, output, requests, supervisor, tags, gpu)


def _supervised(
    options: RunOptions,
    settings: dict[str, str],
    layer_dir: Path,
    output: Path | None,
    requests: recording.FrameRequests | None,
    supervisor: Supervisor,
    tags: dict[str, str],
    gpu: recording.GpuSampling | None,
) -> int:
    """The run itself, with vkscope's signals held by `supervisor` from before the capture
    server starts until vkscope exits."""
    command = list(options.command)
    console = Console(stderr=True)
    summary: CaptureSummary | None = None
    with tempfile.TemporaryDirectory(prefix="vkscope-run-") as tmp:
        log_file = Path(settings.get("log_file") or Path(tmp) / "layer.log")
        try:
            if output is None:
                result = launch.run(command, layer_dir, settings, log_file, supervisor)
            else:
                recorded = recording.record(
                    command, layer_dir, settings, output, console, log_file, supervisor, requests,
                    tags, gpu,
                )  # fmt: skip
                result, summary = recorded.launch, recorded.summary
        except launch.LaunchError as exc:
            if output is not None:
                output.unlink(missing_ok=True)  # nothing ran: no capture to keep
            say(str(exc))
            return exc.exit_code
        except (CaptureServerError, FileExistsError, OSError, sqlite3.Error) as exc:
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
        _print_summary(console, summary)
    supervisor.take_pending()
    received = supervisor.received
    code = result.exit_code
    if received.termination is not None:
        code = 128 + received.termination
    if summary is None or not summary.counters.instances:
        return code
    if received.skip_outputs:
        got = dict.fromkeys(signal_name(s) for s in received.while_finishing)
        why = ", ".join(got) or signal_name(received.termination or 0)
        say(f"{why}: the capture is finished; no report, trace or page written")
        _tell(f"vkscope: wrote {summary.path}")
        return code
    try:
        with supervisor.interruptible():
            _after_capture(options, summary.path)
    except KeyboardInterrupt:
        say(f"interrupted: the capture {summary.path} is finished; other outputs may be missing")
    except Stopped as stopped:
        say(f"{stopped}: the capture {summary.path} is finished; other outputs may be missing")
        code = 128 + stopped.signo
    return code


def _print_summary(console: Console, summary: CaptureSummary) -> None:
    """One line on what the capture holds, its frames said as `report` and the page say them."""
    c = summary.counters
    frames: FrameCounts | None = None
    try:
        with open_capture(summary.path, check_cells=False) as capture:
            frames = FrameCounts.of(capture)
    except (CaptureError, sqlite3.Error, OSError):
        pass  # the readers that follow say what is wrong with the file
    said = frames.sentence() if frames else f"{c.frames:,} frames ended"
    console.print(
        f"vkscope: capture {summary.path} ({summary.status}): {said}; "
        f"{c.instances:,} workloads, {c.submits:,} submits, {c.dropped:,} dropped, "
        f"{c.bad_messages:,} bad messages",
        highlight=False,
        soft_wrap=True,
    )
    if frames and (hint := frames.hint()):
        say(hint)
    if n := c.refused_connections:
        what = "1 connection was" if n == 1 else f"{n:,} connections were"
        say(
            f"{what} refused by the capture server: from a process of another user, closed "
            "unread (the capture's diagnostics say whose)"
        )


def run(args: argparse.Namespace) -> int:
    code = execute(RunOptions.from_args(args))
    try:  # what is still buffered: its write error would otherwise be the command's exit code
        sys.stdout.flush()
    except OutputError as exc:
        say(str(exc))
    return code


COMMAND = Command(
    name="run",
    help="run an application with the vkscope layer",
    description="Runs APP with the vkscope layer enabled for it alone (nothing is installed "
    "system-wide) and exits with the application's exit code.",
    configure=configure,
    run=run,
    usage="vkscope run [OPTIONS] -- APP [ARGS...]",
)
