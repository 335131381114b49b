"""The `vkscope` command line."""

from __future__ import annotations

import argparse
import datetime
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path

from rich.console import Console

from . import __version__, launch, paths, recording
from .analysis import commands as analysis_commands
from .capture import CaptureServerError
from .capture.messages import SERIALIZATION
from .diff import configure_parser as configure_diff
from .settings import SettingError, all_settings, parse_assignment


def _err(message: str) -> None:
    print(f"vkscope: {message}", file=sys.stderr)


def _default_capture_path(program: str) -> Path:
    stamp = datetime.datetime.now().strftime("%Y%m%d-%H%M%S")
    path = Path(f"{Path(program).name}-{stamp}.vkscope")
    n = 1
    while path.exists():  # several runs within one second
        n += 1
        path = Path(f"{Path(program).name}-{stamp}-{n}.vkscope")
    return path


def _after_capture(args: argparse.Namespace, capture: Path) -> None:
    """The default outputs of a capture: a short report, a Perfetto trace and an HTML page."""
    from .export import PerfettoExportError, export_perfetto
    from .html import write_html

    if not args.no_report:
        summary = ["report", str(capture), "--table", "frames", "--table", "costliest"]
        if args.report_all:
            summary = ["report", str(capture)]
        report_args = build_parser().parse_args(summary)
        report_args.func(report_args)
    written = [capture]
    try:
        if not args.no_trace:
            export_perfetto(capture, capture.with_suffix(".pftrace"))
            written.append(capture.with_suffix(".pftrace"))
        if not args.no_html:
            write_html(capture, capture.with_suffix(".html"))
            written.append(capture.with_suffix(".html"))
    except (PerfettoExportError, OSError) as exc:
        _err(f"could not write every output: {exc}")
    for path in written:
        print(f"vkscope: wrote {path}")


def _host_trigger(
    args: argparse.Namespace, settings: dict[str, str]
) -> tuple[recording.HostTrigger | None, str | None]:
    """The capture requests of `--frames host`, or why the options do not fit together."""
    after: float | None = getattr(args, "capture_after", None)
    frames: int = getattr(args, "capture_frames", 1)
    host = settings.get("frames", "").strip() == "host"
    if not host:
        if after is not None or frames != 1:
            return None, "--capture-after and --capture-frames need --frames host"
        return None, None
    if args.no_capture:
        return None, "--frames host needs a capture (drop --no-capture)"
    if frames < 1:
        return None, f"--capture-frames must be at least 1, got {frames}"
    if after is not None and not 0 <= after < 1e9:
        return None, f"--capture-after must be a number of seconds >= 0, got {after}"
    return recording.HostTrigger(frames, after), None


def cmd_run(args: argparse.Namespace) -> int:
    command: list[str] = args.command
    if command and command[0] == "--":
        command = command[1:]
    if not command:
        _err("run: no application given; usage: vkscope run [OPTIONS] -- APP [ARGS...]")
        return 2
    try:
        settings = dict(parse_assignment(s) for s in args.setting)
        if getattr(args, "timing", None):
            settings["timing"] = parse_assignment(f"timing={args.timing}")[1]
        if getattr(args, "frames", None):
            settings["frames"] = args.frames
        layer_dir = paths.layer_dir()
    except (SettingError, paths.NotBuilt) as exc:
        _err(str(exc))
        return 2
    trigger, why = _host_trigger(args, settings)
    if why:
        _err(f"run: {why}")
        return 2
    console = Console(stderr=True)
    try:
        launch.resolve_program(command[0])  # before a capture file is created for nothing
    except launch.LaunchError as exc:
        _err(str(exc))
        return exc.exit_code
    with tempfile.TemporaryDirectory(prefix="vkscope-run-") as tmp:
        log_file = Path(settings.get("log_file") or Path(tmp) / "layer.log")
        try:
            if args.no_capture:
                result = launch.run(command, layer_dir, settings, log_file)
                summary = None
            else:
                output = args.output or _default_capture_path(command[0])
                if output.exists():
                    _err(f"{output} already exists; choose another -o or remove it")
                    return 2
                recorded = recording.record(
                    command, layer_dir, settings, output, console, log_file, trigger
                )
                result, summary = recorded.launch, recorded.summary
        except launch.LaunchError as exc:
            _err(str(exc))
            return exc.exit_code
        except (CaptureServerError, FileExistsError, OSError) as exc:
            _err(f"capture: {exc}")
            return 2
    for line in result.layer_messages:
        print(line, file=sys.stderr)
    if not result.layer_loaded:
        _err(launch.not_loaded_reason(command[0]))
    if summary is not None and summary.counters.connections == 0:
        # Nothing ever connected (not a Vulkan application, or the layer did not load): an
        # empty capture would only be clutter next to the message above.
        summary.path.unlink(missing_ok=True)
        _err(f"no capture written to {summary.path}: the layer never connected")
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
        _after_capture(args, summary.path)
    return result.exit_code


