"""The `workload_cost` device check: bench/workload_cost.py's measurement on the device, and how
its results from several devices live together in bench/results/device.json.

Every other check's part of the results is the latest run's; this one keeps a block per device
(`devices`, by device name, each stamped with the commit and date it was measured at), so that the
pages give the cost per workload on every device the check ran on, not only the last."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from bench import frame_cost, workload_configs, workload_cost, workload_cost_page
from bench.device.device_context import Context, Outcome

NAME = "workload_cost"
# A frame of this many workloads, timed for this many frames after a warm-up, in each of
# workload_configs.CONFIGS, over this many interleaved rounds (about 4 minutes on an H200). Rounds
# rather than frames: the frame without the layer moved by up to 10% from round to round on the
# H200 while 300 frames of one run agreed, so the verdicts' 95% intervals narrow with rounds.
WORKLOADS = 200
ROUNDS, FRAMES, WARMUP = 15, 200, 50
QUICK_ROUNDS, QUICK_FRAMES, QUICK_WARMUP = 2, 20, 5


def check_workload_cost(ctx: Context, out: Outcome) -> None:
    """bench/workload_cost.py on this device: a frame of 200 workloads (render passes, dispatches,
    copies, each waiting for the one before), timed by the program itself, in every configuration
    beside the floor (the program's own timestamps or pipeline statistics queries); each
    `vkscope run` drops nothing."""
    rounds, frames, warmup = (
        (QUICK_ROUNDS, QUICK_FRAMES, QUICK_WARMUP) if ctx.quick else (ROUNDS, FRAMES, WARMUP)
    )
    rounds = ctx.rounds or rounds
    tools = frame_cost.Tools(ctx.layer, ctx.workload)
    end, frame_submits = workload_cost.frame_end(tools)
    cpus = workload_cost.pinned_cpus()
    program = workload_cost.Program(tools, WORKLOADS, False, frame_submits, cpus=cpus)
    measured = workload_cost.measure(
        program, workload_configs.CONFIGS, rounds, frames + warmup, warmup,
        progress=frame_cost.printer("  workload cost"),
    )  # fmt: skip
    for key, runs in measured.items():
        dropped = sum(r.get("dropped") or 0 for r in runs)
        out.expect(dropped == 0, f"{key}: {dropped} messages dropped")
    block = {
        "device": ctx.driver.device,
        "driver_info": ctx.driver.driver_info,
        "cpu_device": ctx.driver.cpu_device,
        "workloads": WORKLOADS,
        "frames": frames,
        "warmup": warmup,
        "record_thread": False,
        "frame_end": end,
        "cpus": list(cpus),
        "rounds": measured,
    }
    out.data["devices"] = {ctx.driver.device: block}


def fold(
    previous: Mapping[str, Any] | None,
    merged: dict[str, Any],
    commit: str | None,
    date: str,
    name: str = NAME,
) -> None:
    """In `merged` (the results being written), the blocks of check `name` (this one, or another
    kept per device: floor_check.py) of this run stamped with its commit and date, and those of
    other devices kept from `previous` results."""
    part = merged["checks"].get(name)
    if part is None or "devices" not in part:
        return
    for block in part["devices"].values():
        block.setdefault("commit", commit)
        block.setdefault("date", date)
    old = ((previous or {}).get("checks") or {}).get(name) or {}
    for device, block in (old.get("devices") or {}).items():
        part["devices"].setdefault(device, block)


def section(part: Mapping[str, Any]) -> list[str]:
    """Its part of docs/bench/device.md: each device's measurement, newest first."""
    lines = [
        "bench/workload_cost.py's measurement (docs/bench/workload-cost.md) on each device the "
        "check ran on, the targets judged for a GPU."
    ]
    for block in newest_first(part):
        lines += [
            *block_heading(block),
            *workload_cost_page.block_lines(block, block["cpu_device"]),
        ]
    return lines


def newest_first(part: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    """The blocks of a check kept per device (fold), the newest first."""
    return sorted(part.get("devices", {}).values(), key=lambda b: b.get("date", ""), reverse=True)


def block_heading(block: Mapping[str, Any]) -> list[str]:
    """A device block's heading on the page: the device, and when and where it was measured
    where the block says (a block measured in a device check has the check's own line instead)."""
    lines = ["", f"### {block['device']} ({block['driver_info']})", ""]
    if block.get("date") or block.get("commit"):
        commit = (block.get("commit") or "unknown")[:10]
        lines += [f"Measured {block.get('date', 'at an unknown date')}, commit `{commit}`.", ""]
    return lines
