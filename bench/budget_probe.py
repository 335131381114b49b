#!/usr/bin/env python3
"""What a frame that measures anything costs beside its workloads, in one process: the
game-scale frame under a budget small enough that the controller measures one workload in a
share of the frames and none in the others (docs/budget.md), its frames grouped by what they
and the frame before them measured, from the controller's own records.

A diagnostic, not a benchmark: it writes nothing. The `budget` check compares separate
processes, whose frame times differ by a few percent from run to run; here frames that measure
one workload and frames that measure none alternate in one run, so the difference between their
medians is what measuring costs a frame (its cost per frame and one workload's), free of that
spread. On a GPU where `--timing queue --budget 5%` starved at one or two workloads a frame,
that difference is the cost per frame the controller saw.

  .venv/bin/python bench/budget_probe.py [--budget 2%] [--frames 600] [-- extra vkscope options]
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
from collections.abc import Sequence
from itertools import pairwise
from pathlib import Path

from bench.frame_cost import Tools
from bench.workload_cost import frame_end
from harness.env import base_env
from vkscope.capture import open_capture


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--budget", default="2%", help="small enough to measure one at most")
    parser.add_argument("--frames", type=int, default=600)
    parser.add_argument("--workloads", type=int, default=200)
    parser.add_argument("--skip", type=int, default=120, help="frames before those grouped")
    parser.add_argument("extra", nargs="*", help="more `vkscope run` options (after --)")
    args = parser.parse_args(argv)
    tools = Tools.installed()
    _, frame_submits = frame_end(tools)
    with tempfile.TemporaryDirectory(prefix="vkscope-budget-probe-") as tmp:
        cap = Path(tmp) / "probe.vkscope"
        cmd = [*tools.vkscope, "run", "--no-report", "--no-trace", "--no-html", "-o", str(cap)]
        cmd += ["--timing", "queue", "--budget", args.budget, *args.extra]
        cmd += [f"-s{k}={v}" for k, v in frame_submits.items()]
        cmd += ["--", str(tools.workload), "--scenario", "game_scale", "--quiet"]
        cmd += ["--workloads", str(args.workloads), "--frames", str(args.frames)]
        res = subprocess.run(cmd, env=base_env(), capture_output=True, text=True, timeout=900)
        if res.returncode != 0:
            print((res.stdout + res.stderr)[-2000:], file=sys.stderr)
            return 1
        with open_capture(cap) as c:
            records = sorted(c.budget_frames(), key=lambda f: f.number)
    groups: dict[tuple[str, int, int], list[float]] = {}
    for before, frame in pairwise(records):
        if frame.number < args.skip or not frame.interval_ns or frame.number != before.number + 1:
            continue
        key = (frame.state, before.measured, frame.measured)
        groups.setdefault(key, []).append(frame.interval_ns / 1e3)
    for (state, before_count, count), times in sorted(groups.items()):
        print(
            f"{state:9} after a frame measuring {before_count}, measuring {count}: "
            f"{len(times)} frames, median {statistics.median(times):.1f} µs"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
