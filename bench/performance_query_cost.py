#!/usr/bin/env python3
"""Measure what VK_KHR_performance_query counters cost (docs/counters.md), on the test fixture
that implements the extension from lavapipe's own queries (no driver here has it).

1. Frame time of `vkscope-workload --scenario compute` (few, longer dispatches) and of
   `--scenario small_frame` (about 1 ms frames of small workloads) over the fixture: vkscope with
   the timeline only, and vkscope collecting one khr counter. The difference per workload
   instance is what the counters add: vkscope's query around each workload, the host reset of
   its pool before each submission and the read of the previous run's values there, the read on
   the readback thread, and the fixture's own queries behind each performance query (a real
   driver's cost differs; this is the layer's share plus a pipeline statistics query and two
   timestamps). A frame's time is the difference between runs of two frame counts over the frames
   in between, so process start-up cancels out; configurations interleaved.
2. Frames per complete set for selections of 1 to 5 counters (the fixture needs a pass per
   counter): captured from the compute scenario, the cycle the layer used (the most
   `counters_pass` + 1) and whether the host's join gave every dispatch of the first cycle every
   counter.

Every run is kept: bench/results/performance_query_cost.json, and
docs/bench/performance-query.md (`render`).
Uses the installed package (scripts/setup.sh) unless --layer-dir and --workload say otherwise.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent

from bench.resultfile import (  # noqa: E402
    DOCS_DIR,
    banner,
    new,
    not_run,
    provenance,
    publish,
    results_path,
    spread,
)

NAME = "performance_query_cost"
DOC = DOCS_DIR / "performance-query.md"
COMMAND = ".venv/bin/python bench/performance_query_cost.py"
VKSCOPE = "VK_LAYER_VKSCOPE_profiler"
FIXTURE = "VK_LAYER_VKSCOPE_test_performance_query"
COUNTERS = ("compute_invocations", "elapsed_ns", "ia_vertices", "ia_primitives",
            "fragment_invocations")  # fmt: skip
CONFIGS = {
    "timeline": ("vkscope, timeline only", {"VK_VKSCOPE_TIMELINE": "true"}),
    "khr": ("vkscope, khr:compute_invocations", {"VK_VKSCOPE_COUNTERS": "khr:compute_invocations"}),
}
PROGRAMS = {"compute": ("--scenario", "compute"), "small_frame": ("--scenario", "small_frame")}
FRAME_SCALE = {"small_frame": 50}


def env_for(layer_dir: Path, settings: Mapping[str, str]) -> dict[str, str]:
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith("VK_VKSCOPE_") and k not in ("VK_INSTANCE_LAYERS", "VK_ADD_LAYER_PATH")
    }
    env["LP_NUM_THREADS"] = "0"
    env["VK_ADD_LAYER_PATH"] = f"{layer_dir}:{layer_dir / 'testing'}"
    env["VK_INSTANCE_LAYERS"] = f"{VKSCOPE}:{FIXTURE}"
    env.update(settings)
    return env


def run_program(program: Path, args: Sequence[str], env: Mapping[str, str], frames: int) -> float:
    start = time.perf_counter()
    proc = subprocess.run(
        [str(program), *args, "--frames", str(frames), "--quiet"],
        env=dict(env), capture_output=True, text=True, timeout=600,
    )  # fmt: skip
    elapsed = time.perf_counter() - start
    if proc.returncode != 0:
        raise SystemExit(f"vkscope-workload failed ({proc.returncode}):\n{proc.stderr}")
    return elapsed


def capture(
    program: Path, layer_dir: Path, args: Sequence[str], settings: Mapping[str, str]
) -> Any:
    from harness.timeline import Receiver

    receiver = Receiver()
    try:
        env = env_for(layer_dir, {**settings, "VK_VKSCOPE_HOST": receiver.address})
        subprocess.run([str(program), *args, "--quiet"], env=env, capture_output=True,
                       check=True, timeout=600)  # fmt: skip
        return receiver.finish()
    finally:
        receiver.close()


def measure_frames(
    program: Path, layer_dir: Path, args: Sequence[str], runs: int, short: int, long: int
) -> dict[str, list[float]]:
    out: dict[str, list[float]] = {key: [] for key in CONFIGS}
    for _ in range(runs):
        for key, (_, settings) in CONFIGS.items():
            env = env_for(layer_dir, settings)
            t_short = run_program(program, args, env, short)
            t_long = run_program(program, args, env, long)
            out[key].append((t_long - t_short) / (long - short) * 1e3)
    return out


def measure_passes(program: Path, layer_dir: Path) -> list[dict[str, Any]]:
    from harness.timing import instances

    out = []
    for k in range(1, len(COUNTERS) + 1):
        chosen = COUNTERS[:k]
        settings = {
            "VK_VKSCOPE_COUNTERS": ",".join(f"khr:{c}" for c in chosen),
            "VK_VKSCOPE_FRAME_SUBMITS": "1",
        }
        cap = capture(
            program, layer_dir, ("--scenario", "compute", "--frames", str(2 * k)), settings
        )
        items = [t for t in instances(cap) if t.fields["type"] == "dispatch"]
        passes = {t.fields.get("counters_pass") for t in items} - {None}
        cycle = max(passes) + 1 if passes else 0
        first: dict[int, dict[str, Any]] = {}
        for t in items:
            frame = int(t.submit.payload["frame"])
            if frame < cycle and isinstance(t.fields.get("counters"), dict):
                first.setdefault(frame, {}).update(t.fields["counters"])
        complete = set().union(*first.values()) == set(chosen) if first else False
        out.append({"counters": k, "frames_per_set": cycle, "complete": complete})
    return out


def render(results: Mapping[str, Any] | None) -> str:
    lines = [
        "# What khr counters cost",
        "",
        banner("performance_query_cost.py"),
        "",
        "`bench/performance_query_cost.py` measures, on lavapipe (LP_NUM_THREADS=0) with the test "
        "fixture "
        "`VK_LAYER_VKSCOPE_test_performance_query` below vkscope, the frame time of the workload "
        "program with vkscope's timeline alone and with one khr counter, and the frames a "
        "complete set of 1 to 5 counters takes (docs/counters.md).",
        "",
        "## Results",
        "",
    ]
    if results is None:
        return "\n".join([*lines, *not_run(NAME, COMMAND), ""])
    lines += [*provenance(results, NAME), ""]
    for program, part in results["frames"].items():
        samples = part["samples_ms"]
        per = part["instances_per_frame"]
        lines += [
            f"### Frame time: {program} ({per:.0f} workload instances a frame)",
            "",
            "| configuration | ms per frame | added per workload instance |",
            "| --- | --- | --- |",
        ]
        base = samples["timeline"]
        for key, (title, _) in CONFIGS.items():
            ms = spread(samples[key], lambda v: f"{v:.2f}")
            if key == "timeline":
                lines.append(f"| {title} | {ms} | |")
                continue
            us = [(a - b) * 1e3 / per for a, b in zip(samples[key], base, strict=True)]
            lines.append(f"| {title} | {ms} | {spread(us, lambda v: f'{v:+.1f} µs')} |")
        lines.append("")
    lines += [
        "### Frames per complete set",
        "",
        "| counters | frames per complete set | first cycle complete |",
        "| --- | --- | --- |",
    ]
    for row in results["passes"]:
        lines.append(f"| {row['counters']} | {row['frames_per_set']} | {row['complete']} |")
    return "\n".join([*lines, ""])


def main(argv: Sequence[str] | None = None) -> int:
    from vkscope import paths

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--layer-dir", type=Path, default=None)
    parser.add_argument("--workload", type=Path, default=None)
    parser.add_argument("--runs", type=int, default=5, help="processes per frame-time point")
    parser.add_argument("--short-frames", type=int, default=2)
    parser.add_argument("--long-frames", type=int, default=10)
    parser.add_argument("--results", type=Path, default=results_path(NAME))
    parser.add_argument("--docs", type=Path, default=DOC)
    args = parser.parse_args(argv)
    if args.runs < 1 or args.long_frames <= args.short_frames:
        parser.error("--runs must be positive and --long-frames more than --short-frames")
    layer_dir = args.layer_dir or paths.layer_dir()
    program = args.workload or paths.workload_program()
    settings = {
        "runs": args.runs,
        "short_frames": args.short_frames,
        "long_frames": args.long_frames,
        "LP_NUM_THREADS": "0",
    }
    from harness.timing import instances

    results = new(NAME, settings, vulkan=True)
    results["frames"] = {}
    for name, flags in PROGRAMS.items():
        cap = capture(program, layer_dir, (*flags, "--frames", "4"), CONFIGS["timeline"][1])
        per = sum(1 for _ in instances(cap)) / 4
        scale = FRAME_SCALE.get(name, 1)
        results["frames"][name] = {
            "instances_per_frame": per,
            "samples_ms": measure_frames(
                program, layer_dir, flags, args.runs, args.short_frames * scale,
                args.long_frames * scale,
            ),
        }  # fmt: skip
    results["passes"] = measure_passes(program, layer_dir)
    publish(results, render, args.results, args.docs)
    return 0


if __name__ == "__main__":
    sys.exit(main())
