#!/usr/bin/env python3
"""A GPU's frame times as the budget controller sees them when nothing is measured: the
game-scale frame under `--budget 0%` (every frame a baseline frame), run after run, each frame's
interval and the application's recording time from the controller's own records.

A diagnostic for the controller's design (docs/budget.md): the controller is pure, so what it
would plan on a GPU can be replayed off the GPU by adding a modelled cost of measuring to these
times (tests/cpp/timeline_budget_replay_test.cpp, given the file). Its output is kept where
bench/device/run.sh --bench collects a benchmark's: not a committed result.

  .venv/bin/python bench/budget_noise.py [--runs 20] [--frames 1200] [--results J] [--docs M]
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from bench.budget_probe import budget_frames
from bench.frame_cost import Tools
from bench.workload_cost import frame_end


def record(
    tools: Tools, frame_submits: Mapping[str, str], frames: int, workloads: int
) -> dict[str, Any]:
    """One run: every captured frame's interval and recording time, in µs (0: not known)."""
    with tempfile.TemporaryDirectory(prefix="vkscope-budget-noise-") as tmp:
        options = ["--timing", "queue", "--budget", "0%"]
        records = budget_frames(tools, frame_submits, options, workloads, frames, Path(tmp))
    return {
        "interval_us": [round((r.interval_ns or 0) / 1e3, 1) for r in records],
        "recording_us": [round((r.recording_ns or 0) / 1e3, 1) for r in records],
    }


def line(run: Mapping[str, Sequence[float]]) -> str:
    times = [t for t in run["interval_us"] if t > 0]
    q1, median, q3 = statistics.quantiles(times, n=4)
    return f"{len(times)} frames, median {median:.1f} µs, interquartile range {q3 - q1:.1f} µs"


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument("--frames", type=int, default=1200)
    parser.add_argument("--workloads", type=int, default=200)
    parser.add_argument("--results", type=Path, help="write the runs here, as JSON")
    parser.add_argument("--docs", type=Path, help="also write a line a run here, as Markdown")
    args = parser.parse_args(argv)
    tools = Tools.installed()
    _, frame_submits = frame_end(tools)
    runs = []
    for _ in range(args.runs):
        runs.append(record(tools, frame_submits, args.frames, args.workloads))
        print(line(runs[-1]), flush=True)
    if args.results:
        args.results.write_text(json.dumps({"workloads": args.workloads, "runs": runs}))
    if args.docs:
        args.docs.write_text("".join(f"- {line(r)}\n" for r in runs))
    return 0


if __name__ == "__main__":
    sys.exit(main())
