"""Helpers for the timing tests: run vkscope-workload with timing on and read back each workload
instance's timing fields (docs/protocol.md, "Timing") from what the layer sent."""

from __future__ import annotations

import statistics
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from subprocess import CompletedProcess
from typing import Any

import pytest

from harness import protocol
from harness.driver import verdicts
from harness.env import layer_env, run
from harness.timeline import DEVICE, GOODBYE, SUBMIT_DONE, Capture, Message, Receiver

TIMING_FIELDS = {"gpu_begin_ns", "gpu_end_ns", "serialization", "timing"}
_REASON_TEXTS = protocol.DEFINITION["enums"]["timing_reason"]["values"]
# A caveat on an ok time, never a reason for having none.
NOT_SERIALIZED = _REASON_TEXTS["not_serialized"]
# Every reason the layer gives for an instance without times.
REASONS = set(_REASON_TEXTS.values()) - {NOT_SERIALIZED}

Runner = Callable[..., tuple[CompletedProcess[str], Capture]]


@dataclass(frozen=True)
class Timed:
    """One submitted workload instance with what the layer said about its GPU time."""

    submit: Message
    tag: int
    fields: dict[str, Any]

    @property
    def ok(self) -> bool:
        return bool(self.fields.get("timing") == "ok")

    @property
    def begin(self) -> int:
        return int(self.fields["gpu_begin_ns"])

    @property
    def end(self) -> int:
        return int(self.fields["gpu_end_ns"])

    @property
    def duration(self) -> int:
        return self.end - self.begin


def instances(capture: Capture) -> Iterator[Timed]:
    for s, tag, fields, _ in capture.submitted():
        yield Timed(s, tag, fields)


def submit_done(capture: Capture) -> dict[int, int]:
    out = {}
    for m in capture.of(SUBMIT_DONE):
        assert m.sequence is not None
        out[m.sequence] = int(m.payload["cpu_ns"])
    return out


def clock(capture: Capture) -> dict[str, Any]:
    (device,) = capture.of(DEVICE)
    return dict(device.payload["clock"])


def query_pools(capture: Capture) -> int:
    return int(capture.of(GOODBYE)[-1].payload["query_pools"])


def scenario_ran(res: CompletedProcess[str], name: str) -> None:
    """Asserts the scenario verified its results. It may have skipped only where the driver,
    probed without vkscope, lacks what it needs: then the test skips for that reason."""
    assert res.returncode == 0, res.stdout + res.stderr
    skipped = verdicts(res.stdout, [name])
    if skipped:
        pytest.skip(f"the driver lacks what {name} needs (probed without vkscope): {skipped[name]}")


def increments_ratio(frames: list[dict[int, float]]) -> float:
    """How many times the cost added from 64 to 256 groups is the cost added from 16 to 64, per
    frame, the median over the frames. On lavapipe a dispatch's cost is the machine's CPU time:
    whole frames ran 14% faster than others of the same run here, and within a frame one
    dispatch now and then, so costs are compared inside a frame, and the median keeps one
    disturbed frame from moving the result. Increments cancel what a dispatch costs besides its
    groups (the driver's and the layer's fixed part)."""
    ratios = []
    for cost in frames:
        assert 0 < cost[16] < cost[64] < cost[256], frames
        ratios.append((cost[256] - cost[64]) / (cost[64] - cost[16]))
    return statistics.median(ratios)


def make_runner(layer_dir: Path, workload: Path, receivers: list[Receiver]) -> Runner:
    def run_workload(*args: str, **settings: str) -> tuple[CompletedProcess[str], Capture]:
        receiver = Receiver()
        receivers.append(receiver)
        env = layer_env(layer_dir, host=receiver.address, **settings)
        res = run([workload, *args], env)
        return res, receiver.finish()

    return run_workload
