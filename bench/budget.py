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
from dataclasses import dataclass
from itertools import pairwise
from pathlib import Path
from typing import Any

from bench import frame_phases
from bench.frame_cost import Tools, printer
from bench.resultfile import (
    DOCS_DIR,
    banner,
    met,
    new,
    not_run,
    provenance,
    publish,
    results_path,
    spread,
)
from bench.workload_cost import Config, Program, command, frame_end, judged, pinned
from harness.driver import probe
from vkscope.capture import open_capture
from vkscope.capture.read.records import BudgetFrame

NAME = "budget"
DOC = DOCS_DIR / "budget.md"
COMMAND = ".venv/bin/python bench/budget.py"


@dataclass(frozen=True)
class Budgeted:
    """A budgeted configuration, the unbudgeted one it is judged against, and its budget."""

    key: str
    full: str
    percent: float
    idle: str  # the same instruments under a budget of 0%


CONFIGS = (
    Config("run", "`vkscope run` (timeline)", run=()),
    Config("timing", "`--timing queue`", run=("--timing", "queue")),
    Config(
        "timing_budget", "`--timing queue --budget 5%`", run=("--timing", "queue", "--budget", "5%")
    ),
    Config(
        "timing_idle",
        "`--timing queue --budget 0%`",
        run=("--timing", "queue", "--budget", "0%"),
    ),
    Config(
        "statistics",
        "`--timing queue --counters pipeline_statistics`",
        run=("--timing", "queue", "--counters", "pipeline_statistics"),
    ),
    Config(
        "statistics_budget",
        "`--timing queue --counters pipeline_statistics --budget 10%`",
        run=("--timing", "queue", "--counters", "pipeline_statistics", "--budget", "10%"),
    ),
    Config(
        "statistics_idle",
        "`--timing queue --counters pipeline_statistics --budget 0%`",
        run=("--timing", "queue", "--counters", "pipeline_statistics", "--budget", "0%"),
    ),
)
BY_KEY = {c.key: c for c in CONFIGS}
BUDGETED = (
    Budgeted("timing_budget", "timing", 5.0, "timing_idle"),
    Budgeted("statistics_budget", "statistics", 10.0, "statistics_idle"),
)
# A per-identity GPU time agrees with the unbudgeted capture's within this share, or within this
# many ns where that is more: the `accuracy` device check's target (2% for dispatches over
# 100 µs), and for the few-µs workloads of this frame about what `queue` timing adds to each
# dispatch there (0.4 to 0.7 µs on an H200) with room for its spread from run to run.
AGREE_PERCENT = 2.0
AGREE_NS = 1000.0


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


# -- the page ------------------------------------------------------------------------------------


def added(rounds: Mapping[str, Any], key: str, metric: str) -> list[float]:
    """What `key` adds to the frame beyond the timeline's own cost (the run of the timeline
    alone of the same round), in percent of that run's frame."""
    return [percent_over(a, b, metric) for a, b in zip(rounds[key], rounds["run"], strict=True)]


def percent_over(run: Mapping[str, Any], timeline: Mapping[str, Any], metric: str) -> float:
    """What `run` adds to `timeline`'s `metric`, in percent of it."""
    return (run[metric] - timeline[metric]) / timeline[metric] * 100


def implied(rounds: Mapping[str, Any], b: Budgeted) -> list[int]:
    """The frames the budget implies, round by round: the full cost (the unbudgeted run's median
    frame beyond the timeline's) over the budget, rounded up, plus one."""
    return [implied_frames(f, b) for f in added(rounds, b.full, "period_median_us")]


def implied_frames(full_percent: float, b: Budgeted) -> int:
    """The full cost (percent of the frame) over the budget, rounded up, plus one."""
    return max(1, math.ceil(max(0.0, full_percent) / b.percent)) + 1


def pct(v: float) -> str:
    return f"{v:+.1f}%"


