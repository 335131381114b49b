"""Helpers for the timing tests: run vkscope-workload with timing on and read back each workload
instance's timing fields (docs/protocol.md, "Timing") from what the layer sent."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from subprocess import CompletedProcess
from typing import Any

import pytest

from support.env import layer_env, run
from support.timeline import DEVICE, GOODBYE, Capture, Message, Receiver

SUBMIT_DONE = 0x83
TIMING_FIELDS = {"gpu_begin_ns", "gpu_end_ns", "serialization", "timing"}
# Every reason the layer gives for an instance without times
# (layer/src/instruments/timing/mode.hpp).
REASONS = {
    "recorded outside a captured frame",
    "queue family has no timestamps",
    "command pool not seen created",
    "no query pool available",
    "device has no timeline semaphores",
    "render pass split over command buffers not all timed",
    "render pass not ended in this submission",
    "secondary executed several times",
    "command buffer executed again before its results were copied",
    "batch takes no layer command buffers",
    "result buffer full",
    "no host-visible memory for results",
    "timestamp not available",
    "queue cannot copy query results",
}
NOT_SERIALIZED = "not serialized: waits on a semaphore value not yet signalled"

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
    """Asserts the scenario verified its results, or skips the test with the scenario's reason."""
    for line in res.stdout.splitlines():
        if line.startswith(f"SKIP {name}:"):
            pytest.skip(line.split(":", 1)[1].strip())
    assert res.returncode == 0, res.stdout + res.stderr
    assert f"PASS {name}" in res.stdout, res.stdout


def make_runner(layer_dir: Path, workload: Path, receivers: list[Receiver]) -> Runner:
    def run_workload(*args: str, **settings: str) -> tuple[CompletedProcess[str], Capture]:
        receiver = Receiver()
        receivers.append(receiver)
        env = layer_env(layer_dir, host=receiver.address, **settings)
        res = run([workload, *args], env)
        return res, receiver.finish()

    return run_workload
