#!/usr/bin/env python3
"""Measure what CPU-sampled counters cost (docs/counters.md): the time each handover adds and the
GPU's idle time at one, and the frame time with the handover against timing alone.

1. Frame time of the workload program's compute scenario (a few long dispatches) and its
   small_frame scenario (about 1 ms frames of six small workloads) with timing `queue` alone,
   timing with the `cpu_time` sampler through the handover, and timing with it per command
   buffer. A frame's time is the difference between runs of two frame counts over the frames in
   between (process start-up cancels out); configurations interleaved, several processes each.
   The added time is also given per handover (a frame has one before each workload and one at
   the end of each command buffer).
2. The GPU's idle time per handover: in a timed capture, the median gap between consecutive
   workloads of a command buffer (the previous one's end timestamp to the next one's begin) with
   the handover, less the same gap with timing alone.

Run here (lavapipe, LP_NUM_THREADS=0) with the installed package; on a GPU machine through
bench/device/checks.py (`bash bench/device/run.sh --bring-up handover`), which calls measure().
Every run is kept: bench/results/samplers_cost.json and docs/bench/samplers.md (`render`). State
the machine's load with any numbers committed (machine.py records the load average).
"""

from __future__ import annotations

import argparse
import itertools
import os
import statistics
import subprocess
import sys
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent

from bench.resultfile import (  # noqa: E402
    DOCS_DIR,
    added_table,
    banner,
    new,
    not_run,
    provenance,
    publish,
    results_path,
)
from harness.timeline import Receiver  # noqa: E402

NAME = "samplers_cost"
DOC = DOCS_DIR / "samplers.md"
COMMAND = ".venv/bin/python bench/samplers_cost.py"
LAYER = "VK_LAYER_VKSCOPE_profiler"


@dataclass(frozen=True)
class Setup:
    key: str
    title: str
    settings: Mapping[str, str]


TIMING = {"timing": "queue"}
SETUPS = (
    Setup("timing", "timing queue", TIMING),
    Setup("handover", "timing queue + cpu_time, handover",
          {**TIMING, "counters": "sampler:cpu_time", "counter_sampling": "handover"}),
    Setup("per_command_buffer", "timing queue + cpu_time, per command buffer",
          {**TIMING, "counters": "sampler:cpu_time", "counter_sampling": "per_command_buffer"}),
)  # fmt: skip
PROGRAMS = {"compute": ("--scenario", "compute"), "small_frame": ("--scenario", "small_frame")}
# small_frame's frames are short: more of them, so that two frame counts differ by more than the
# start-up's noise.
FRAME_SCALE = {"small_frame": 50}


def environment(layer_dir: Path, settings: Mapping[str, str], host: str = "") -> dict[str, str]:
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith("VK_VKSCOPE_") and k not in ("VK_INSTANCE_LAYERS", "VK_ADD_LAYER_PATH")
    }
    env["LP_NUM_THREADS"] = "0"
    env["VK_ADD_LAYER_PATH"] = str(layer_dir)
    env["VK_INSTANCE_LAYERS"] = LAYER
    for name, value in {**settings, **({"host": host} if host else {})}.items():
        env["VK_VKSCOPE_" + name.upper()] = value
    return env


def wall_s(workload: Path, args: Sequence[str], env: Mapping[str, str]) -> float:
    start = time.perf_counter()
    res = subprocess.run(
        [str(workload), *args, "--quiet"], env=dict(env), capture_output=True, text=True,
        timeout=600,
    )  # fmt: skip
    seconds = time.perf_counter() - start
    if res.returncode != 0:
        raise SystemExit(
            f"vkscope-workload {' '.join(args)} exited {res.returncode}:\n{res.stderr}"
        )
    return seconds


def captured(
    layer_dir: Path, workload: Path, args: Sequence[str], settings: Mapping[str, str]
) -> list[tuple[int, int, int]]:
    """(submitID, GPU begin, GPU end) of every timed instance of a run, in submission order."""
    receiver = Receiver()
    try:
        env = environment(layer_dir, settings, receiver.address)
        subprocess.run([str(workload), *args, "--quiet"], env=env, capture_output=True,
                       check=True, timeout=600)  # fmt: skip
        capture = receiver.finish()
    finally:
        receiver.close()
    return [
        (s.sequence or 0, int(w["gpu_begin_ns"]), int(w["gpu_end_ns"]))
        for s, _, w, _ in capture.submitted()
        if w.get("timing") == "ok"
    ]


