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
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import msgspec

from bench.record_configs import (
    COMMANDS,
    CONFIGS,
    DEFAULTS,
    DOC,
    NAME,
    THREADS,
    Config,
)
from bench.record_cost_page import Grid, api, render, results_table, thread_table, verdicts
from bench.resultfile import (
    new,
    publish,
    results_path,
)

REPO = Path(__file__).resolve().parent.parent


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
