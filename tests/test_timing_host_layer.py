"""End to end: the real layer with timing on, into the real capture server, then the report.

Runs vkscope-workload under the installed layer with VK_VKSCOPE_TIMING=queue and checks what
the host made of the timing it sent. A layer that sends no GPU times fails it.
"""

from __future__ import annotations

import csv
import io
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from vkscope import paths
from vkscope.capture import CaptureServer, open_capture
from vkscope.settings import LAYER_NAME

pytestmark = pytest.mark.vulkan


def run_timed(tmp_path: Path, mode: str, *args: str) -> Path:
    layer, workload = paths.layer_dir(), paths.workload_program()
    capture = tmp_path / f"{mode}.vkscope"
    with CaptureServer(capture, [f"unix:{tmp_path / (mode + '.sock')}"]) as server:
        env = {k: v for k, v in os.environ.items() if not k.startswith("VK_")}
        env |= {
            "VK_ADD_LAYER_PATH": str(layer),
            "VK_INSTANCE_LAYERS": LAYER_NAME,
            "VK_VKSCOPE_TIMING": mode,
            "VK_VKSCOPE_HOST": server.addresses[0],
            "VK_VKSCOPE_FRAME_SUBMITS": "2",
            "LP_NUM_THREADS": "0",
        }
        res = subprocess.run(
            [str(workload), *args], env=env, capture_output=True, text=True, timeout=300
        )
        assert res.returncode == 0, res.stdout + res.stderr
        assert server.stop().status == "complete"
    with open_capture(capture) as cap:
        _, sent = cap.execute("SELECT 1 FROM workload_instances WHERE timing IS NOT NULL LIMIT 1")
        assert next(sent, None) is not None, "the layer sent no GPU time"
    return capture


def report(*args: str | Path) -> str:
    res = subprocess.run(
        [sys.executable, "-m", "vkscope", "report", *map(str, args)],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert res.returncode == 0, res.stderr
    return res.stdout


def test_the_layers_timing_reaches_the_report(tmp_path: Path) -> None:
    capture = run_timed(tmp_path, "queue", "--scenario", "compute", "--frames", "3")
    with open_capture(capture) as cap:
        assert cap.diagnostics() == []
        assert {d.clock_domain for d in cap.devices()} <= {"clock_monotonic", "device"}
        rows = list(cap.workloads())
        timed = [w for w in rows if w.timing == "ok"]
        assert timed, "no workload was timed"
        assert {w.serialization for w in timed} == {"queue"}
        for w in rows:
            if w.timing == "ok":
                assert w.gpu_ns is not None and w.gpu_ns >= 0
            else:
                assert (w.gpu_begin_ns, w.gpu_end_ns) == (None, None) and w.timing_reason
        by_queue: dict[tuple[int | None, int | None], list[int]] = {}
        for w in timed:
            by_queue.setdefault((w.frame, w.queue), []).append(w.gpu_begin_ns or 0)
        for begins in by_queue.values():  # serialized: a queue's workloads run in order
            assert begins == sorted(begins)
        calibrated = {d.id for d in cap.devices() if d.clock_domain == "clock_monotonic"}
        for w in timed:
            if w.device in calibrated and w.submit_cpu_complete_ns is not None:
                assert w.gpu_end_ns is not None and w.gpu_end_ns <= w.submit_cpu_complete_ns
    doc = json.loads(report(capture, "--format", "json"))
    assert sum(1 for w in doc["workloads"] if w["gpu_ns"] is not None) == len(timed)
    assert sum(f["gpu_sum_ns"] for f in doc["frames"]) == sum(w.gpu_ns or 0 for w in timed)
    rows_csv = list(csv.DictReader(io.StringIO(report(capture, "--format", "csv"))))
    assert len(rows_csv) == len(rows)
    assert "GPU time" in report(capture)
