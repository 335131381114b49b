#!/usr/bin/env python3
"""Measure what vkscope adds to the CPU cost of recording vkCmdDraw and vkCmdDispatch.

Runs the vkscope-bench-record harness over three layer stacks, all ending in the test-only
VK_LAYER_VKSCOPE_counting layer that swallows the timed command (so the driver's own recording
cost is not part of the number):

  none     counting only: the floor, one indirect call into a trivial function
  direct   vkscope (default settings, no feature hooks these commands) above counting
  wrapped  the same with VK_VKSCOPE_PASSTHROUGH=wrapped
  timeline vkscope with VK_VKSCOPE_TIMELINE=true (no host): draws are counted, a dispatch is a
           tracked and tagged workload

Every (stack, command, threads) point is measured by several separate processes and reported as
the median. Writes bench/results/record_cost.json and docs/bench-record-cost.md.

Build first: cmake -S . -B build/dev -G Ninja && cmake --build build/dev
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import platform
import statistics
import subprocess
import sys
import textwrap
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import msgspec
from machine import cpu_model, git_revision

REPO = Path(__file__).resolve().parent.parent
VKSCOPE_LAYER = "VK_LAYER_VKSCOPE_profiler"
COUNTING_LAYER = "VK_LAYER_VKSCOPE_counting"
COMMANDS = ("draw", "dispatch")
THREADS = (1, 2)
DIRECT_TARGET_NS = 3.0
TIMELINE_DRAW_TARGET_NS = 6.0
# Two threads on two cores share caches, memory bandwidth and the VM's scheduling; a per-call time
# within this factor of the single-thread time counts as "no slowdown".
THREAD_TOLERANCE = 1.10


@dataclass(frozen=True)
class Config:
    key: str
    title: str
    column: str
    layers: tuple[str, ...]
    env: Mapping[str, str] = field(default_factory=dict)


CONFIGS = (
    Config("none", "no vkscope", "no vkscope", (COUNTING_LAYER,)),
    Config(
        "direct",
        "vkscope, features off",
        "features off",
        (VKSCOPE_LAYER, COUNTING_LAYER),
        {"VK_VKSCOPE_PASSTHROUGH": "direct"},
    ),
    Config(
        "wrapped",
        "vkscope, wrapped pass-through",
        "wrapped",
        (VKSCOPE_LAYER, COUNTING_LAYER),
        {"VK_VKSCOPE_PASSTHROUGH": "wrapped"},
    ),
    Config(
        "timeline",
        "vkscope, timeline on",
        "timeline",
        (VKSCOPE_LAYER, COUNTING_LAYER),
        {"VK_VKSCOPE_TIMELINE": "true"},
    ),
)
BASELINE = CONFIGS[0]


class HarnessLine(msgspec.Struct):
    """The JSON line vkscope-bench-record prints."""

    command: str
    threads: int
    calls: int
    ns_per_call: float
    ns_per_call_by_thread: list[float]
    device: str
    driver: str
    driver_info: str


@dataclass(frozen=True)
class Paths:
    harness: Path
    layer_dirs: tuple[Path, ...]

    @classmethod
    def from_build_dir(cls, build_dir: Path) -> Paths:
        paths = cls(
            harness=build_dir / "bench" / "record_cost" / "vkscope-bench-record",
            layer_dirs=(build_dir / "layer", build_dir / "bench" / "counting_layer"),
        )
        wanted = [
            paths.harness,
            paths.layer_dirs[0] / "VkLayer_vkscope.json",
            paths.layer_dirs[1] / "VkLayer_vkscope_counting.json",
        ]
        missing = [str(p) for p in wanted if not p.exists()]
        if missing:
            raise SystemExit(
                "missing build outputs (configure and build the tree first):\n  "
                + "\n  ".join(missing)
            )
        return paths


@dataclass
class Point:
    """All samples of one (config, command, threads) combination."""

    config: Config
    command: str
    threads: int
    samples: list[float] = field(default_factory=list)
    by_thread: list[list[float]] = field(default_factory=list)

    @property
    def median(self) -> float:
        return statistics.median(self.samples)


def bench_env(paths: Paths, config: Config) -> dict[str, str]:
    env = {
        k: v
        for k, v in os.environ.items()
        # Anything that adds, filters or configures layers behind the harness's back would make
        # the stacks differ from what the table says they are.
        if not k.startswith("VK_VKSCOPE_")
        and k not in ("VK_INSTANCE_LAYERS", "VK_LOADER_LAYERS_ENABLE", "VK_LOADER_LAYERS_DISABLE")
    }
    env["VK_ADD_LAYER_PATH"] = os.pathsep.join(str(d) for d in paths.layer_dirs)
    # lavapipe's rasteriser threads are idle while recording, but their start-up would still
    # compete with the two recording threads for the two cores.
    env["LP_NUM_THREADS"] = "0"
    env.update(config.env)
    return env


def run_once(
    paths: Paths, config: Config, command: str, threads: int, calls: int, batch: int
) -> HarnessLine:
    argv = [
        str(paths.harness),
        "--layers",
        ",".join(config.layers),
        "--command",
        command,
        "--threads",
        str(threads),
        "--calls",
        str(calls),
        "--batch",
        str(batch),
    ]
    proc = subprocess.run(
        argv, env=bench_env(paths, config), capture_output=True, text=True, timeout=300
    )
    if proc.returncode != 0:
        raise SystemExit(
            f"{' '.join(argv)} failed (exit {proc.returncode}):\n{proc.stderr.strip()}"
        )
    lines = [line for line in proc.stdout.splitlines() if line.startswith("{")]
    if len(lines) != 1:
        raise SystemExit(f"{' '.join(argv)} printed no single JSON line:\n{proc.stdout}")
    return msgspec.json.decode(lines[-1], type=HarnessLine)


def fmt(ns: float) -> str:
    return f"{ns:.2f}"


def fmt_added(ns: float) -> str:
    # Adding 0.0 turns a rounded -0.0 into 0.0, so no-change never reads as "-0.00".
    return f"{round(ns, 2) + 0.0:+.2f}"


def find(points: Sequence[Point], config: Config, command: str, threads: int) -> Point:
    return next(
        p for p in points if p.config is config and p.command == command and p.threads == threads
    )


def results_table(points: Sequence[Point]) -> list[str]:
    head = ["Command", "Threads"]
    for config in CONFIGS:
        head.append(config.column)
        if config is not BASELINE:
            head.append("added")
    rows = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for command in COMMANDS:
        for threads in THREADS:
            base = find(points, BASELINE, command, threads).median
            cells = [f"vkCmd{command.capitalize()}", str(threads)]
            for config in CONFIGS:
                median = find(points, config, command, threads).median
                cells.append(fmt(median))
                if config is not BASELINE:
                    cells.append(fmt_added(median - base))
            rows.append("| " + " | ".join(cells) + " |")
    return rows


def thread_table(points: Sequence[Point]) -> list[str]:
    rows = [
        "| Stack | Command | 1 thread | 2 threads | 2 / 1 |",
        "|---|---|---|---|---|",
    ]
    for config in CONFIGS:
        for command in COMMANDS:
            one = find(points, config, command, 1).median
            two = find(points, config, command, 2).median
            rows.append(
                f"| {config.column} | vkCmd{command.capitalize()} | {fmt(one)} | {fmt(two)} "
                f"| {two / one:.3f} |"
            )
    return rows


def verdicts(points: Sequence[Point]) -> list[str]:
    direct = CONFIGS[1]
    worst_added = max(
        find(points, direct, c, t).median - find(points, BASELINE, c, t).median
        for c in COMMANDS
        for t in THREADS
    )
    worst_ratio = max(
        find(points, cfg, c, 2).median / find(points, cfg, c, 1).median
        for cfg in CONFIGS
        for c in COMMANDS
    )
    timeline = CONFIGS[3]
    worst_draw = max(
        find(points, timeline, "draw", t).median - find(points, BASELINE, "draw", t).median
        for t in THREADS
    )
    draw_ok = worst_draw <= TIMELINE_DRAW_TARGET_NS
    added_ok = worst_added <= DIRECT_TARGET_NS
    ratio_ok = worst_ratio <= THREAD_TOLERANCE
    return [
        f"- Features off, at most {DIRECT_TARGET_NS:g} ns/call added: "
        f"**{'met' if added_ok else 'MISSED'}** (worst {fmt_added(worst_added)} ns/call).",
        f"- Two threads no slower per call than one (within {THREAD_TOLERANCE - 1:.0%}): "
        f"**{'met' if ratio_ok else 'MISSED'}** (worst ratio {worst_ratio:.3f}).",
        f"- Timeline on, at most {TIMELINE_DRAW_TARGET_NS:g} ns added per vkCmdDraw: "
        f"**{'met' if draw_ok else 'MISSED'}** (worst {fmt_added(worst_draw)} ns/call). A"
        " dispatch is a whole workload (tag labels, a command-stream entry), so its cost is"
        " per workload, not per call of a hot loop.",
    ]


def wrap(text: str, first: str = "", rest: str = "") -> list[str]:
    """One Markdown paragraph or list item, wrapped like the rest of the docs."""
    return textwrap.wrap(
        text, width=100, initial_indent=first, subsequent_indent=rest, break_on_hyphens=False
    )


def markdown(report: Mapping[str, object], points: Sequence[Point]) -> str:
    machine = report["machine"]
    settings = report["settings"]
    assert isinstance(machine, dict) and isinstance(settings, dict)
    none, direct, wrapped, timeline = CONFIGS
    revision = f", vkscope {report['revision']}" if report["revision"] else ""
    lines = [
        "# What vkscope adds to command recording",
        "",
        "<!-- Written by bench/record_cost.py; rerun it rather than editing the numbers. -->",
        "",
        *wrap(
            "An application records `vkCmdDraw` and `vkCmdDispatch` millions of times per"
            " second, so the layer must not make them measurably slower when no feature of"
            " vkscope needs them. `bench/record_cost.py` times one such call through three layer"
            " stacks, each enabled by the application in this order (the first layer is closest"
            " to the application):"
        ),
        "",
        *wrap(
            f"**{none.title}**: `{COUNTING_LAYER}` only. This test layer (`bench/counting_layer`)"
            " increments a per-thread counter and does not forward the command, so the driver's"
            " own recording cost is in none of the numbers and the floor is one indirect call"
            " into a trivial function.",
            "- ",
            "  ",
        ),
        *wrap(
            f"**{direct.title}**: `{VKSCOPE_LAYER}` above the counting layer with its default"
            " settings: no feature hooks these commands, so vkscope hands out the counting"
            " layer's own pointer and should add nothing.",
            "- ",
            "  ",
        ),
        *wrap(
            f"**{wrapped.title}**: the same with `VK_VKSCOPE_PASSTHROUGH=wrapped`, which routes"
            " every command through vkscope's generated entry points and their dispatch-table"
            " lookup: roughly the price of one intercepted command that does no work of its own.",
            "- ",
            "  ",
        ),
        *wrap(
            f"**{timeline.title}**: the same with `VK_VKSCOPE_TIMELINE=true` (no host): each draw"
            " is counted for its render pass through one lock-free lookup of the command"
            " buffer's state; each dispatch becomes a tracked workload with its `t<tagID>`"
            " labels written around it.",
            "- ",
            "  ",
        ),
        "",
        *wrap(
            "The harness (`bench/record_cost/main.cpp`) takes the commands from"
            " `vkGetDeviceProcAddr`, as an engine using volk does, so the loader's trampoline is"
            f" not measured. Each thread records {settings['calls']:,} calls into its own command"
            f" pool, in command buffers of {settings['batch']:,} calls (inside a render pass for"
            " draws), after warm-up batches; the threads start together on a latch and record"
            " concurrently. Only the calls are timed (`std::chrono::steady_clock` around each"
            " batch's loop; begin, bind, end and reset are the driver's and the same for every"
            f" stack), and nothing is submitted. Every point is the median of {settings['runs']}"
            " separate processes, in nanoseconds per call and per thread."
        ),
        "",
        "## Targets",
        "",
        *wrap(
            f"Features off: at most {DIRECT_TARGET_NS:g} ns/call added over the stack without"
            " vkscope.",
            "- ",
            "  ",
        ),
        *wrap(
            "Two recording threads: no slowdown per call compared with one thread (nothing on"
            " this path may take a lock or write a cache line that another thread writes).",
            "- ",
            "  ",
        ),
        "",
        "## Results",
        "",
        f"- Machine: {machine['cpu_model']}, {machine['cores']} cores, {machine['system']}",
        f"- Device: {machine['device']}; driver {machine['driver']}, {machine['driver_info']}",
        f"- Date: {report['date']}{revision}",
        "",
        "Nanoseconds per call; *added* is the difference to the stack without vkscope.",
        "",
        *results_table(points),
        "",
        "Two threads against one, nanoseconds per call and thread:",
        "",
        *thread_table(points),
        "",
        *verdicts(points),
        "",
        "## Reproduce",
        "",
        "```sh",
        "cmake -S . -B build/dev -G Ninja -DVKSCOPE_BUILD_WORKLOADS=OFF",
        "cmake --build build/dev",
        ".venv/bin/python bench/record_cost.py --build-dir build/dev",
        "```",
        "",
        *wrap(
            "The driver sets `VK_ADD_LAYER_PATH` to `build/dev/layer` and"
            " `build/dev/bench/counting_layer` and `LP_NUM_THREADS=0`, removes"
            " `VK_INSTANCE_LAYERS` and every `VK_VKSCOPE_*` setting from the environment, and"
            " interleaves the runs so that a drifting machine affects every stack alike. Raw"
            " samples, per-thread times and the machine description go to"
            " `bench/results/record_cost.json`. One point by hand:"
        ),
        "",
        "```sh",
        "VK_ADD_LAYER_PATH=build/dev/layer:build/dev/bench/counting_layer LP_NUM_THREADS=0 \\",
        "  build/dev/bench/record_cost/vkscope-bench-record \\",
        f"  --layers {VKSCOPE_LAYER},{COUNTING_LAYER} --command draw --threads 2",
        "```",
        "",
    ]
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--build-dir", type=Path, default=REPO / "build" / "dev")
    parser.add_argument("--runs", type=int, default=5, help="processes per point (median)")
    parser.add_argument("--calls", type=int, default=2_000_000, help="timed calls per thread")
    parser.add_argument("--batch", type=int, default=10_000, help="calls per command buffer")
    parser.add_argument(
        "--results", type=Path, default=REPO / "bench" / "results" / "record_cost.json"
    )
    parser.add_argument("--docs", type=Path, default=REPO / "docs" / "bench-record-cost.md")
    args = parser.parse_args(argv)
    if args.runs < 1 or args.calls < 1 or args.batch < 1:
        parser.error("--runs, --calls and --batch must be positive")

    paths = Paths.from_build_dir(args.build_dir.resolve())
    points = [Point(cfg, cmd, t) for cfg in CONFIGS for cmd in COMMANDS for t in THREADS]
    last: HarnessLine | None = None
    # Round-robin over the points, so slow drift of the machine spreads over all of them.
    for run in range(args.runs):
        for point in points:
            line = run_once(
                paths, point.config, point.command, point.threads, args.calls, args.batch
            )
            point.samples.append(line.ns_per_call)
            point.by_thread.append(line.ns_per_call_by_thread)
            last = line
            print(
                f"run {run + 1}/{args.runs} {point.config.key:8} {point.command:8} "
                f"threads={point.threads}: {line.ns_per_call:.3f} ns/call",
                file=sys.stderr,
            )
    assert last is not None

    uname = platform.uname()
    report: dict[str, object] = {
        "date": datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%d %H:%M UTC"),
        "revision": git_revision(),
        "machine": {
            "cpu_model": cpu_model(),
            "cores": os.cpu_count(),
            "system": f"{uname.system} {uname.release} {uname.machine}",
            "device": last.device,
            "driver": last.driver,
            "driver_info": last.driver_info,
        },
        "settings": {
            "runs": args.runs,
            "calls": args.calls,
            "batch": args.batch,
            "LP_NUM_THREADS": "0",
        },
        "results": [
            {
                "config": p.config.key,
                "layers": list(p.config.layers),
                "env": dict(p.config.env),
                "command": f"vkCmd{p.command.capitalize()}",
                "threads": p.threads,
                "median_ns_per_call": p.median,
                "added_ns_per_call": p.median - find(points, BASELINE, p.command, p.threads).median,
                "samples_ns_per_call": p.samples,
                "samples_ns_per_call_by_thread": p.by_thread,
            }
            for p in points
        ],
    }
    args.results.parent.mkdir(parents=True, exist_ok=True)
    args.results.write_text(json.dumps(report, indent=2) + "\n")
    doc = markdown(report, points)
    args.docs.parent.mkdir(parents=True, exist_ok=True)
    args.docs.write_text(doc)
    print("\n".join(results_table(points)))
    print()
    print("\n".join(thread_table(points)))
    print()
    print("\n".join(verdicts(points)))
    print(f"\nwrote {args.results} and {args.docs}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
