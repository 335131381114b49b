#!/usr/bin/env python3
"""Measure what `vkscope run --budget P%` holds (docs/budget.md): the game-scale frame of
bench/workload_cost.py captured with `--timing queue` and with `--timing queue --counters
pipeline_statistics`, each without a budget and under one (5% and 10%), beside `vkscope run`
with the timeline alone, in interleaved rounds.

From each run's capture: the frame's time (the time between two frame ends, as the layer saw
them: FRAME's cpu_ns) over the frames after the controller's start, median and 95th percentile;
what each adds beyond the timeline's own cost, against the run of the timeline alone of the same
round; for a budgeted run, the frames its rotation took to measure every workload identity
against the frames the budget implies (the full cost, from the unbudgeted run of the same round,
over the budget, rounded up), and each identity's median GPU time against the same identity's
in the unbudgeted capture of the round. And what the controller saw: what its measured frames
added over its own baseline frames, and, for the first round, every frame's record (state,
workloads measured, interval, estimates), so that what it estimated can be read beside what the
frames cost.

Every run is kept: bench/results/budget.json, and docs/bench/budget.md (`render`). The same
measurement on a GPU is the `budget` device check (docs/bench/device.md).

  .venv/bin/python bench/budget.py [--runs 5] [--workloads 200] [--frames 600] [--skip 80]
"""

from __future__ import annotations

import argparse
import math
import statistics
import subprocess
import sys
import tempfile
from collections.abc import Callable, Mapping, Sequence
from itertools import pairwise
from pathlib import Path
from typing import Any

from bench import frame_phases
from bench.budget_configs import (
    AGREE_NS,
    AGREE_PERCENT,
    BUDGETED,
    CONFIGS,
    DOC,
    NAME,
    Budgeted,
    implied_frames,
    percent_over,
)
from bench.budget_page import render
from bench.frame_cost import Tools, printer
from bench.resultfile import (
    new,
    publish,
    results_path,
)
from bench.workload_configs import Config
from bench.workload_cost import Program, command, frame_end
from harness.driver import probe
from vkscope.capture import open_capture
from vkscope.capture.read.records import BudgetFrame

__all__ = ["DOC", "NAME", "render"]  # what bench/tables.py takes from a benchmark module


# -- one run -------------------------------------------------------------------------------------


def percentile(values: Sequence[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, math.ceil(q * len(ordered)) - 1))]


def read_capture(
    path: Path, skip: int, phases: Mapping[int, Mapping[str, float]] | None = None
) -> dict[str, Any]:
    """What a run's capture says: its frames' times after `skip` frames, and per workload
    identity the frames that measured it and its GPU times there. With the program's frame log
    (`phases`), each phase's median, and for a budgeted run what its measured frames cost
    beside its baseline frames, phase by phase (bench/frame_phases.py)."""
    with open_capture(path) as cap:
        ends = sorted((f.number, f.cpu_ns) for f in cap.frames() if f.cpu_ns is not None)
        records = sorted(cap.budget_frames(), key=lambda f: f.number)
        states = {f.number: f.state for f in records}
        measured: dict[str, list[int]] = {}
        times: dict[str, list[int]] = {}
        for w in cap.workloads():
            if w.identity is None or w.frame is None:
                continue
            key = (
                f"{w.identity.queue}|{w.identity.label_path}|{w.identity.type}|{w.identity.ordinal}"
            )
            measured.setdefault(key, [])
            ns = w.gpu_ns
            if ns is not None:
                measured[key].append(w.frame)
                times.setdefault(key, []).append(ns)
    periods = [(b - a) / 1e3 for (fa, a), (fb, b) in pairwise(ends) if fb == fa + 1 and fa >= skip]
    out: dict[str, Any] = {
        "frames": len(ends),
        "period_median_us": statistics.median(periods) if periods else None,
        "period_p95_us": percentile(periods, 0.95) if periods else None,
        "identity_ns": {k: statistics.median(v) for k, v in times.items()},
        "identity_times": times,
    }
    if phases is not None:
        out["phases"] = frame_phases.medians(phases, skip)
    if states:
        out |= coverage(measured, states, skip, len(ends))
        out["controller"] = controller_view(records, skip)
        out["trace"] = trace(records)
        if phases is not None:
            by_number = {r.number: (r.state, r.measured) for r in records}
            out["split"] = frame_phases.cost_split(by_number, phases, skip)
    return out


