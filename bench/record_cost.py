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
the median. Writes bench/results/record_cost.json (every run) and docs/bench/record-cost.md
(`render`).

Build first: cmake -S . -B build/dev -G Ninja && cmake --build build/dev
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import textwrap
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import msgspec

from bench.resultfile import (
    DOCS_DIR,
    banner,
    median,
    met,
    new,
    not_run,
    provenance,
    publish,
    results_path,
    spread,
)

REPO = Path(__file__).resolve().parent.parent
NAME = "record_cost"
DOC = DOCS_DIR / "record-cost.md"
VKSCOPE_LAYER = "VK_LAYER_VKSCOPE_profiler"
COUNTING_LAYER = "VK_LAYER_VKSCOPE_counting"
COMMANDS = ("draw", "dispatch")
THREADS = (1, 2)
DIRECT_TARGET_NS = 3.0
TIMELINE_DRAW_TARGET_NS = 6.0
# Two threads on two cores share caches, memory bandwidth and the VM's scheduling; a per-call time
# within this factor of the single-thread time counts as "no slowdown".
THREAD_TOLERANCE = 1.10
DEFAULTS = {"runs": 5, "calls": 2_000_000, "batch": 10_000}


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
# Timing on, with a frame selection that captures nothing: what an application pays between the
# frames it profiles. Measured by bench/timing_cost.py and by the device checks.
IDLE_FRAMES = "1000000-"
IDLE_TARGET_NS = 5.0
IDLE_CONFIG = Config(
    "idle",
    "vkscope, timing queue, frame not captured",
    "timing (idle)",
    (VKSCOPE_LAYER, COUNTING_LAYER),
    {"VK_VKSCOPE_TIMING": "queue", "VK_VKSCOPE_FRAMES": IDLE_FRAMES},
)


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
    def from_package(cls) -> Paths:
        """The harness and the counting layer the installed package carries (pip install .)."""
        from vkscope import paths

        layer = paths.layer_dir()
        return cls.checked(
            cls(
                harness=paths.PACKAGE_DIR / "_bin" / "vkscope-bench-record",
                layer_dirs=(layer, layer / "testing"),
            )
        )

    @classmethod
    def from_build_dir(cls, build_dir: Path) -> Paths:
        return cls.checked(
            cls(
                harness=build_dir / "bench" / "record_cost" / "vkscope-bench-record",
                layer_dirs=(build_dir / "layer", build_dir / "bench" / "counting_layer"),
            )
        )

    @classmethod
    def checked(cls, paths: Paths) -> Paths:
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