def cmd_demo(args: argparse.Namespace) -> int:
    """Runs the bundled workload program, every scenario, under the layer."""
    try:
        program = paths.workload_program()
    except paths.NotBuilt as exc:
        _err(str(exc))
        return 2
    command = [str(program), "--all", "--frames", str(args.frames)]
    for suffix in (".vkscope", ".pftrace", ".html"):  # the demo's own files from an earlier demo
        args.output.with_suffix(suffix).unlink(missing_ok=True)
    return cmd_run(
        argparse.Namespace(
            command=command,
            setting=args.setting,
            no_capture=False,
            output=args.output,
            timing="queue",
            frames=None,
            capture_after=None,
            capture_frames=1,
            no_report=False,
            report_all=False,
            no_trace=False,
            no_html=False,
        )
    )


def cmd_perfetto(args: argparse.Namespace) -> int:
    from .capture import CaptureError
    from .export import PerfettoExportError, export_perfetto

    output: Path = args.output or args.capture.with_suffix(".pftrace")
    try:
        summary = export_perfetto(args.capture, output, merge=args.merge)
    except (CaptureError, PerfettoExportError) as exc:
        _err(str(exc))
        return 2
    print(f"vkscope: wrote {output} ({summary.workloads:,} workloads)")
    return 0


def cmd_html(args: argparse.Namespace) -> int:
    from .capture import CaptureError
    from .html import write_html

    output: Path = args.output or args.capture.with_suffix(".html")
    try:
        write_html(args.capture, output)
    except CaptureError as exc:
        _err(str(exc))
        return 2
    except OSError as exc:
        _err(f"cannot write {output}: {exc.strerror or exc}")
        return 2
    print(f"vkscope: wrote {output}")
    return 0


def cmd_devices(args: argparse.Namespace) -> int:
    from . import device_report

    return device_report.main(as_json=args.json)


