"""The `floor` device check: the timer's floor the layer measures as timing starts (docs/timing.md,
"The timer's floor"), in each serialization mode, with the validation layer below it, and how its
results from several devices live together in bench/results/device.json (a block per device, as
workload_check.py keeps them), so that the pages give the floor of every device it ran on."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import msgspec

from bench.device.device_context import Context, Outcome
from bench.device.workload_check import block_heading, newest_first
from harness.timeline import DEVICE

NAME = "floor"
MODES = ("none", "queue", "full")
# The compute scenario: one queue family, a dispatch a frame.
ARGS = ("--scenario", "compute", "--frames", "2")
REPEATS = 32  # the layer's kFloorRepeats (layer/src/instruments/timing/floor_samples.hpp)
PLAUSIBLE_NS = 1_000_000.0  # a floor past a millisecond is a measurement gone wrong


def _families(ctx: Context, mode: str) -> list[dict[str, Any]]:
    """The floor of each queue family of one run in `mode`, as the host stores it."""
    from vkscope import protocol as m
    from vkscope.capture.write.timer_floor import floor_rows

    res, capture = ctx.capture(list(ARGS), timing=mode)
    if res.returncode != 0:
        raise RuntimeError(f"the workload exited {res.returncode}: {res.stderr[-1500:]}")
    devices = capture.of(DEVICE)
    if not devices:
        raise RuntimeError("no DEVICE message")
    payload = devices[0].payload
    floors = msgspec.convert(payload.get("timer_floor") or [], list[m.TimerFloor])
    names = (
        "process", "device", "family", "period_ns", "samples", "back_to_back_min_ns",
        "back_to_back_median_ns", "back_to_back_max_ns", "empty_min_ns", "empty_median_ns",
        "empty_max_ns", "reason",
    )  # fmt: skip
    out = []
    for row in floor_rows(0, 0, payload.get("timestamp_period_ns"), floors):
        found = dict(zip(names, row, strict=True))
        del found["process"], found["device"]
        out.append(found)
    return out


def check_floor(ctx: Context, out: Outcome) -> None:
    """Per mode, every queue family's floor: measured (REPEATS of each), plausible (an empty
    workload reads no less than the least back-to-back pair, and under a millisecond), and
    clean under the validation layer."""
    modes: dict[str, Any] = {}
    for mode in MODES:
        families = _families(ctx, mode)
        out.expect(bool(families), f"{mode}: no queue family's floor in the DEVICE message")
        for f in families:
            where = f"{mode}, family {f['family']}"
            if not out.expect(f["reason"] is None, f"{where}: not measured: {f['reason']}"):
                continue
            out.expect(f["samples"] == REPEATS, f"{where}: {f['samples']} samples")
            out.expect(
                f["empty_median_ns"] >= f["back_to_back_min_ns"],
                f"{where}: an empty workload's median reads less than two timestamps",
            )
            out.expect(f["empty_max_ns"] < PLAUSIBLE_NS, f"{where}: {f['empty_max_ns']} ns")
        check = ctx.validation(ARGS, timing=mode)
        out.expect(
            check["rc"] == 0 and check["messages"] == 0,
            f"{mode}: under validation rc {check['rc']}, {check['messages']} messages: "
            f"{check['tail']}",
        )
        modes[mode] = {"families": families, "validation_messages": check["messages"]}
    out.data["devices"] = {
        ctx.driver.device: {
            "device": ctx.driver.device,
            "driver_info": ctx.driver.driver_info,
            "cpu_device": ctx.driver.cpu_device,
            "modes": modes,
        }
    }


def _ns(value: float | None) -> str:
    from vkscope.analysis.describe import duration_text

    return duration_text(value) if value is not None else "—"


def section(part: Mapping[str, Any]) -> list[str]:
    """Its part of docs/bench/device.md: each device's floors, newest first."""
    from vkscope.capture.read.timer_floor import NEAR_FLOOR_FACTOR

    lines = [
        "What the layer's timestamps read around nothing, measured by the layer itself as timing "
        f"starts ({REPEATS} repeats of each; docs/timing.md, the timer's floor), on each device "
        f"the check ran on. The floor is an empty workload's median; GPU times within "
        f"{NEAR_FLOOR_FACTOR}x it are marked near the floor, and each time's uncertainty is the "
        "largest empty workload (at least one period).",
    ]
    for block in newest_first(part):
        lines += [
            *block_heading(block),
            "| mode | family | period | back to back: min / median / max "
            "| empty workload: min / median / max | validation messages |",
            "| --- | ---: | ---: | ---: | ---: | ---: |",
        ]
        for mode, found in block["modes"].items():
            for f in found["families"]:
                if f["reason"]:
                    lines.append(
                        f"| {mode} | {f['family']} | | not measured: {f['reason']} | | "
                        f"{found['validation_messages']} |"
                    )
                    continue
                b2b = " / ".join(_ns(f[f"back_to_back_{s}_ns"]) for s in ("min", "median", "max"))
                empty = " / ".join(_ns(f[f"empty_{s}_ns"]) for s in ("min", "median", "max"))
                lines.append(
                    f"| {mode} | {f['family']} | {_ns(f['period_ns'])} | {b2b} | {empty} | "
                    f"{found['validation_messages']} |"
                )
    return lines
