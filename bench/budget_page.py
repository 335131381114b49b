"""bench/budget.py's page (docs/bench/budget.md) and its part of docs/bench/device.md: the
frame's time under each configuration, coverage and agreement, where the frame's time goes, and
the targets judged."""

from __future__ import annotations

import math
import statistics
from collections.abc import Mapping, Sequence
from typing import Any

from bench import frame_phases
from bench.budget_configs import (
    AGREE_NS,
    AGREE_PERCENT,
    BUDGETED,
    BY_KEY,
    COMMAND,
    CONFIGS,
    NAME,
    added,
    implied,
)
from bench.resultfile import banner, met, not_run, provenance, spread
from bench.workload_cost_page import judged, pinned


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
    return math.ceil(workloads * float(unit) / (percent / 100 * float(base)))


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
