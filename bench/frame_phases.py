"""Where in a frame a profiler's cost lands: the game-scale program's own log of each frame
(`vkscope-workload --frame-log`: its recording, its vkQueueSubmit calls, its fence wait) set
beside the layer's record of the same frames.

The layer's frame N runs from frame N - 1's end (its submission) to frame N's, so its interval
holds frame N - 1's fence wait, then frame N's recording and submission. Here each frame keeps
its own wait: where the GPU time its instruments cost shows, for a program that waits for every
frame before recording the next (game_scale does)."""

from __future__ import annotations

import statistics
from collections.abc import Mapping
from pathlib import Path
from typing import Any

# A frame's phases as the program times them; `frame` is their sum.
PHASES = ("record", "submit", "wait")
# Measured frames this close to a baseline run (before or after it) are set against it.
NEAR = 6


def read_frame_log(path: Path) -> dict[int, dict[str, float]]:
    """The program's frame log: per frame index its phases in µs."""
    lines = path.read_text().splitlines()
    if not lines or lines[0].split() != ["frame", *(f"{p}_us" for p in PHASES)]:
        raise RuntimeError(f"{path}: not a frame log of vkscope-workload")
    out: dict[int, dict[str, float]] = {}
    for line in lines[1:]:
        frame, *values = line.split()
        out[int(frame)] = dict(zip(PHASES, (float(v) for v in values), strict=True))
    return out


def medians(phases: Mapping[int, Mapping[str, float]], skip: int) -> dict[str, float]:
    """Each phase's median over the frames from `skip` on, and the frame's (their sum), and as
    `<phase>_iqr` how far they scatter from frame to frame (their interquartile range)."""
    frames = [p for n, p in phases.items() if n >= skip]
    if len(frames) < 2:
        return {}
    out: dict[str, float] = {}
    for name in (*PHASES, "frame"):
        values = [sum(f[p] for p in PHASES) if name == "frame" else f[name] for f in frames]
        q1, _, q3 = statistics.quantiles(values, n=4)
        out[name] = statistics.median(values)
        out[f"{name}_iqr"] = q3 - q1
    return out


def cost_split(
    states: Mapping[int, tuple[str, int]],
    phases: Mapping[int, Mapping[str, float]],
    skip: int,
) -> dict[str, Any] | None:
    """What the measured frames of a budgeted run cost beside its baseline frames, phase by
    phase, from the frames' own times: each baseline run from frame `skip` on against the
    measured frames within NEAR frames before and after it. A frame time that drifts (the
    application's recording on a busy CPU moved by a tenth of the frame over a few hundred frames
    on an H200's host) drifts alike on both sides of such a pair, where medians over the whole
    run would count it. `states`: per frame number its controller state and the workloads it
    measured. None without a pair."""
    numbers = sorted(n for n in states if n >= skip and n in phases)
    pairs: list[tuple[float, dict[str, float]]] = []
    i = 0
    while i < len(numbers):
        n = numbers[i]
        if states[n][0] != "baseline":
            i += 1
            continue
        run = [n]
        while i + 1 < len(numbers) and numbers[i + 1] == run[-1] + 1:
            if states[numbers[i + 1]][0] != "baseline":
                break
            i += 1
            run.append(numbers[i])
        i += 1
        near = [
            m
            for m in [*range(run[0] - NEAR, run[0]), *range(run[-1] + 1, run[-1] + 1 + NEAR)]
            if m in phases and m >= skip and states.get(m, ("", 0))[0] == "measured"
        ]
        if not near:
            continue
        diff = {
            p: statistics.fmean(phases[m][p] for m in near)
            - statistics.fmean(phases[b][p] for b in run)
            for p in PHASES
        }
        diff["frame"] = sum(diff[p] for p in PHASES)
        pairs.append((statistics.fmean(states[m][1] for m in near), diff))
    if len(pairs) < 2:
        return None
    measured = statistics.fmean(c for c, _ in pairs)
    out: dict[str, Any] = {"pairs": len(pairs), "measured": measured}
    for p in (*PHASES, "frame"):
        values = [d[p] for _, d in pairs]
        mean = statistics.fmean(values)
        out[p] = {
            "added_us": mean,
            "error_us": statistics.stdev(values) / len(values) ** 0.5,
            "per_workload_us": mean / measured if measured > 0 else None,
        }
    return out


def split_line(split: Mapping[str, Any]) -> str:
    """One line: what measuring added to a frame, and where."""
    parts = []
    for p in ("frame", *PHASES):
        s = split[p]
        per = s["per_workload_us"]
        parts.append(
            f"{p} {s['added_us']:+.1f} ± {s['error_us']:.1f} µs"
            + (f" ({per:+.2f} µs a workload)" if per is not None else "")
        )
    return (
        f"{split['measured']:.1f} workloads measured, {split['pairs']} baseline runs: "
        + ", ".join(parts)
    )
