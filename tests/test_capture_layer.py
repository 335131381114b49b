"""The real layer into the real capture server: what the timeline sends is stored whole.

Runs vkscope-workload under the vkscope layer (timeline on, host = the server's socket) and reads
the capture back. Uses the installed package's layer and workload program (conftest's fixtures):
a missing build is a failure, not a skip.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest
from rich.console import Console

from vkscope.analysis.report import render_report
from vkscope.capture import CaptureServer, open_capture
from vkscope.settings import LAYER_NAME

pytestmark = pytest.mark.vulkan


def run_under_layer(layer: Path, workload: Path, tmp_path: Path, *args: str) -> Path:
    capture = tmp_path / "layer.vkscope"
    with CaptureServer(capture, [f"unix:{tmp_path / 'host.sock'}"]) as server:
        env = {k: v for k, v in os.environ.items() if not k.startswith("VK_")}
        env |= {
            "VK_ADD_LAYER_PATH": str(layer),
            "VK_INSTANCE_LAYERS": LAYER_NAME,
            "VK_VKSCOPE_TIMELINE": "true",
            "VK_VKSCOPE_HOST": server.addresses[0],
            "VK_VKSCOPE_FRAME_SUBMITS": "2",
            "LP_NUM_THREADS": "0",
        }
        res = subprocess.run(
            [str(workload), *args], env=env, capture_output=True, text=True, timeout=300
        )
        assert res.returncode == 0, res.stdout + res.stderr
        summary = server.stop()
    assert summary.status == "complete"
    return capture


def test_compute_and_labels_scenarios_are_captured_whole(
    layer_dir: Path, workload: Path, tmp_path: Path
) -> None:
    args = ("--scenario", "compute", "--scenario", "labels")
    capture = run_under_layer(layer_dir, workload, tmp_path, *args)
    with open_capture(capture) as cap:
        assert cap.workload_count() > 0, "the layer sent no workloads"
        assert (cap.meta.bad_messages, cap.meta.skipped_messages, cap.meta.dropped) == (0, 0, 0)
        assert cap.diagnostics() == []
        assert cap.meta.process_name == "vkscope-workload"
        assert len(cap.frames()) >= 1
        rows = list(cap.workloads())
        assert {w.type for w in rows} >= {"dispatch", "buffer_transfer"}
        assert all(w.type is not None and w.api for w in rows)
        for w in rows:
            md = w.metadata
            if w.type == "dispatch" and None not in (md["groups"], md["local_size"]):
                gx, gy, gz = md["groups"]
                lx, ly, lz = md["local_size"]
                assert md["invocations"] == gx * gy * gz * lx * ly * lz
        labelled = [w for w in rows if len(w.labels) >= 2]  # the labels scenario nests them
        assert labelled
        assert [w.id for w in rows] == sorted(w.id for w in rows)
        console = Console(width=200, record=True, color_system=None)
        render_report(cap, console, everything=True)  # every workload, with its labels
        assert labelled[0].label_path in console.export_text()