def controller_view(records: Sequence[BudgetFrame], skip: int) -> dict[str, Any]:
    """What the controller saw from frame `skip` on: what its measured frames added over its own
    baseline frames (medians of their times, as samples: each after a frame alike), the workloads
    a measured frame measured, and its last estimates."""
    after = [r for r in records if r.number >= skip and r.sample]
    base = [r.interval_ns for r in after if r.state == "baseline"]
    measured = [r.interval_ns for r in after if r.state == "measured"]
    counts = [r.measured for r in records if r.number >= skip and r.state == "measured"]
    last = records[-1]
    return {
        "added_percent": (statistics.median(measured) / statistics.median(base) - 1) * 100
        if base and measured
        else None,
        "baseline_samples": len(base),
        "measured_median": statistics.median(counts) if counts else None,
        "base_us": last.base_ns / 1e3 if last.base_ns is not None else None,
        "unit_ns": last.unit_ns,
        "frame_us": last.frame_ns / 1e3 if last.frame_ns is not None else None,
        "recording_share": last.recording_share,
    }


def trace(records: Sequence[BudgetFrame]) -> dict[str, Any]:
    """Every frame's record, column by column (compact in the JSON)."""

    def rounded(v: float | None, scale: float) -> float | None:
        return None if v is None else round(v / scale, 1)

    return {
        "state": "".join(r.state[0] for r in records),  # w(armup), b(aseline), m(easured)
        "sample": "".join("1" if r.sample else "0" for r in records),
        "measured": [r.measured for r in records],
        "interval_us": [rounded(r.interval_ns, 1e3) for r in records],
        "base_us": [rounded(r.base_ns, 1e3) for r in records],
        "unit_ns": [rounded(r.unit_ns, 1) for r in records],
        "frame_us": [rounded(r.frame_ns, 1e3) for r in records],
        "recording_us": [rounded(r.recording_ns, 1e3) for r in records],
        "recording_share": [
            None if r.recording_share is None else round(r.recording_share, 3) for r in records
        ],
    }


def coverage(
    measured: Mapping[str, list[int]], states: Mapping[int, str], skip: int, frames: int
) -> dict[str, Any]:
    """From frame `skip` on: the longest a workload identity waited between two frames that
    measured it, not counting the baseline frames between them (a rotation) and counting them
    (any gap), and the identities never measured then."""
    rotation = gap = 0
    never = 0
    for found in measured.values():
        after = sorted(f for f in found if f >= skip)
        if not after:
            never += 1
            continue
        for a, b in zip([skip - 1, *after], [*after, frames], strict=True):
            if a < skip or b >= frames:
                continue  # the run's edges are no gap between two measurements
            baseline = sum(states.get(f) == "baseline" for f in range(a + 1, b))
            rotation = max(rotation, b - a - baseline)
            gap = max(gap, b - a)
    counted = [s for n, s in states.items() if n >= skip]
    return {
        "rotation_frames": rotation,
        "gap_frames": gap,
        "never_measured": never,
        "identities": len(measured),
        "baseline_share": counted.count("baseline") / len(counted) if counted else None,
    }


def run_once(program: Program, config: Config, frames: int, skip: int, tmp: Path) -> dict[str, Any]:
    cap = tmp / f"{config.key}.vkscope"
    for f in tmp.glob(f"{config.key}.vkscope*"):
        f.unlink()
    log = tmp / f"{config.key}.frames"
    inner = [*program.args(config, frames, None), "--frame-log", str(log)]
    cmd, env = command(program, config, inner, tmp)
    cmd[cmd.index(str(tmp / "capture.vkscope"))] = str(cap)
    res = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=900)
    if res.returncode != 0:
        raise RuntimeError(
            f"{config.title}: exit {res.returncode}\n{(res.stdout + res.stderr)[-2000:]}"
        )
    out = read_capture(cap, skip, frame_phases.read_frame_log(log))
    for f in [*tmp.glob(f"{config.key}.vkscope*"), log]:
        f.unlink()
    return out


def agreement(
    budgeted: Mapping[str, float],
    full: Mapping[str, float],
    frames: Mapping[str, int] | None = None,
) -> dict[str, Any]:
    """Each identity measured in both captures: its budgeted median GPU time against the
    unbudgeted one; those that disagree are listed (identity `queue|label path|type|ordinal`,
    both medians, the frames the budget measured it in), so that a run says which they are."""
    both = [k for k in budgeted if k in full and full[k] > 0]
    diffs = [abs(budgeted[k] - full[k]) / full[k] * 100 for k in both]
    within = sum(agrees(budgeted[k], full[k]) for k in both)
    disagreeing = [
        {
            "identity": k,
            "budgeted_ns": budgeted[k],
            "full_ns": full[k],
            "frames": (frames or {}).get(k),
        }
        for k in both
        if not agrees(budgeted[k], full[k])
    ]
    return {
        "identities": len(both),
        "within": within,
        "median_diff_percent": statistics.median(diffs) if diffs else None,
        "p90_diff_percent": percentile(diffs, 0.9) if diffs else None,
        "disagreeing": disagreeing,
    }


