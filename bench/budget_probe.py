#!/usr/bin/env python3
"""What a frame that measures anything costs beside its workloads, in one process: the
game-scale frame under a budget small enough that the controller measures one workload in a
share of the frames and none in the others (docs/budget.md), its frames grouped by what they
and the frame before them measured, from the controller's own records.

A diagnostic that prints; the `budget` device check keeps one run's groups as `probe`. The
`budget` check compares separate processes, whose frame times differ by a few percent from run
to run; here frames that measure one workload and frames that measure none alternate in one
run, so the difference between their medians is what measuring costs a frame (its cost per
frame and one workload's), free of that spread. On a GPU where `--timing queue --budget 5%`
starved at one or two workloads a frame, that difference is the cost per frame the controller
saw.

  .venv/bin/python bench/budget_probe.py [--budget 2%] [--frames 600] [--results J] [--docs M]
      [-- extra vkscope options]
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
from collections.abc import Mapping, Sequence
from itertools import pairwise
from pathlib import Path
from typing import Any

from bench import frame_phases
from bench.frame_cost import Tools
from bench.workload_cost import frame_end
from harness.env import base_env
from vkscope.capture import open_capture
from vkscope.capture.read.records import BudgetFrame


def probe(
    tools: Tools,
    frame_submits: Mapping[str, str],
    budget: str,
    frames: int,
    workloads: int,
    skip: int,
    extra: Sequence[str] = (),
    timing: str = "queue",
) -> list[dict[str, Any]]:
    """One run under `budget`: from frame `skip` on, the frames grouped by their state and what
    they and the frame before them measured, each group's frames and median time (µs), and the
    median of each phase of the frame as the program timed it: its recording, its vkQueueSubmit
    call, its fence wait (which falls in the next frame's interval), and `other`, the rest of the
    interval the layer saw (the program checking the frame before, the layer's frame end), and the
    recording split as the layer timed it: the application's own calls, and the rest."""
    with tempfile.TemporaryDirectory(prefix="vkscope-budget-probe-") as tmp:
        log = Path(tmp) / "frames.txt"
        options = ["--timing", timing, "--budget", budget, *extra]
        records = budget_frames(tools, frame_submits, options, workloads, frames, Path(tmp), log)
        phases = frame_phases.read_frame_log(log)
    groups: dict[tuple[str, int, int], list[dict[str, float]]] = {}
    for before, frame in pairwise(records):
        if frame.number < skip or not frame.interval_ns or frame.number != before.number + 1:
            continue
        key = (frame.state, before.measured, frame.measured)
        times = {"frame": frame.interval_ns / 1e3}
        # The program's frame N is the layer's frame N (one frame end a frame, counted alike),
        # and the layer's interval of frame N runs from frame N - 1's end (its submission) to
        # frame N's: frame N - 1's fence wait, then frame N's recording and submission. Each
        # frame is given its own wait, where the GPU time its instruments cost shows.
        own, previous = phases.get(frame.number), phases.get(frame.number - 1)
        if own is not None and previous is not None:
            times |= own
            times["other"] = times["frame"] - own["record"] - own["submit"] - previous["wait"]
            if frame.recording_ns:
                # The recording as the layer split it: the application's own calls, and the
                # rest (the instruments' calls, the layer's and the driver's work for them).
                times["application"] = frame.recording_ns / 1e3
                times["rest"] = own["record"] - times["application"]
        groups.setdefault(key, []).append(times)
    rows = []
    for (s, b, m), frames_times in sorted(groups.items()):
        row: dict[str, Any] = {"state": s, "before": b, "measured": m, "frames": len(frames_times)}
        row["median_us"] = statistics.median(t["frame"] for t in frames_times)
        for phase in PHASES:
            values = [t[phase] for t in frames_times if phase in t]
            if values:
                row[f"{phase}_us"] = statistics.median(values)
        rows.append(row)
    return rows


def budget_frames(
    tools: Tools,
    frame_submits: Mapping[str, str],
    options: Sequence[str],
    workloads: int,
    frames: int,
    tmp: Path,
    frame_log: Path | None = None,
) -> list[BudgetFrame]:
    """The game-scale frame captured with `vkscope run OPTIONS` (a capture in `tmp`): the
    controller's record of every captured frame, in order; with `frame_log`, the program logs
    its frames' phases there."""
    cap = tmp / "budget.vkscope"
    cmd = [*tools.vkscope, "run", "--no-report", "--no-trace", "--no-html", "-o", str(cap)]
    cmd += [*options, *(f"-s{k}={v}" for k, v in frame_submits.items())]
    cmd += ["--", str(tools.workload), "--scenario", "game_scale", "--quiet"]
    cmd += ["--workloads", str(workloads), "--frames", str(frames)]
    if frame_log is not None:
        cmd += ["--frame-log", str(frame_log)]
    res = subprocess.run(cmd, env=base_env(), capture_output=True, text=True, timeout=900)
    if res.returncode != 0:
        raise RuntimeError(f"exit {res.returncode}\n{(res.stdout + res.stderr)[-2000:]}")
    with open_capture(cap) as c:
        return sorted(c.budget_frames(), key=lambda f: f.number)


# The phases of a frame the program times (bench/frame_phases.py), the rest of the interval, and
# the recording split into the application's own calls and the rest.
PHASES = (*frame_phases.PHASES, "other", "application", "rest")


def lines(rows: Sequence[Mapping[str, Any]]) -> list[str]:
    return [
        f"{r['state']} after a frame measuring {r['before']}, measuring {r['measured']}: "
        f"{r['frames']} frames, median {r['median_us']:.1f} µs"
        + (
            " (" + ", ".join(f"{p} {r[p + '_us']:.1f}" for p in PHASES if p + "_us" in r) + ")"
            if any(p + "_us" in r for p in PHASES)
            else ""
        )
        for r in rows
    ]


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--budget", default="2%", help="small enough to measure one at most")
    parser.add_argument("--frames", type=int, default=600)
    parser.add_argument("--workloads", type=int, default=200)
    parser.add_argument("--skip", type=int, default=120, help="frames before those grouped")
    parser.add_argument("--timing", default="queue", choices=("none", "queue", "full"))
    parser.add_argument("--results", type=Path, help="also write the groups here, as JSON")
    parser.add_argument("--docs", type=Path, help="also write the lines here, as Markdown")
    parser.add_argument("extra", nargs="*", help="more `vkscope run` options (after --)")
    args = parser.parse_args(argv)
    tools = Tools.installed()
    _, frame_submits = frame_end(tools)
    rows = probe(
        tools,
        frame_submits,
        args.budget,
        args.frames,
        args.workloads,
        args.skip,
        args.extra,
        args.timing,
    )
    text = lines(rows)
    print("\n".join(text))
    # A diagnostic's output, kept where bench/device/run.sh --bench collects a benchmark's: not
    # a committed result (no page is generated from it).
    if args.results:
        args.results.write_text(json.dumps({"budget": args.budget, "groups": rows}, indent=1))
    if args.docs:
        args.docs.write_text("".join(f"- {line}\n" for line in text))
    return 0


if __name__ == "__main__":
    sys.exit(main())