def cmd_settings(args: argparse.Namespace) -> int:
    for s in all_settings().values():
        allowed = "|".join(s.values) if s.values else s.type
        print(f"{s.name}  ({allowed}, default {s.default!r}, env {s.env_var})")
        print(f"    {s.summary}")
    return 0


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="vkscope",
        description="Per-workload Vulkan GPU profiling: run an application under the vkscope "
        "layer, then report on what it captured.",
    )
    parser.add_argument("--version", action="version", version=f"vkscope {__version__}")
    sub = parser.add_subparsers(dest="verb", metavar="COMMAND", required=True)

    run = sub.add_parser(
        "run",
        help="run an application with the vkscope layer",
        description="Runs APP with the vkscope layer enabled for it alone (nothing is installed "
        "system-wide) and exits with the application's exit code.",
        usage="vkscope run [OPTIONS] -- APP [ARGS...]",
    )
    run.add_argument(
        "-s",
        "--setting",
        action="append",
        default=[],
        metavar="NAME=VALUE",
        help="a layer setting (see 'vkscope settings'); repeatable",
    )
    run.add_argument(
        "-o",
        "--output",
        type=Path,
        default=None,
        metavar="CAPTURE",
        help="capture file to write (default: APP-DATE-TIME.vkscope in this folder)",
    )
    run.add_argument(
        "--timing",
        choices=SERIALIZATION,
        default=None,
        help="GPU time of every workload from timer queries: none (timestamps only), queue "
        "(workloads of a queue serialized), full (also across queues); off without it",
    )
    run.add_argument(
        "--frames",
        default=None,
        metavar="SEL",
        help="frames to capture: 3,10-20,100-  every:N  trigger:PATH  host (default: all); "
        "host: the frames vkscope asks for, --capture-after S or SIGUSR1 to vkscope",
    )
    run.add_argument(
        "--capture-after",
        type=float,
        default=None,
        metavar="S",
        help="with --frames host: ask for a capture S seconds after the start",
    )
    run.add_argument(
        "--capture-frames",
        type=int,
        default=1,
        metavar="N",
        help="with --frames host: frames each request captures (default 1)",
    )
    run.add_argument(
        "--no-capture",
        action="store_true",
        help="load the layer without the timeline and write no capture",
    )
    run.add_argument(
        "--no-report", action="store_true", help="print no report summary after the run"
    )
    run.add_argument(
        "--report-all",
        action="store_true",
        help="print the whole report (every workload of every frame) instead of its summary",
    )
    run.add_argument("--no-trace", action="store_true", help="write no Perfetto trace")
    run.add_argument("--no-html", action="store_true", help="write no HTML timeline")
    run.add_argument("command", nargs=argparse.REMAINDER, help="the application and its arguments")
    run.set_defaults(func=cmd_run)

    demo = sub.add_parser(
        "demo",
        help="run the bundled workload program under the layer",
        description="Runs vkscope-workload (every scenario: render passes, dynamic rendering, "
        "secondaries, multiview, compute, transfers, labels, several submits and queues) under "
        "the vkscope layer; each scenario checks its own results.",
    )
    demo.add_argument("--frames", type=int, default=3, help="frames to run (default 3)")
    demo.add_argument(
        "-o",
        "--output",
        type=Path,
        default=Path("vkscope-demo.vkscope"),
        metavar="CAPTURE",
        help="capture file to write (default: vkscope-demo.vkscope)",
    )
    demo.add_argument("-s", "--setting", action="append", default=[], metavar="NAME=VALUE")
    demo.set_defaults(func=cmd_demo)

    rep = sub.add_parser(
        "report",
        help="GPU time per workload, frame and queue; costliest workloads and label subtrees",
        description="Per frame and queue, the workloads in submission order with type, label "
        "path, key metadata, GPU time and share of the frame; then the costliest workloads and "
        "GPU time by label subtree.",
    )
    analysis_commands.add_report_arguments(rep)
    rep.set_defaults(func=analysis_commands.run_report)

    qry = sub.add_parser(
        "query",
        help="run one SQL SELECT on a capture",
        description="Runs one SELECT on the capture, opened read-only (docs/capture-schema.md).",
    )
    analysis_commands.add_query_arguments(qry)
    qry.set_defaults(func=analysis_commands.run_query)

    ovl = sub.add_parser(
        "overlap",
        help="the overlap serialization removed: a `none` capture against a `queue` one",
        description="Compares two captures of the same application, timed with `none` and with "
        "`queue` (or `full`): per workload and per frame, what the overlap hid.",
    )
    analysis_commands.add_overlap_arguments(ovl)
    ovl.set_defaults(func=analysis_commands.run_overlap)

    pf = sub.add_parser(
        "perfetto",
        help="export a capture as a Perfetto trace",
        description="Writes a Perfetto trace: a GPU track per queue with a slice per workload "
        "(named by type and label, metadata as arguments) under its label slices, and CPU-side "
        "submits and frames. --merge attaches the capture's metadata to the GPU render stage "
        "events of a device trace whose labels carry vkscope's t<tagID> tags (docs/perfetto.md).",
    )
    pf.add_argument("capture", type=Path)
    pf.add_argument("-o", "--output", type=Path, default=None, help="default: CAPTURE.pftrace")
    pf.add_argument("--merge", type=Path, default=None, metavar="DEVICE_TRACE")
    pf.set_defaults(func=cmd_perfetto)

    ht = sub.add_parser(
        "html",
        help="write an offline HTML timeline of a capture",
        description="Writes one self-contained HTML file (no network needed): a zoomable "
        "timeline per queue, workload details, a frame picker, a sortable workload table and a "
        "label-tree breakdown of GPU time.",
    )
    ht.add_argument("capture", type=Path)
    ht.add_argument("-o", "--output", type=Path, default=None, help="default: CAPTURE.html")
    ht.set_defaults(func=cmd_html)

    dif = sub.add_parser(
        "diff",
        help="compare two captures workload by workload; exit 1 on a regression",
        description="Matches NEW's workloads to BASE's by stable identity (docs/diff.md), lists "
        "added and removed workloads and cost changes beyond a noise-aware threshold; exits 1 on "
        "a regression, 2 on bad input.",
    )
    configure_diff(dif)

    dev = sub.add_parser(
        "devices",
        help="list Vulkan devices and what they support for profiling",
        description="Lists every Vulkan device with what matters for profiling: versions, queue "
        "families and their timestamps, calibrated time domains, query and counter support.",
    )
    dev.add_argument("--json", action="store_true", help="print JSON instead of tables")
    dev.set_defaults(func=cmd_devices)

    st = sub.add_parser(
        "settings",
        help="list the layer's settings",
        description="Lists every layer setting with its values, default and environment variable.",
    )
    st.set_defaults(func=cmd_settings)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    code: int = args.func(args)
    return code


if __name__ == "__main__":
    sys.exit(main())