def agrees(value: float, full: float) -> bool:
    return abs(value - full) <= max(AGREE_PERCENT / 100 * full, AGREE_NS)


def sampled_agreement(
    counts: Mapping[str, int], full_times: Mapping[str, Sequence[int]]
) -> dict[str, Any]:
    """The agreement that sampling alone gives: each identity's median over as many frames of
    the capture without a budget as the budgeted run measured it in (evenly spaced over the
    run), against its median over all of them. A budgeted identity's median is of a share of
    the frames; where the GPU time of a workload scatters from frame to frame, that share's
    median differs from the whole's by chance, with no budget at all."""
    within = identities = 0
    for key, k in counts.items():
        times = full_times.get(key)
        if not times or k <= 0:
            continue
        n = len(times)
        taken = times if k >= n else [times[(2 * i + 1) * n // (2 * k)] for i in range(k)]
        full = statistics.median(times)
        if full <= 0:
            continue
        identities += 1
        within += agrees(statistics.median(taken), full)
    return {"identities": identities, "within": within}


def measure(
    program: Program,
    rounds: int,
    frames: int,
    skip: int,
    progress: Callable[[str], None] | None = None,
    keep_off: bool = True,
) -> dict[str, list[dict[str, Any]]]:
    """Every configuration once per round, interleaved; a budgeted run judged against the
    unbudgeted run of its round. Each round starts one configuration further along the list, so
    that no configuration always runs first, or always after the longest frames. Every frame's
    controller record is kept for the first round, and with `keep_off` for a budgeted run that
    went off (off()): on a CPU device, where the targets are not judged, nearly every run does."""
    out: dict[str, list[dict[str, Any]]] = {c.key: [] for c in CONFIGS}
    with tempfile.TemporaryDirectory(prefix="vkscope-budget-") as tmp:
        for r in range(rounds):
            turn = r % len(CONFIGS)
            order = [*CONFIGS[turn:], *CONFIGS[:turn]]
            round_runs = {c.key: run_once(program, c, frames, skip, Path(tmp)) for c in order}
            for b in BUDGETED:
                run = round_runs[b.key]
                full = round_runs[b.full]
                counts = {k: len(v) for k, v in run["identity_times"].items()}
                run["agreement"] = agreement(run["identity_ns"], full["identity_ns"], counts)
                run["agreement"]["sampled"] = sampled_agreement(counts, full["identity_times"])
            kept = {b.key for b in BUDGETED if keep_off and off(round_runs, b)}
            for key, run in round_runs.items():
                run.pop("identity_ns")
                run.pop("identity_times")
                if r > 0 and key not in kept:
                    # every frame's record of the first round only, and of a budgeted run that
                    # went off (so that what its controller saw can be read)
                    run.pop("trace", None)
                out[key].append(run)
            if progress:
                progress(f"round {r + 1} of {rounds} done")
    return out


def off(round_runs: Mapping[str, Mapping[str, Any]], b: Budgeted) -> bool:
    """A budgeted run of a round whose rotation took more than twice the frames the budget
    implies, or with an identity that disagrees with the capture without a budget."""
    run = round_runs[b.key]
    full = percent_over(round_runs[b.full], round_runs["run"], "period_median_us")
    return bool(run["agreement"]["disagreeing"]) or run.get(
        "rotation_frames", 0
    ) > 2 * implied_frames(full, b)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--runs", type=int, default=5, help="interleaved rounds")
    parser.add_argument("--workloads", type=int, default=200, help="workloads a frame")
    parser.add_argument("--frames", type=int, default=600, help="frames a run")
    parser.add_argument("--skip", type=int, default=80, help="frames before those judged")
    parser.add_argument("--results", type=Path, default=results_path(NAME))
    parser.add_argument("--docs", type=Path, default=DOC)
    args = parser.parse_args(argv)
    if args.runs < 1 or args.frames <= args.skip + 10 or args.workloads < 4:
        parser.error("--runs must be positive, --frames well past --skip, --workloads >= 4")
    tools = Tools.installed()
    end, frame_submits = frame_end(tools)
    program = Program(tools, args.workloads, False, frame_submits)
    settings = {"runs": args.runs, "workloads": args.workloads, "frames": args.frames,
                "skip": args.skip, "LP_NUM_THREADS": "0"}  # fmt: skip
    results = new(NAME, settings, vulkan=True)
    results |= {"workloads": args.workloads, "frames": args.frames, "skip": args.skip,
                "frame_end": end, "cpu_device": probe().cpu_device}  # fmt: skip
    results["rounds"] = measure(
        program, args.runs, args.frames, args.skip, printer("budget"), not results["cpu_device"]
    )
    publish(results, render, args.results, args.docs)
    return 0


if __name__ == "__main__":
    sys.exit(main())