def table(block: Mapping[str, Any]) -> list[str]:
    rounds = block["rounds"]
    lines = [
        "| configuration | frame, median | added | frame, 95th percentile | added |",
        "| --- | --- | --- | --- | --- |",
    ]
    for c in CONFIGS:
        if c.key not in rounds:
            continue
        med = spread([r["period_median_us"] for r in rounds[c.key]], lambda v: f"{v:.1f} µs")
        p95 = spread([r["period_p95_us"] for r in rounds[c.key]], lambda v: f"{v:.1f} µs")
        if c.key == "run":
            lines.append(f"| {c.title} | {med} | | {p95} | |")
            continue
        lines.append(
            f"| {c.title} | {med} | {spread(added(rounds, c.key, 'period_median_us'), pct)} "
            f"| {p95} | {spread(added(rounds, c.key, 'period_p95_us'), pct)} |"
        )
    return lines


def coverage_lines(block: Mapping[str, Any]) -> list[str]:
    rounds = block["rounds"]
    lines = [
        "| configuration | frames implied | rotation took | longest gap | never measured "
        "| baseline frames | workloads a measured frame | added over its baseline frames "
        "| GPU times agree | difference, median / 90th percentile |",
        "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |",
    ]
    for b in BUDGETED:
        if b.key not in rounds:
            continue
        runs = rounds[b.key]
        agree = [r["agreement"] for r in runs]

        def frames(values: Sequence[float]) -> str:
            return spread([float(v) for v in values], lambda v: f"{v:.0f}")

        def share(values: Sequence[float], digits: int = 1) -> str:
            return spread(list(values), lambda v: f"{v:.{digits}f}%")

        within = [100 * a["within"] / max(1, a["identities"]) for a in agree]
        views = [run.get("controller") or {} for run in runs]
        counts = [c["measured_median"] for c in views if c.get("measured_median") is not None]
        own = [c["added_percent"] for c in views if c.get("added_percent") is not None]
        lines.append(
            f"| {BY_KEY[b.key].title} | {frames(implied(rounds, b))} "
            f"| {frames([r['rotation_frames'] for r in runs])} "
            f"| {frames([r['gap_frames'] for r in runs])} "
            f"| {frames([r['never_measured'] for r in runs])} "
            f"| {share([100 * (r['baseline_share'] or 0) for r in runs])} "
            f"| {frames(counts) if counts else 'n/a'} "
            f"| {spread(own, pct) if own else 'n/a'} "
            f"| {share(within, 0)} "
            f"| {share([a['median_diff_percent'] or 0 for a in agree])} / "
            f"{share([a['p90_diff_percent'] or 0 for a in agree])} |"
        )
    return lines + disagreeing_lines(rounds)


def disagreeing_lines(rounds: Mapping[str, Sequence[Mapping[str, Any]]]) -> list[str]:
    """The identities that disagreed, per configuration and run: identity, the median with
    and without the budget, and the frames the budget measured it in."""
    lines: list[str] = []
    for b in BUDGETED:
        for i, run in enumerate(rounds.get(b.key, ())):
            found = run["agreement"].get("disagreeing")
            if not found:
                continue
            shown = "; ".join(
                f"`{d['identity']}` {d['budgeted_ns'] / 1000:.2f} against "
                f"{d['full_ns'] / 1000:.2f} µs ({d['frames']} frames)"
                for d in found[:8]
            )
            more = f"; {len(found) - 8} more" if len(found) > 8 else ""
            lines.append(f"- {BY_KEY[b.key].title}, run {i + 1}, disagreeing: {shown}{more}")
    return ["", *lines] if lines else []


