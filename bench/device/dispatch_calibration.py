"""Dispatches of a given length on the device: the compute scenario's three ratio dispatches (16,
64 and 256 groups) timed by the application's own timestamps without the layer, and the loop
length that makes the shortest of them last a given time (the accuracy, frame time and GPU state
checks)."""

from __future__ import annotations

import re
import statistics
from collections.abc import Mapping

from bench.device.device_context import Context

RATIO_GROUPS = (16, 64, 256)
MAX_ITERATIONS = 16_777_216  # vkscope-workload --compute-iterations accepts at most this


def app_timings(ctx: Context, iterations: int, frames: int) -> list[list[float]]:
    """The compute scenario's own timestamps around its three ratio dispatches, without the
    layer: ms per frame, by group count."""
    env = {**ctx.bare_env(), "VKSCOPE_WORKLOAD_TIMINGS": "1"}
    args = [
        "--scenario",
        "compute",
        "--frames",
        str(frames),
        "--compute-iterations",
        str(iterations),
    ]
    res = ctx.run(args, env)
    if res.returncode != 0:
        raise RuntimeError(f"compute without the layer exited {res.returncode}: {res.stderr}")
    rows = re.findall(r"16 groups ([\d.]+) ms, 64 groups ([\d.]+) ms, 256 groups ([\d.]+) ms",
                      res.stderr)  # fmt: skip
    return [[float(x) for x in r] for r in rows]


def calibrate(ctx: Context) -> dict[str, float]:
    """ns per loop iteration of each ratio dispatch, from the default loop length (2,560)."""
    rows = app_timings(ctx, 2560, 6)[2:]
    return {str(g): statistics.median(r[i] for r in rows) * 1e6 / 2560
            for i, g in enumerate(RATIO_GROUPS)}  # fmt: skip


def iterations_for(calibration: Mapping[str, float], target_us: float) -> int:
    """The loop length that makes the shortest ratio dispatch (16 groups) last `target_us`."""
    return max(1, min(MAX_ITERATIONS, round(target_us * 1e3 / calibration["16"])))
