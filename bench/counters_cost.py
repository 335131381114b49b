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

from bench.record_configs import BASELINE, COUNTING_LAYER, TIMELINE, VKSCOPE_LAYER, Config  # noqa: E402
from bench.record_cost import Paths  # noqa: E402
from bench.resultfile import (  # noqa: E402
    DOCS_DIR,
    added_table,
    banner,
    new,
    not_run,
    provenance,
    publish,
    results_path,
    spread,
)
from bench.workload_runs import (  # noqa: E402
    FrameConfig,
    instances_per_frame,
    measure_frames,
    measure_recording,
)

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
    BASELINE,
    TIMELINE,
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


def frame_lines(program: str, samples: Mapping[str, list[float]], per_instance: float) -> list[str]:
    lines = [
        f"`vkscope-workload {' '.join(PROGRAMS[program])}`: {per_instance:.0f} workload instances "
        "a frame. *Added* compares each run with the run without the layer of the same round.",
        "",
        *added_table(
            [(c.key, c.title) for c in FRAME_CONFIGS],
            samples,
            "none",
            per_instance,
            "workload instance",
        ),
    ]
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
            "instances_per_frame": instances_per_frame(
                program, args.build_dir, flags, FRAME_CONFIGS[1]
            ),
            "samples_ms": measure_frames(
                program,
                args.build_dir,
                flags,
                FRAME_CONFIGS,
                args.runs,
                args.short_frames * FRAME_SCALE.get(name, 1),
                args.long_frames * FRAME_SCALE.get(name, 1),
            ),
        }
        for name, flags in PROGRAMS.items()
    }
    paths = Paths.from_build_dir(args.build_dir)
    results["recording"] = measure_recording(
        paths, RECORD_CONFIGS, args.record_runs, args.calls, args.batch
    )
    publish(results, render, args.results, args.docs)
    return 0


if __name__ == "__main__":
    sys.exit(main())