def harness_argv(
    paths: Paths, config: Config, command: str, threads: int, calls: int, batch: int
) -> list[str]:
    return [
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


def run_once(
    paths: Paths, config: Config, command: str, threads: int, calls: int, batch: int
) -> HarnessLine:
    argv = harness_argv(paths, config, command, threads, calls, batch)
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


# Instruction counts per call: the difference between two runs of different lengths under
# Valgrind's callgrind, so start-up and device creation cancel out. Unlike nanoseconds they do not
# depend on the machine's clock or on what else runs there, so they tell a change in the code from
# a change of machine.
INSTRUCTION_CALLS = (20_000, 120_000)


def callgrind_instructions(argv: Sequence[str], env: Mapping[str, str]) -> int:
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "callgrind.out"
        proc = subprocess.run(
            ["valgrind", "--tool=callgrind", f"--callgrind-out-file={out}", *argv],
            env=dict(env),
            capture_output=True,
            text=True,
            timeout=600,
        )
        if proc.returncode != 0:
            raise SystemExit(f"callgrind {' '.join(argv)} failed:\n{proc.stderr.strip()}")
        for line in out.read_text().splitlines():
            if line.startswith("totals:") or line.startswith("summary:"):
                return int(line.split()[1])
    raise SystemExit(f"callgrind {' '.join(argv)} wrote no total")


def instructions_per_call(paths: Paths, config: Config, command: str, batch: int) -> float | None:
    """Instructions one call costs through the stack, or None without Valgrind."""
    if shutil.which("valgrind") is None:
        return None
    totals = []
    for calls in INSTRUCTION_CALLS:
        argv = harness_argv(paths, config, command, 1, calls, min(batch, calls))
        totals.append(callgrind_instructions(argv, bench_env(paths, config)))
    return (totals[1] - totals[0]) / (INSTRUCTION_CALLS[1] - INSTRUCTION_CALLS[0])


def fmt(ns: float) -> str:
    return f"{ns:.2f}"


def fmt_added(ns: float) -> str:
    # Adding 0.0 turns a rounded -0.0 into 0.0, so no-change never reads as "-0.00".
    return f"{round(ns, 2) + 0.0:+.2f}"


def api(command: str) -> str:
    return f"vkCmd{command.capitalize()}"


@dataclass(frozen=True)
class Grid:
    """Every run of every (stack, command, threads) point, from a results file."""

    samples: Mapping[tuple[str, str, int], Sequence[float]]
    configs: Sequence[Config]
    threads: Sequence[int]

    @classmethod
    def of(
        cls,
        entries: Sequence[Mapping[str, Any]],
        configs: Sequence[Config] = (*CONFIGS, IDLE_CONFIG),
    ) -> Grid:
        samples = {
            (e["config"], e["command"].removeprefix("vkCmd").lower(), e["threads"]): e[
                "samples_ns_per_call"
            ]
            for e in entries
        }
        threads = sorted({t for _, _, t in samples})
        present = [c for c in configs if any(k == c.key for k, _, _ in samples)]
        return cls(samples, present, threads)

    def runs(self, config: Config, command: str, threads: int) -> Sequence[float]:
        return self.samples[(config.key, command, threads)]

    def median(self, config: Config, command: str, threads: int) -> float:
        return median(self.runs(config, command, threads))

    def added(self, config: Config, command: str, threads: int) -> list[float]:
        """Per run, the time added over the stack without vkscope measured in the same round
        (the runs are interleaved, so each round saw the machine in one state)."""
        base = self.runs(BASELINE, command, threads)
        return [a - b for a, b in zip(self.runs(config, command, threads), base, strict=True)]


def results_table(grid: Grid) -> list[str]:
    head = ["Command", "Threads"]
    for config in grid.configs:
        head.append(config.column)
        if config is not BASELINE:
            head.append("added")
    rows = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for command in COMMANDS:
        for threads in grid.threads:
            base = grid.median(BASELINE, command, threads)
            cells = [api(command), str(threads)]
            for config in grid.configs:
                value = grid.median(config, command, threads)
                cells.append(fmt(value))
                if config is not BASELINE:
                    cells.append(fmt_added(value - base))
            rows.append("| " + " | ".join(cells) + " |")
    return rows


def spread_table(grid: Grid) -> list[str]:
    rows = ["| Stack | Command | Threads | min | median | max |", "|---|---|---|---|---|---|"]
    for config in grid.configs:
        for command in COMMANDS:
            for threads in grid.threads:
                runs = grid.runs(config, command, threads)
                rows.append(
                    f"| {config.column} | {api(command)} | {threads} | {fmt(min(runs))} "
                    f"| {fmt(median(runs))} | {fmt(max(runs))} |"
                )
    return rows


def thread_table(grid: Grid) -> list[str]:
    rows = [
        "| Stack | Command | 1 thread | 2 threads | 2 / 1 |",
        "|---|---|---|---|---|",
    ]
    for config in grid.configs:
        for command in COMMANDS:
            one = grid.median(config, command, 1)
            two = grid.median(config, command, 2)
            rows.append(
                f"| {config.column} | {api(command)} | {fmt(one)} | {fmt(two)} | {two / one:.3f} |"
            )
    return rows


def worst(
    points: Sequence[tuple[str, int]], value: Callable[[str, int], Sequence[float]]
) -> tuple[str, int, Sequence[float]]:
    """The point whose median is the highest, with its runs."""
    return max(((c, t, value(c, t)) for c, t in points), key=lambda p: median(p[2]))


def verdicts(grid: Grid) -> list[str]:
    """Each target, judged on the median of the runs, with their spread."""
    keys = {c.key for c in grid.configs}
    lines = []
    every = [(c, t) for c in COMMANDS for t in grid.threads]
    if "direct" in keys:
        c, t, runs = worst(every, lambda c, t: grid.added(CONFIGS[1], c, t))
        lines.append(
            f"- Features off, at most {DIRECT_TARGET_NS:g} ns/call added: "
            f"{met(median(runs) <= DIRECT_TARGET_NS)} (worst point {api(c)}, {t} thread(s): "
            f"{spread(runs, fmt_added)} ns/call)."
        )
    if 1 in grid.threads and 2 in grid.threads:

        def ratio(cfg: Config, c: str) -> list[float]:
            one, two = grid.runs(cfg, c, 1), grid.runs(cfg, c, 2)
            return [b / a for a, b in zip(one, two, strict=True)]

        ratios = [(cfg, c, ratio(cfg, c)) for cfg in grid.configs for c in COMMANDS]
        cfg, c, runs = max(ratios, key=lambda r: median(r[2]))
        lines.append(
            f"- Two threads no slower per call than one (within {THREAD_TOLERANCE - 1:.0%}): "
            f"{met(median(runs) <= THREAD_TOLERANCE)} (worst {cfg.column} {api(c)}: ratio "
            f"{spread(runs, lambda v: f'{v:.3f}')})."
        )
    if "timeline" in keys:
        draws = [("draw", t) for t in grid.threads]
        _, t, runs = worst(draws, lambda c, t: grid.added(CONFIGS[3], c, t))
        lines.append(
            f"- Timeline on, at most {TIMELINE_DRAW_TARGET_NS:g} ns added per vkCmdDraw: "
            f"{met(median(runs) <= TIMELINE_DRAW_TARGET_NS)} (worst {t} thread(s): "
            f"{spread(runs, fmt_added)} ns/call). A dispatch is a whole workload (tag labels, a"
            " command-stream entry), so its cost is per workload, not per call of a hot loop."
        )
    if "idle" in keys and "direct" in keys:
        for command in COMMANDS:
            base = grid.runs(CONFIGS[1], command, 1)
            idle = grid.runs(IDLE_CONFIG, command, 1)
            runs = [a - b for a, b in zip(idle, base, strict=True)]
            lines.append(
                f"- Timing on outside captured frames, at most {IDLE_TARGET_NS:g} ns/call over "
                f"features off: {api(command)} {met(median(runs) <= IDLE_TARGET_NS)} "
                f"({spread(runs, fmt_added)} ns/call, 1 thread)."
            )
    return lines


def wrap(text: str, first: str = "", rest: str = "") -> list[str]:
    """One Markdown paragraph or list item, wrapped like the rest of the docs."""
    return textwrap.wrap(
        text, width=100, initial_indent=first, subsequent_indent=rest, break_on_hyphens=False
    )


def method(settings: Mapping[str, Any]) -> list[str]:
    none, direct, wrapped, timeline = CONFIGS
    calls, batch, runs = f"{settings['calls']:,}", f"{settings['batch']:,}", settings["runs"]
    return [
        *wrap(
            "An application records `vkCmdDraw` and `vkCmdDispatch` millions of times per"
            " second, so the layer must not make them measurably slower when no feature of"
            " vkscope needs them. `bench/record_cost.py` times one such call through these layer"
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
            " layer's own pointer.",
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
            f" not measured. Each thread records {calls} calls into its own command"
            f" pool, in command buffers of {batch} calls (inside a render pass for"
            " draws), after warm-up batches; the threads start together on a latch and record"
            " concurrently. Only the calls are timed (`std::chrono::steady_clock` around each"
            " batch's loop; begin, bind, end and reset are the driver's and the same for every"
            f" stack), and nothing is submitted. Every point is the median of {runs}"
            " separate processes, run round-robin over the points, in nanoseconds per call and"
            " per thread."
        ),
    ]


def render(results: Mapping[str, Any] | None) -> str:
    lines = [
        "# What vkscope adds to command recording",
        "",
        banner("record_cost.py"),
        "",
        *method(results["settings"] if results else DEFAULTS),
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
        *wrap(
            f"Timeline on: at most {TIMELINE_DRAW_TARGET_NS:g} ns added per vkCmdDraw.", "- ", "  "
        ),
        "",
        "## Results",
        "",
    ]
    if results is None:
        lines += [*not_run(NAME, ".venv/bin/python bench/record_cost.py --build-dir build/dev")]
    else:
        grid = Grid.of(results["results"])
        lines += [
            *provenance(results, NAME),
            "",
            "Nanoseconds per call, median of the runs; *added* is the difference to the stack"
            " without vkscope.",
            "",
            *results_table(grid),
            "",
            "Two threads against one, nanoseconds per call and thread (medians):",
            "",
            *thread_table(grid),
            "",
            *verdicts(grid),
            "",
            f"Every point over its {results['settings']['runs']} runs, nanoseconds per call:",
            "",
            *spread_table(grid),
        ]
    lines += [
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
            " interleaves the runs so that a drifting machine affects every stack alike. Every"
            " run, per-thread times and the machine description go to"
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


def measure(
    paths: Paths, configs: Sequence[Config], runs: int, calls: int, batch: int
) -> tuple[list[Point], HarnessLine]:
    """Every (stack, command, threads) point `runs` times, round-robin over the points so that
    slow drift of the machine spreads over all of them."""
    points = [Point(cfg, cmd, t) for cfg in configs for cmd in COMMANDS for t in THREADS]
    last: HarnessLine | None = None
    for run in range(runs):
        for point in points:
            line = run_once(paths, point.config, point.command, point.threads, calls, batch)
            point.samples.append(line.ns_per_call)
            point.by_thread.append(line.ns_per_call_by_thread)
            last = line
            print(
                f"run {run + 1}/{runs} {point.config.key:8} {point.command:8} "
                f"threads={point.threads}: {line.ns_per_call:.3f} ns/call",
                file=sys.stderr,
            )
    assert last is not None
    return points, last


def entries(points: Sequence[Point]) -> list[dict[str, Any]]:
    """The results file's record of every point, every run included."""
    return [
        {
            "config": p.config.key,
            "layers": list(p.config.layers),
            "env": dict(p.config.env),
            "command": api(p.command),
            "threads": p.threads,
            "median_ns_per_call": p.median,
            "samples_ns_per_call": p.samples,
            "samples_ns_per_call_by_thread": p.by_thread,
        }
        for p in points
    ]


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--build-dir", type=Path, default=REPO / "build" / "dev")
    parser.add_argument("--runs", type=int, default=DEFAULTS["runs"], help="processes per point")
    parser.add_argument("--calls", type=int, default=DEFAULTS["calls"], help="calls per thread")
    parser.add_argument("--batch", type=int, default=DEFAULTS["batch"], help="calls per buffer")
    parser.add_argument("--results", type=Path, default=results_path(NAME))
    parser.add_argument("--docs", type=Path, default=DOC)
    args = parser.parse_args(argv)
    if args.runs < 1 or args.calls < 1 or args.batch < 1:
        parser.error("--runs, --calls and --batch must be positive")

    paths = Paths.from_build_dir(args.build_dir.resolve())
    settings = {"runs": args.runs, "calls": args.calls, "batch": args.batch, "LP_NUM_THREADS": "0"}
    results = new(NAME, settings, vulkan=True)
    points, last = measure(paths, CONFIGS, args.runs, args.calls, args.batch)
    results["harness_device"] = {
        "device": last.device,
        "driver": last.driver,
        "driver_info": last.driver_info,
    }
    results["results"] = entries(points)
    publish(results, render, args.results, args.docs, echo=False)
    grid = Grid.of(results["results"])
    print("\n".join([*results_table(grid), "", *thread_table(grid), "", *verdicts(grid)]))
    print(f"\nwrote {args.results} and {args.docs}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
