"""For every workload scenario, the capture file holds exactly the workload instances the layer
described, in order, with their annexes merged: the same scenario is run once into the real
capture server (`vkscope run -o`) and once into the wire-level receiver of the timeline tests
(whose expectations per scenario are in test_timeline_scenarios.py), and the two must agree."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from harness.env import base_env, layer_env, run, vkscope_cli
from harness.timeline import Receiver
from vkscope.capture import open_capture

pytestmark = pytest.mark.vulkan

SCENARIOS = [
    "renderpass", "dynamic_rendering", "secondary", "multiview", "compute", "buffer_transfer",
    "image_transfer", "labels", "reusable", "multi_submit", "threads",
]  # fmt: skip


def _canonical(metadata: dict[str, Any]) -> str:
    return json.dumps(metadata, sort_keys=True)


@pytest.mark.parametrize("name", SCENARIOS)
def test_capture_holds_what_the_layer_sent(
    name: str, layer_dir: Path, workload: Path, tmp_path: Path
) -> None:
    args = ["--scenario", name, "--frames", "2", "--quiet"]
    cap = tmp_path / f"{name}.vkscope"
    res = run([vkscope_cli(), "run", "-o", cap, "--", workload, *args], base_env(), cwd=tmp_path)
    assert res.returncode == 0, res.stderr

    receiver = Receiver()
    try:
        env = layer_env(layer_dir, timeline="true", host=receiver.address)
        assert run([workload, *args], env).returncode == 0
        sent = receiver.finish()
    finally:
        receiver.close()
    expected = [
        (w["type"], w["api"], tuple(stack), submit.payload["frame"], _canonical(w))
        for submit, _, w, stack in sent.submitted()
    ]

    with open_capture(cap) as capture:
        assert capture.meta.status == "complete"
        held = [
            (w.type, w.api, w.labels, w.frame, _canonical(w.metadata)) for w in capture.workloads()
        ]
    assert held == expected
    assert len(held) > 0
