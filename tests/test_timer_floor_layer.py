"""The timer's floor end to end on lavapipe: the real layer measures it as timing starts, the real
capture server stores it, and every GPU time of the capture carries it; a frame in which the
application compiled a pipeline is a warm-up frame (docs/timing.md)."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from vkscope import paths
from vkscope.capture import CaptureServer, open_capture, warmup_frames
from vkscope.capture.read.timer_floor import NEAR_FLOOR_FACTOR
from vkscope.settings import LAYER_NAME

pytestmark = pytest.mark.vulkan

REPEATS = 32  # the layer's kFloorRepeats


def captured(tmp_path: Path, mode: str, *args: str, **settings: str) -> Path:
    """vkscope-workload under the layer with timing `mode` (and other settings), into a real
    capture server."""
    capture = tmp_path / f"{mode}.vkscope"
    with CaptureServer(capture, [f"unix:{tmp_path / (mode + '.sock')}"]) as server:
        env = {k: v for k, v in os.environ.items() if not k.startswith("VK_")}
        env |= {
            "VK_ADD_LAYER_PATH": str(paths.layer_dir()),
            "VK_INSTANCE_LAYERS": LAYER_NAME,
            "VK_VKSCOPE_TIMING": mode,
            "VK_VKSCOPE_HOST": server.addresses[0],
            "LP_NUM_THREADS": "0",
            **{f"VK_VKSCOPE_{k.upper()}": v for k, v in settings.items()},
        }
        res = subprocess.run(
            [str(paths.workload_program()), *args],
            env=env, capture_output=True, text=True, timeout=300,
        )  # fmt: skip
        assert res.returncode == 0, res.stdout + res.stderr
        assert server.stop().status == "complete"
    return capture


@pytest.mark.parametrize("mode", ["none", "queue"])
def test_the_floor_is_measured_stored_and_carried_by_every_time(tmp_path: Path, mode: str) -> None:
    path = captured(tmp_path, mode, "--scenario", "compute", "--frames", "3")
    with open_capture(path) as cap:
        floors = cap.timer_floors()
        families = {q.family for q in cap.queues()}
        workloads = [w for w in cap.workloads() if w.gpu_ns is not None]
    assert {f.family for f in floors} == families
    for f in floors:
        assert f.reason is None and f.samples == REPEATS, f
        assert f.back_to_back is not None and f.empty is not None
        assert f.period_ns is not None and f.period_ns > 0
        assert 0 <= f.back_to_back.min_ns <= f.back_to_back.median_ns <= f.back_to_back.max_ns
        assert 0 <= f.empty.min_ns <= f.empty.median_ns <= f.empty.max_ns < 1_000_000_000
        if mode == "queue":  # a barrier and a timestamp read no less than a timestamp alone
            assert f.empty.median_ns >= f.back_to_back.min_ns
        assert f.floor_ns == max(f.empty.median_ns, f.period_ns)
    (floor,) = floors
    assert workloads
    for w in workloads:
        assert w.gpu_ns is not None and floor.near_ns is not None
        assert w.gpu_ns_uncertainty == floor.uncertainty_ns
        assert floor.floor_ns is not None
        assert w.near_floor == (w.gpu_ns <= NEAR_FLOOR_FACTOR * floor.floor_ns)


def test_a_frame_that_compiled_a_pipeline_is_a_warm_up_frame(tmp_path: Path) -> None:
    # lavapipe has no frame boundaries: each of the compute scenario's submits (one a frame)
    # ends a frame.
    args = ("--scenario", "compute", "--frames", "6", "--compile-at-frame", "3")
    path = captured(tmp_path, "queue", *args, frame_submits="1")
    with open_capture(path) as cap:
        compiled = {f.number: (f.pipelines, f.shader_modules) for f in cap.frames()}
        warm = warmup_frames(cap)
        kept = warmup_frames(cap, 0)
        device = cap.devices()[0].id
    # The compute scenario compiles as it is set up, before frame 0 ends; frame 3 compiles one
    # pipeline of one shader module.
    assert compiled[0][0] and compiled[0][1]
    assert compiled[3] == (1, 1)
    assert all(compiled[n] == (0, 0) for n in (1, 2, 4))
    assert warm.frames == {
        (1, device, 0): "first frame",
        (1, device, 3): "compiled: 1 pipeline and 1 shader module created",
    }
    assert kept.frames == {}