def verdict_lines(block: Mapping[str, Any], cpu_device: bool) -> list[str]:
    if cpu_device:
        return [
            "- On a CPU device the frame's time is the machine's (lavapipe's work runs on the "
            "application's threads, beside everything else the machine runs): the targets are for "
            "a GPU (the `budget` device check, docs/bench/device.md), and what lavapipe gives is "
            "shown above, not judged."
        ]
    rounds = block["rounds"]
    lines = []
    for b in BUDGETED:
        if b.key not in rounds or "run" not in rounds:
            continue
        title = BY_KEY[b.key].title
        for metric, name in (("period_median_us", "median"), ("period_p95_us", "95th percentile")):
            lines.append(
                f"- {title} adds at most {b.percent:g}% to the frame beyond the timeline's own "
                f"cost ({name} of frames): "
                f"{judged(added(rounds, b.key, metric), b.percent, pct)}."
            )
        over = [
            r["rotation_frames"] - want
            for r, want in zip(rounds[b.key], implied(rounds, b), strict=True)
        ]
        lines.append(
            f"- {title}: every identity measured within the frames the budget implies (plus "
            f"one), counting the frames that measured something: "
            f"{judged([float(v) for v in over], 0, lambda v: f'{v:+.0f} frames')}."
        )
        agree = [
            100 * a["within"] / max(1, a["identities"])
            for a in (r["agreement"] for r in rounds[b.key])
        ]
        sampled = [
            100 * a["sampled"]["within"] / max(1, a["sampled"]["identities"])
            for a in (r["agreement"] for r in rounds[b.key])
            if "sampled" in a
        ]
        alone = (
            f"; the capture without a budget, each identity taken from as many of its frames as "
            f"the budget measured it in, agrees with itself for "
            f"{spread(sampled, lambda v: f'{v:.0f}%')}: what sampling alone gives"
            if sampled
            else ""
        )
        lines.append(
            f"- {title}: per-identity GPU times agree with the capture without a budget within "
            f"{AGREE_PERCENT:g}% or {AGREE_NS / 1000:g} µs: {met(min(agree) >= 100)} "
            f"({spread(agree, lambda v: f'{v:.0f}%')} of identities{alone})."
        )
    return lines


def method_line(block: Mapping[str, Any]) -> str:
    return (
        f"`vkscope-workload --scenario game_scale --workloads {block['workloads']}` "
        f"(docs/bench/workload-cost.md){pinned(block)}, {block['frames']} frames a run, frames "
        "ending at "
        f"{block['frame_end']}; {len(block['rounds']['run'])} interleaved rounds. The frame is "
        "the time between two frame ends as the layer saw them (FRAME's cpu_ns), over the frames "
        f"from frame {block['skip']} on (the controller's warmup, first baseline and ramp before "
        "it); *added* compares each run with the run of the timeline alone of its round. A "
        "rotation is the most frames an identity waited between two frames that measured it, "
        "baseline frames not counted; the longest gap counts them. GPU times compare each "
        "identity's median over the frames that measured it with its median in the unbudgeted "
        "capture of the same round. *Added over its baseline frames* is what the controller "
        "saw: the median time of its measured frames over that of its own baseline frames, "
        "which carry the instruments but measure nothing; a budget of 0% shows what that "
        "costs beyond the timeline (no controller can see it: docs/budget.md)."
    )


def phase_lines(block: Mapping[str, Any]) -> list[str]:
    """Where the frame's time goes (the program's own log of each frame), and for each budgeted
    run what its measured frames cost beside the baseline runs next to them, phase by phase."""
    rounds = block["rounds"]
    if not all(r.get("phases") for c in CONFIGS for r in rounds.get(c.key, [])):
        return []  # results from before the program logged its frames
    lines = [
        "Where the frame's time goes, as the program timed each frame (median of frames, from "
        f"frame {block['skip']} on): its recording, its vkQueueSubmit call and its fence wait "
        "(the GPU's share; bench/frame_phases.py); the scatter is each phase's interquartile "
        "range over the frames of a run (median of the runs).",
        "",
        "| configuration | recording | vkQueueSubmit | fence wait | scatter from frame to frame: "
        "recording / vkQueueSubmit / fence wait |",
        "| --- | --- | --- | --- | --- |",
    ]
    us = lambda v: f"{v:.1f} µs"  # noqa: E731
    for c in CONFIGS:
        if c.key not in rounds:
            continue
        runs = rounds[c.key]
        cells = [spread([r["phases"][p] for r in runs], us) for p in frame_phases.PHASES]
        scatter = " / ".join(
            f"{statistics.median(r['phases'][p + '_iqr'] for r in runs):.1f}"
            for p in frame_phases.PHASES
        )
        lines.append(f"| {c.title} | {' | '.join(cells)} | {scatter} µs |")
    lines += [
        "",
        "What a budgeted run's measured frames added beside its baseline frames, each baseline "
        f"run against the measured frames within {frame_phases.NEAR} frames of it (the same "
        "stretch of the frame time's drift), per workload measured:",
        "",
        "| configuration | workloads measured | added to the frame | a workload: frame "
        "| recording | vkQueueSubmit | fence wait |",
        "| --- | --- | --- | --- | --- | --- | --- |",
    ]
    per = lambda v: f"{v:+.2f} µs"  # noqa: E731
    for b in BUDGETED:
        splits = [r["split"] for r in rounds.get(b.key, []) if r.get("split")]
        if not splits:
            continue
        counts = spread([s["measured"] for s in splits], lambda v: f"{v:.1f}")
        frame = spread([s["frame"]["added_us"] for s in splits], lambda v: f"{v:+.1f} µs")
        error = max(s["frame"]["error_us"] for s in splits)
        # (none a workload where the frames next to the baseline runs measured nothing)
        cells = [
            spread(values, per) if values else "n/a"
            for values in (
                [s[p]["per_workload_us"] for s in splits if s[p]["per_workload_us"] is not None]
                for p in ("frame", *frame_phases.PHASES)
            )
        ]
        lines.append(
            f"| {BY_KEY[b.key].title} | {counts} | {frame} (standard error ≤ {error:.1f} µs) "
            f"| {' | '.join(cells)} |"
        )
    return lines + allowed_lines(block)


