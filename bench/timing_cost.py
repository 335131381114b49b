#!/usr/bin/env python3
"""Measure what the timing feature costs: GPU frame time, recording time, and idle time.

1. Frame time of `vkscope-workload --all` (every scenario, one frame each pass) with no layer,
   the timeline alone, and timing in each serialization mode (no host: the cost of what is
   injected into the GPU's work, not of sending it). A frame's time is the difference between
   runs of two frame counts divided by the frames in between, so process start-up and device
   creation cancel out; median over several processes. The added time per frame is also given per
   workload instance (timestamps, barriers, copies and the extra submissions of the layer).
2. Recording cost per call over the counting layer (bench/record_cost.py's harness): vkCmdDraw
   and vkCmdDispatch (a workload) with timing on in a captured frame.
3. Idle cost: the same with a frame selection that captures nothing (`frames = 1000000-`), against
   vkscope with every feature off.

Every run is kept: bench/results/timing_cost.json, and docs/bench/timing.md (`render`). The same
costs on a real GPU with several queues are part of the device checks (bench/device/checks.py,
docs/bench/device.md).

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

from bench.record_configs import (  # noqa: E402
    BASELINE,
    COUNTING_LAYER,
    IDLE_CONFIG,
    IDLE_TARGET_NS,
    TIMELINE,
    VKSCOPE_LAYER,
    Config,
)
from bench.record_cost import INSTRUCTION_CALLS, Paths, instructions_per_call  # noqa: E402
from bench.resultfile import (  # noqa: E402
    DOCS_DIR,
    added_table,
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
from bench.workload_runs import (  # noqa: E402
    FrameConfig,
    instances_per_frame,
    measure_frames,
    measure_recording,
)

NAME = "timing_cost"
DOC = DOCS_DIR / "timing.md"
COMMAND = ".venv/bin/python bench/timing_cost.py"
FRAME_TARGET_PERCENT = 10.0  # queue: under +10% frame time
EVERY_SCENARIO = ("--all",)

FRAME_CONFIGS = (
    FrameConfig("none", "no layer", {}, layer=False),
    FrameConfig("timeline", "timeline only", {"VK_VKSCOPE_TIMELINE": "true"}),
    FrameConfig("timing_none", "timing none", {"VK_VKSCOPE_TIMING": "none"}),
    FrameConfig("timing_queue", "timing queue", {"VK_VKSCOPE_TIMING": "queue"}),
    FrameConfig("timing_full", "timing full", {"VK_VKSCOPE_TIMING": "full"}),
)

RECORD_CONFIGS = (
    BASELINE,
    Config(
        "off",
        "vkscope, features off",
        "features off",
        (VKSCOPE_LAYER, COUNTING_LAYER),
        {"VK_VKSCOPE_PASSTHROUGH": "direct"},
    ),
    TIMELINE,
    Config(
        "timing",
        "vkscope, timing queue, captured frame",
        "timing (captured)",
        (VKSCOPE_LAYER, COUNTING_LAYER),
        {"VK_VKSCOPE_TIMING": "queue"},
    ),
    IDLE_CONFIG,
)


def measure_instructions(paths: Paths, batch: int) -> dict[str, dict[str, float]] | None:
    """Instructions per call by command and configuration; None without Valgrind."""
    out: dict[str, dict[str, float]] = {}
    for command in ("draw", "dispatch"):
        counts: dict[str, float] = {}
        for config in RECORD_CONFIGS:
            n = instructions_per_call(paths, config, command, batch)
            if n is None:
                return None
            counts[config.key] = n
        out[command] = counts
    return out


def percent(v: float) -> str:
    return f"{v:+.1f}%"


def frame_lines(results: Mapping[str, Any]) -> list[str]:
    frames = results["frames"]
    settings = results["settings"]
    runs = frames["samples_ms"]
    base = runs["none"]
    per_instance = frames["instances_per_frame"]
    lines = [
        f"One frame runs every scenario once: {per_instance:.0f} workload instances. Frame time is "
        f"the difference between {settings['short_frames']} and {settings['long_frames']} "
        f"frames, in {settings['runs']} processes each; no host (what is injected, not what is "
        "sent). *Added* compares each run with the run without the layer of the same round (the "
        "configurations are interleaved); the median of those, and their range.",
        "",
        *added_table(
            [(c.key, c.title) for c in FRAME_CONFIGS],
            runs,
            "none",
            per_instance,
            "workload instance",
        ),
    ]
    queue = [(a - b) / b * 100 for a, b in zip(runs["timing_queue"], base, strict=True)]
    lines += [
        "",
        f"Target: `timing queue` adds under {FRAME_TARGET_PERCENT:.0f}% to the frame time: "
        f"{met(median(queue) < FRAME_TARGET_PERCENT)} (median {percent(median(queue))}).",
    ]
    return lines


def recording_lines(results: Mapping[str, Any]) -> list[str]:
    record = results["recording"]
    lines = [
        "| command | " + " | ".join(c.column for c in RECORD_CONFIGS) + " |",
        "|---" * (len(RECORD_CONFIGS) + 1) + "|",
    ]
    for command, samples in record.items():
        cells = [spread(samples[c.key], lambda v: f"{v:.2f}") for c in RECORD_CONFIGS]
        lines.append(f"| vkCmd{command.capitalize()} | " + " | ".join(cells) + " |")
    idle = {
        cmd: [i - o for i, o in zip(v["idle"], v["off"], strict=True)] for cmd, v in record.items()
    }
    lines += [
        "",
        "Idle (timing on, `frames` capturing nothing) against vkscope with every feature off, "
        f"per run: target within {IDLE_TARGET_NS:.0f} ns per call, judged on the median: "
        + "; ".join(
            f"vkCmd{c.capitalize()} {spread(d, lambda v: f'{v:+.2f} ns')}, "
            f"{met(median(d) <= IDLE_TARGET_NS)}"
            for c, d in idle.items()
        )
        + ". A draw costs one lookup and an increment, as with the timeline. A dispatch is a "
        "workload: outside captured frames it is only logged (one entry appended to its command "
        "buffer's log: no tag, allocation or Vulkan call), so that a captured frame that submits "
        "the command buffer can still describe it and mark it untimed; that is the cost left.",
    ]
    return lines


def instruction_lines(results: Mapping[str, Any]) -> list[str]:
    counts = results.get("instructions")
    if not counts:
        return [
            "Not measured: Valgrind was not installed where the benchmark ran "
            "(`apt-get install -y valgrind`)."
        ]
    lines = [
        "Counted by Valgrind's callgrind (the difference between runs of "
        f"{INSTRUCTION_CALLS[0]:,} and {INSTRUCTION_CALLS[1]:,} calls). They do not depend on "
        "the machine's speed or load, so they show whether a change in nanoseconds between two "
        "runs of this page comes from the code or from the machine.",
        "",
        "| command | " + " | ".join(c.column for c in RECORD_CONFIGS) + " |",
        "|---" * (len(RECORD_CONFIGS) + 1) + "|",
    ]
    for command, by_config in counts.items():
        cells = [f"{by_config[c.key]:.0f}" for c in RECORD_CONFIGS]
        lines.append(f"| vkCmd{command.capitalize()} | " + " | ".join(cells) + " |")
    added = {cmd: v["idle"] - v["off"] for cmd, v in counts.items()}
    lines += [
        "",
        "Idle against features off: "
        + "; ".join(f"vkCmd{c.capitalize()} {d:+.0f} instructions" for c, d in added.items())
        + ".",
    ]
    return lines


def render(results: Mapping[str, Any] | None) -> str:
    lines = [
        "# What timing costs",
        "",
        banner("timing_cost.py"),
        "",
        "`bench/timing_cost.py` measures, on lavapipe (LP_NUM_THREADS=0): the frame time of "
        "`vkscope-workload --all` without the layer, with the timeline alone and with timing in "
        "each serialization mode; and the recording cost per call over the counting layer "
        "(bench/record_cost.py's harness, one thread) with timing in a captured frame and in a "
        "frame not captured. On a real GPU with several queues, the device checks measure "
        "accuracy and GPU-bound frame time (docs/bench/device.md).",
        "",
        "## Results",
        "",
    ]
    if results is None:
        return "\n".join(
            [
                *lines,
                *not_run(NAME, ".venv/bin/python bench/timing_cost.py --build-dir build/dev"),
                "",
            ]
        )
    settings = results["settings"]
    lines += [
        *provenance(results, NAME),
        "",
        "### GPU frame time of `vkscope-workload --all`",
        "",
        *frame_lines(results),
        "",
        "### Recording, ns per call over the counting layer (1 thread, "
        f"{settings['record_runs']} runs)",
        "",
        *recording_lines(results),
        "",
        "### Recording, instructions per call",
        "",
        *instruction_lines(results),
        "",
    ]
    return "\n".join(lines)


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
    paths = Paths.from_build_dir(args.build_dir)
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
        "instances_per_frame": instances_per_frame(
            program, args.build_dir, EVERY_SCENARIO, FRAME_CONFIGS[1]
        ),
        "samples_ms": measure_frames(
            program,
            args.build_dir,
            EVERY_SCENARIO,
            FRAME_CONFIGS,
            args.runs,
            args.short_frames,
            args.long_frames,
        ),
    }
    results["recording"] = measure_recording(
        paths, RECORD_CONFIGS, args.record_runs, args.calls, args.batch
    )
    results["instructions"] = measure_instructions(paths, args.batch)
    publish(results, render, args.results, args.docs)
    return 0


if __name__ == "__main__":
    sys.exit(main())
