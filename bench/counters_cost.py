#!/usr/bin/env python3
"""Measure what pipeline statistics cost (docs/counters.md): frame time, GPU cost per workload
instance, and recording time.

1. Frame time of `vkscope-workload --all` (every scenario, one frame each pass; many short
   submissions, each waited for), of its compute scenario alone (few, longer workloads) and of
   its small_frame scenario (about 1 ms frames of a few small workloads: a short-frame
   application) with no layer, the timeline alone, counters alone, timing `queue` alone and timing
   with counters
   (no host: the cost of what is injected into the GPU's work, not of sending it). A frame's time
   is the difference between runs of two frame counts over the frames in between, so process
   start-up cancels out; configurations interleaved, several processes each. The added time is
   also given per workload instance: the queries, their resets and result copies.
2. Recording cost per call over the counting layer (bench/record_cost.py's harness): vkCmdDraw
   and vkCmdDispatch (a workload: a query begun and ended around it) with counters on, and with
   timing and counters, in a captured frame.

Every run is kept: bench/results/counters_cost.json, and docs/bench/counters.md (`render`).
Build first:
  cmake -S . -B build/dev -G Ninja -DVKSCOPE_BUILD_WORKLOADS=ON && cmake --build build/dev
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "bench"))
sys.path.insert(0, str(REPO / "tests"))

from record_cost import COUNTING_LAYER, VKSCOPE_LAYER, Config, Paths, run_once  # noqa: E402
from resultfile import (  # noqa: E402
    DOCS_DIR,
    banner,
    new,
    not_run,
    provenance,
    results_path,
    spread,
    write,
    write_doc,
)
from support.timeline import Receiver  # noqa: E402
from timing_cost import FrameConfig, workload_env  # noqa: E402

NAME = "counters_cost"
DOC = DOCS_DIR / "counters.md"
COMMAND = ".venv/bin/python bench/counters_cost.py --build-dir build/dev"
STATISTICS = {"VK_VKSCOPE_COUNTERS": "pipeline_statistics"}

FRAME_CONFIGS = (
    FrameConfig("none", "no layer", {}, layer=False),
    FrameConfig("timeline", "timeline only", {"VK_VKSCOPE_TIMELINE": "true"}),
    FrameConfig("counters", "counters", STATISTICS),
    FrameConfig("timing", "timing queue", {"VK_VKSCOPE_TIMING": "queue"}),
    FrameConfig("both", "timing queue + counters", {"VK_VKSCOPE_TIMING": "queue", **STATISTICS}),
)
# The workload program's runs: every scenario, and the compute scenario's few long dispatches.
PROGRAMS = {
    "all": ("--all",),
    "compute": ("--scenario", "compute"),
    "small_frame": ("--scenario", "small_frame"),
}
# small_frame's frames last about 1 ms on lavapipe: it runs this many times the frames of the
# others, so that the long and short runs differ by more than the start-up's noise.
FRAME_SCALE = {"small_frame": 100}

RECORD_CONFIGS = (
    Config("none", "no vkscope", "no vkscope", (COUNTING_LAYER,)),
    Config(
        "timeline",
        "vkscope, timeline on",
        "timeline",
        (VKSCOPE_LAYER, COUNTING_LAYER),
        {"VK_VKSCOPE_TIMELINE": "true"},
    ),
    Config(
        "counters",
        "vkscope, counters, captured frame",
        "counters",
        (VKSCOPE_LAYER, COUNTING_LAYER),
        STATISTICS,
    ),
    Config(
        "both",
        "vkscope, timing queue + counters, captured frame",
        "timing + counters",
        (VKSCOPE_LAYER, COUNTING_LAYER),
        {"VK_VKSCOPE_TIMING": "queue", **STATISTICS},
    ),
)


def instances_per_frame(program: Path, build_dir: Path, args: Sequence[str]) -> float:
    """Workload instances one frame of the program submits (from a timeline capture)."""
    import subprocess

    receiver = Receiver()
    try:
        env = workload_env(build_dir, FRAME_CONFIGS[1])
        env["VK_VKSCOPE_HOST"] = receiver.address
        frames = 4
        cmd = [str(program), *args, "--frames", str(frames), "--quiet"]
        subprocess.run(cmd, env=env, capture_output=True, check=True, timeout=600)
        capture = receiver.finish()
    finally:
        receiver.close()
    return sum(1 for _ in capture.submitted()) / frames


def run_program(program: Path, args: Sequence[str], env: Mapping[str, str], frames: int) -> float:
    import subprocess
    import time

    start = time.perf_counter()
    proc = subprocess.run(
        [str(program), *args, "--frames", str(frames), "--quiet"],
        env=dict(env),
        capture_output=True,
        text=True,
        timeout=600,
    )
    elapsed = time.perf_counter() - start
    if proc.returncode != 0:
        raise SystemExit(f"vkscope-workload failed ({proc.returncode}):\n{proc.stderr}")
    return elapsed


def measure_frames(
    program: Path, build_dir: Path, args: Sequence[str], runs: int, short: int, long: int
) -> dict[str, list[float]]:
    """ms per frame, every run, by configuration (interleaved, so that a change in the
    machine's load hits every configuration alike)."""
    out: dict[str, list[float]] = {c.key: [] for c in FRAME_CONFIGS}
    for _ in range(runs):
        for c in FRAME_CONFIGS:
            env = workload_env(build_dir, c)
            t_short = run_program(program, args, env, short)
            t_long = run_program(program, args, env, long)
            out[c.key].append((t_long - t_short) / (long - short) * 1e3)
    return out


def measure_recording(
    paths: Paths, runs: int, calls: int, batch: int
) -> dict[str, dict[str, list[float]]]:
    out: dict[str, dict[str, list[float]]] = {}
    for command in ("draw", "dispatch"):
        samples: dict[str, list[float]] = {c.key: [] for c in RECORD_CONFIGS}
        for _ in range(runs):
            for config in RECORD_CONFIGS:
                line = run_once(paths, config, command, 1, calls, batch)
                samples[config.key].append(line.ns_per_call)
        out[command] = samples
    return out


def frame_lines(program: str, samples: Mapping[str, list[float]], per_instance: float) -> list[str]:
    base = samples["none"]
    lines = [
        f"`vkscope-workload {' '.join(PROGRAMS[program])}`: {per_instance:.0f} workload instances "
        "a frame. *Added* compares each run with the run without the layer of the same round.",
        "",
        "| configuration | ms per frame | added | added per workload instance |",
        "| --- | --- | --- | --- |",
    ]
    for c in FRAME_CONFIGS:
        ms = spread(samples[c.key], lambda v: f"{v:.2f}")
        if c.key == "none":
            lines.append(f"| {c.title} | {ms} | | |")
            continue
        added = [(a - b) / b * 100 for a, b in zip(samples[c.key], base, strict=True)]
        us = [(a - b) * 1e3 / per_instance for a, b in zip(samples[c.key], base, strict=True)]
        lines.append(
            f"| {c.title} | {ms} | {spread(added, lambda v: f'{v:+.1f}%')} "
            f"| {spread(us, lambda v: f'{v:+.1f} µs')} |"
        )
    return lines


def render(results: Mapping[str, Any] | None) -> str:
    lines = [
        "# What counters cost",
        "",
        banner("counters_cost.py"),
        "",
        "`bench/counters_cost.py` measures, on lavapipe (LP_NUM_THREADS=0), the frame time of the "
        "workload program without the layer, with the timeline alone, with pipeline statistics, "
        "with timing `queue` and with both; and the recording cost per call over the counting "
        "layer (bench/record_cost.py's harness, one thread). docs/counters.md says what is "
        "injected.",
        "",
        "## Results",
        "",
    ]
    if results is None:
        return "\n".join([*lines, *not_run(NAME, COMMAND), ""])
    settings = results["settings"]
    lines += [*provenance(results, NAME), ""]
    for program, part in results["frames"].items():
        lines += [
            f"### Frame time: {program}",
            "",
            *frame_lines(program, part["samples_ms"], part["instances_per_frame"]),
            "",
        ]
    lines += [
        f"### Recording, ns per call over the counting layer ({settings['record_runs']} runs)",
        "",
        "| command | " + " | ".join(c.column for c in RECORD_CONFIGS) + " |",
        "|---" * (len(RECORD_CONFIGS) + 1) + "|",
    ]
    for command, samples in results["recording"].items():
        cells = [spread(samples[c.key], lambda v: f"{v:.2f}") for c in RECORD_CONFIGS]
        lines.append(f"| vkCmd{command.capitalize()} | " + " | ".join(cells) + " |")
    return "\n".join([*lines, ""])


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--build-dir", type=Path, default=REPO / "build" / "dev")
    parser.add_argument("--runs", type=int, default=5, help="processes per frame-time point")
    parser.add_argument("--short-frames", type=int, default=2)
    parser.add_argument("--long-frames", type=int, default=12)
    parser.add_argument("--record-runs", type=int, default=5)
    parser.add_argument("--calls", type=int, default=1_000_000)
    parser.add_argument("--batch", type=int, default=10_000)
    parser.add_argument("--results", type=Path, default=results_path(NAME))
    parser.add_argument("--docs", type=Path, default=DOC)
    args = parser.parse_args(argv)
    if min(args.runs, args.record_runs, args.calls, args.batch) < 1:
        parser.error("--runs, --record-runs, --calls and --batch must be positive")
    if args.long_frames <= args.short_frames:
        parser.error("--long-frames must be more than --short-frames")
    program = args.build_dir / "workloads" / "vkscope-workload"
    if not program.exists():
        raise SystemExit(f"missing {program}: build with -DVKSCOPE_BUILD_WORKLOADS=ON")
    settings = {
        "runs": args.runs,
        "short_frames": args.short_frames,
        "long_frames": args.long_frames,
        "record_runs": args.record_runs,
        "calls": args.calls,
        "batch": args.batch,
        "LP_NUM_THREADS": "0",
    }
    results = new(NAME, settings, vulkan=True)
    results["frames"] = {
        name: {
            "instances_per_frame": instances_per_frame(program, args.build_dir, flags),
            "samples_ms": measure_frames(
                program,
                args.build_dir,
                flags,
                args.runs,
                args.short_frames * FRAME_SCALE.get(name, 1),
                args.long_frames * FRAME_SCALE.get(name, 1),
            ),
        }
        for name, flags in PROGRAMS.items()
    }
    paths = Paths.from_build_dir(args.build_dir)
    results["recording"] = measure_recording(paths, args.record_runs, args.calls, args.batch)
    write(results, args.results)
    text = render(results)
    write_doc(text, args.docs)
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
