"""Captures made under a cost budget the way the layer sends them (docs/budget.md): a DEVICE with
its budget, frames whose instances are timed or left out by the budget, and each FRAME with what
the budget's controller saw."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from support.captures import capture_from
from vkscope.capture.write.client import Stream
from vkscope.protocol import TIMING_REASON

BUDGET_REASON = TIMING_REASON["budget"]
FRAME_NS = 1_000_000


@dataclass(frozen=True)
class Item:
    """One workload instance of a frame: its type and labels, and its GPU time when the budget
    measured it (None: left out)."""

    type: str
    labels: tuple[str, ...] = ()
    gpu_ns: int | None = None
    reason: str | None = None  # why it is untimed, when the budget did not leave it out


def budget_stream(frames: Sequence[Sequence[Item]], percent: float = 5.0) -> Stream:
    """One queue; frame f's items in one submit; each FRAME says what the frame measured."""
    s = Stream()
    s.hello(process="game", pid=777)
    s.device(1, clock="clock_monotonic", max_deviation_ns=10, budget=percent)
    stacks: dict[tuple[str, ...], int] = {(): 0}
    tag = 100
    for f, items in enumerate(frames):
        listed: list[tuple[int, int]] = []
        tags: list[int] = []
        for item in items:
            if item.labels not in stacks:
                stacks[item.labels] = len(stacks)
                s.labels(stacks[item.labels], list(item.labels))
            tag += 1
            s.workload(tag, item.type, api="vkCmdDispatch")
            listed.append((tag, stacks[item.labels]))
            tags.append(tag)
        begin = f * FRAME_NS
        submit = s.submit(listed, frame=f, cpu_ns=begin)
        at = begin + 10_000
        for t, item in zip(tags, items, strict=True):
            if item.gpu_ns is not None:
                s.timing(submit, t, at, at + item.gpu_ns)
                at += item.gpu_ns
            else:
                reason = item.reason or BUDGET_REASON
                s.timing(submit, t, None, None, status="untimed", reason=reason,
                         serialization="queue" if item.reason else "none")  # fmt: skip
        measured = sum(i.gpu_ns is not None for i in items)
        record: dict[str, Any] = {
            "state": "measured" if measured else "baseline", "workloads": len(items),
            "measured": measured, "interval_ns": FRAME_NS if f else 0, "sample": f > 0,
            "base_ns": 900_000, "unit_ns": 1500.0, "frame_ns": 0.0, "rotation": 4,
            "next": 1, "recording_ns": 300_000 + 1_000 * f, "recording_share": 0.25 * f,
        }  # fmt: skip
        s.frame(f, cpu_ns=begin + FRAME_NS - 1, budget=record)
    s.goodbye()
    return s


def budget_capture(
    tmp_path: Path, frames: Sequence[Sequence[Item]], percent: float = 5.0, name: str = "b"
) -> Path:
    return capture_from(tmp_path, budget_stream(frames, percent), name=f"{name}.vkscope")


def rotating(frames: int, workloads: int = 4, us: int = 10) -> list[list[Item]]:
    """A repeating frame of `workloads` dispatches, each measured in every `workloads`-th frame
    (frame f measures dispatch f mod workloads), dispatch k taking k+1 times `us`."""
    return [
        [Item("dispatch", ("Frame",), (k + 1) * us * 1000 if k == f % workloads else None)
         for k in range(workloads)]
        for f in range(frames)
    ]  # fmt: skip