def allowed_lines(block: Mapping[str, Any]) -> list[str]:
    """How short a rotation the cost a measured workload showed leaves room for: every
    identity measured in `allowed_frames()`, against the frames the budget implies."""
    rounds = block["rounds"]
    out = []
    for b in BUDGETED:
        runs = rounds.get(b.key, [])
        pairs = [
            (allowed, want)
            for run, want in zip(runs, implied(rounds, b), strict=True)
            if (allowed := allowed_frames(run, block["workloads"], b.percent)) is not None
        ]
        if not pairs:
            continue
        frames = lambda v: f"{v:.0f}"  # noqa: E731
        out.append(
            f"- {BY_KEY[b.key].title}: spending the whole budget at the cost a measured workload "
            "showed above (*a workload: frame*), with no margin for the estimate's error and no "
            "dip of the count, would measure every identity in "
            f"{spread([float(a) for a, _ in pairs], frames)} frames, where the budget implies "
            f"{spread([float(w) for _, w in pairs], frames)} (plus one included)."
        )
    return ["", *out] if out else []


def allowed_frames(run: Mapping[str, Any], workloads: int, percent: float) -> int | None:
    """The rotation a budgeted run's measured cost leaves room for: its workloads at the cost
    per workload its measured frames showed beside its baseline frames (the split), over the
    budget's share of its own baseline frame, rounded up; None where either is not known."""
    unit = ((run.get("split") or {}).get("frame") or {}).get("per_workload_us")
    base = (run.get("controller") or {}).get("base_us")
    if unit is None or unit <= 0 or not base:
        return None
    return math.ceil(workloads * unit / (percent / 100 * base))


def block_lines(block: Mapping[str, Any], cpu_device: bool) -> list[str]:
    phases = phase_lines(block)
    return [
        method_line(block),
        "",
        *table(block),
        "",
        *coverage_lines(block),
        "",
        *([*phases, ""] if phases else []),
        "Targets:",
        "",
        *verdict_lines(block, cpu_device),
    ]


def render(results: Mapping[str, Any] | None) -> str:
    lines = [
        "# Profiling under a cost budget",
        "",
        banner("budget.py"),
        "",
        "`bench/budget.py` captures the game-scale frame with timing and with pipeline "
        "statistics, without a budget and under one, beside the timeline alone (docs/budget.md). "
        "Targets (for a GPU): `--timing queue --budget 5%` adds at most 5% to the frame beyond "
        "the timeline's own cost, `--timing queue --counters pipeline_statistics --budget 10%` "
        "at most 10%, at the median and the 95th percentile of frames; every identity is "
        "measured within the frames the budget implies (the full cost over the budget, rounded "
        "up) plus one; per-identity GPU times agree with a capture without a budget within the "
        "timing accuracy. The same measurement on a GPU is the `budget` device check "
        "(docs/bench/device.md).",
        "",
        "## Results",
        "",
    ]
    if results is None:
        return "\n".join([*lines, *not_run(NAME, COMMAND), ""])
    s = results["settings"]
    reproduce = f"{COMMAND} --runs {s['runs']} --workloads {s['workloads']} --frames {s['frames']}"
    reproduce += f" --skip {s['skip']}"
    lines += [*provenance(results, NAME), "", f"Reproduce: `{reproduce}`", ""]
    lines += block_lines(results, results.get("cpu_device", True))
    return "\n".join([*lines, ""])


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