def gaps_us(timed: list[tuple[int, int, int]]) -> list[float]:
    """Gaps between consecutive timed workloads of one command buffer, in microseconds."""
    return [
        (b[1] - a[2]) / 1e3 for a, b in itertools.pairwise(timed) if a[0] == b[0] and b[1] >= a[2]
    ]


def measure(
    layer_dir: Path,
    workload: Path,
    runs: int,
    short: int,
    long: int,
    progress: Callable[[str], None] = lambda _: None,
) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for program, flags in PROGRAMS.items():
        scale = FRAME_SCALE.get(program, 1)
        frames = (short * scale, long * scale)
        timed = captured(layer_dir, workload, [*flags, "--frames", "4"], SETUPS[0].settings)
        handed = captured(layer_dir, workload, [*flags, "--frames", "4"], SETUPS[1].settings)
        submits = len({t[0] for t in timed})
        samples: dict[str, list[float]] = {s.key: [] for s in SETUPS}
        for _ in range(runs):
            for s in SETUPS:
                env = environment(layer_dir, s.settings)
                t_short = wall_s(workload, [*flags, "--frames", str(frames[0])], env)
                t_long = wall_s(workload, [*flags, "--frames", str(frames[1])], env)
                samples[s.key].append((t_long - t_short) / (frames[1] - frames[0]) * 1e3)
        gaps = {"timing": gaps_us(timed), "handover": gaps_us(handed)}
        out[program] = {
            "frames": list(frames),
            "instances_per_frame": len(timed) / 4,
            "handovers_per_frame": (len(timed) + submits) / 4,
            "samples_ms": samples,
            "median_gap_us": {k: statistics.median(v) if v else None for k, v in gaps.items()},
        }
        progress(f"{program}: {out[program]['median_gap_us']}")
    return out


def program_lines(program: str, part: Mapping[str, Any]) -> list[str]:
    per = part["handovers_per_frame"]
    samples = part["samples_ms"]
    lines = [
        f"`vkscope-workload {' '.join(PROGRAMS[program])}`: {part['instances_per_frame']:.0f} "
        f"workload instances and {per:.0f} handovers a frame. *Added* compares each run with the "
        "timing-only run of the same round.",
        "",
        *added_table([(s.key, s.title) for s in SETUPS], samples, "timing", per, "handover"),
    ]
    gap = part["median_gap_us"]
    if gap["timing"] is not None and gap["handover"] is not None:
        lines += [
            "",
            f"GPU idle per handover: median gap between consecutive workloads of a command "
            f"buffer {gap['handover']:.1f} µs with the handover, {gap['timing']:.1f} µs with "
            f"timing alone: {gap['handover'] - gap['timing']:+.1f} µs.",
        ]
    return lines


def render(results: Mapping[str, Any] | None) -> str:
    lines = [
        "# What CPU-sampled counters cost",
        "",
        banner("samplers_cost.py"),
        "",
        "`bench/samplers_cost.py` measures the frame time of the workload program with timing "
        "`queue` alone, with the `cpu_time` sampler through the event handover, and with it per "
        "command buffer, and the GPU's idle time at each handover (docs/counters.md says what is "
        "injected).",
        "",
        "## Results",
        "",
    ]
    if results is None:
        return "\n".join([*lines, *not_run(NAME, COMMAND), ""])
    lines += [*provenance(results, NAME), ""]
    for program, part in results["programs"].items():
        lines += [f"### {program}", "", *program_lines(program, part), ""]
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--runs", type=int, default=5, help="processes per frame-time point")
    parser.add_argument("--short-frames", type=int, default=2)
    parser.add_argument("--long-frames", type=int, default=12)
    parser.add_argument("--results", type=Path, default=results_path(NAME))
    parser.add_argument("--docs", type=Path, default=DOC)
    args = parser.parse_args(argv)
    if args.runs < 1 or args.long_frames <= args.short_frames:
        parser.error("--runs must be positive and --long-frames more than --short-frames")
    from vkscope import paths

    settings = {
        "runs": args.runs,
        "short_frames": args.short_frames,
        "long_frames": args.long_frames,
        "LP_NUM_THREADS": "0",
    }
    results = new(NAME, settings, vulkan=True)
    results["programs"] = measure(
        paths.layer_dir(), paths.workload_program(), args.runs, args.short_frames,
        args.long_frames, progress=print,
    )  # fmt: skip
    publish(results, render, args.results, args.docs)
    return 0


if __name__ == "__main__":
    sys.exit(main())
