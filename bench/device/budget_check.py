"""The `budget` device check: bench/budget.py's measurement on the device (docs/budget.md): the
game-scale frame with `--timing queue` and with `--counters pipeline_statistics`, without a
budget, under one and under 0% (the instruments there, measuring nothing), beside the timeline
alone, with every frame's controller record of the first round and where each run's frame time
goes (the program's own log of its frames: bench/frame_phases.py). Four rounds of 600 frames with
seven configurations took about three minutes on an H200; six rounds (the fewest whose range is
a 95% interval of their median) about four and a half. Each round starts one configuration
further along (bench/budget.py), and more rounds than one device call allows run in parts
(`checks.py --rounds N budget`, one call each), which `checks.py --merge` joins."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from bench import budget, budget_page, budget_probe, frame_cost, workload_cost
from bench.budget_configs import BUDGETED
from bench.device.device_context import Context, Outcome

NAME = "budget"
WORKLOADS = 200
ROUNDS, FRAMES, SKIP = 6, 600, 120
QUICK_ROUNDS, QUICK_FRAMES, QUICK_SKIP = 1, 160, 80


def check_budget(ctx: Context, out: Outcome) -> None:
    """bench/budget.py on this device: what a budget holds of the frame, how soon it measures
    every identity, and whether per-identity GPU times agree with a capture without one."""
    rounds, frames, skip = (
        (QUICK_ROUNDS, QUICK_FRAMES, QUICK_SKIP) if ctx.quick else (ROUNDS, FRAMES, SKIP)
    )
    rounds = ctx.rounds or rounds
    tools = frame_cost.Tools(ctx.layer, ctx.workload)
    end, frame_submits = workload_cost.frame_end(tools)
    cpus = workload_cost.pinned_cpus()
    program = workload_cost.Program(tools, WORKLOADS, False, frame_submits, cpus=cpus)
    measured = budget.measure(
        program, rounds, frames, skip, frame_cost.printer("  budget"), not ctx.driver.cpu_device
    )
    for b in BUDGETED:
        for r in measured[b.key]:
            out.expect(r["agreement"]["identities"] > 0, f"{b.key}: no identity measured")
    out.data |= {
        "device": ctx.driver.device,
        "driver_info": ctx.driver.driver_info,
        "cpu_device": ctx.driver.cpu_device,
        "workloads": WORKLOADS,
        "frames": frames,
        "skip": skip,
        "frame_end": end,
        "cpus": list(cpus),
        "rounds": measured,
    }


def section(part: Mapping[str, Any]) -> list[str]:
    """Its part of docs/bench/device.md."""
    return [
        f"bench/budget.py's measurement (docs/bench/budget.md) on {part['device']} "
        f"({part['driver_info']}), the targets judged for a GPU.",
        "",
        *budget_page.block_lines(part, part["cpu_device"]),
        *probe_lines(part),
    ]


def probe_lines(part: Mapping[str, Any]) -> list[str]:
    # (results from before each run logged its frames' phases: bench/frame_phases.py)
    if "probe" not in part:
        return []
    return [
        "",
        f"Within one run of `--timing queue --budget {part['probe_budget']}` "
        "(bench/budget_probe.py), its frames by what they and the frame before them measured:",
        "",
        *(f"- {line}" for line in budget_probe.lines(part["probe"])),
    ]
