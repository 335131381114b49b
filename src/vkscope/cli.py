"""The `vkscope` command line."""

from __future__ import annotations

import argparse
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path

from . import __version__, launch, paths
from .settings import SettingError, all_settings, parse_assignment


def _err(message: str) -> None:
    print(f"vkscope: {message}", file=sys.stderr)


def cmd_run(args: argparse.Namespace) -> int:
    command: list[str] = args.command
    if command and command[0] == "--":
        command = command[1:]
    if not command:
        _err("run: no application given; usage: vkscope run [OPTIONS] -- APP [ARGS...]")
        return 2
    try:
        settings = dict(parse_assignment(s) for s in args.setting)
        layer_dir = paths.layer_dir()
    except (SettingError, paths.NotBuilt) as exc:
        _err(str(exc))
        return 2
    with tempfile.TemporaryDirectory(prefix="vkscope-run-") as tmp:
        log_file = Path(settings.get("log_file") or Path(tmp) / "layer.log")
        try:
            result = launch.run(command, layer_dir, settings, log_file)
        except launch.LaunchError as exc:
            _err(str(exc))
            return exc.exit_code
    for line in result.layer_messages:
        print(line, file=sys.stderr)
    if not result.layer_loaded:
        _err(launch.not_loaded_reason(command[0]))
    return result.exit_code


def cmd_demo(args: argparse.Namespace) -> int:
    """Runs the bundled workload program, every scenario, under the layer."""
    try:
        program = paths.workload_program()
    except paths.NotBuilt as exc:
        _err(str(exc))
        return 2
    extra = ["--frames", str(args.frames)]
    return cmd_run(
        argparse.Namespace(command=[str(program), "--all", *extra], setting=args.setting)
    )


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
    demo.add_argument("-s", "--setting", action="append", default=[], metavar="NAME=VALUE")
    demo.set_defaults(func=cmd_demo)

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
