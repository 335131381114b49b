"""The text report: what it says about each kind of workload, and that it fits the console."""

from __future__ import annotations

from pathlib import Path

import pytest
from rich.console import Console

from vkscope.analysis.report import render_report
from vkscope.capture import open_capture
from vkscope.capture.write.client import Stream
from vkscope.capture.write.store import CaptureStore, ingest_stream


def build(path: Path, *, goodbye: bool = True) -> Path:
    s = Stream()
    s.hello(process="demo", pid=99)
    s.device(1, "Test GPU", queues=2)
    s.labels(1, ["frame", "gbuffer"])
    s.labels(2, ["frame", "post", "bloom"])
    color = {"index": 0, "kind": "color", "format": "R8G8B8A8_UNORM", "samples": 1,
             "load": "clear", "store": "store", "resolve": False}  # fmt: skip
    depth = dict(color, index=1, kind="depth", format="D32_SFLOAT")
    s.workload(1, "renderpass", width=1920, height=1080, layers=1, draws=12,
               attachments=[color, color, depth])  # fmt: skip
    s.workload(2, "dispatch", groups=[8, 4, 1], local_size=[64, 1, 1], invocations=2048)
    s.workload(3, "dispatch", groups=None, local_size=[8, 8, 1], invocations=None)
    s.workload(4, "buffer_transfer", kind="copy", bytes=4096)
    s.workload(5, "image_transfer", kind="blit", pixels=2073600)
    s.workload(6, "trace_rays", width=640, height=480, depth=1)
    s.workload(7, "acceleration_structure", kind="build", count=3)
    s.workload(8, "mesh_magic", widgets=5)
    s.submit([(1, 1), (2, 2), (3, 2)], frame=0, queue=0)
    s.submit([(4, 0), (5, 0), (6, 0), (7, 0), (8, 0), (9, 0)], frame=0, queue=1)
    s.annex(1, 3, groups=[16, 16, 1], invocations=16384)
    s.frame(0)
    for frame in range(1, 4):
        s.submit([(2, 2)], frame=frame, queue=0)
    s.dropped(2)
    if goodbye:
        s.goodbye(dropped=2)
    store = CaptureStore(path)
    ingest_stream(store, "test", [s.data()])
    store.finalize()
    return path


def render(path: Path, width: int, **limits: int) -> str:
    console = Console(width=width, record=True, color_system=None, force_terminal=False)
    with open_capture(path) as cap:
        render_report(cap, console, everything=True, **limits)
    return console.export_text()


def test_report_says_what_each_workload_is(tmp_path: Path) -> None:
    text = render(build(tmp_path / "r.vkscope"), 140)
    for expected in (
        "complete",
        "demo (pid 99, goodbye)",
        "Test GPU",
        "12 executed",
        "2 messages dropped by the layer",
        "1920x1080, 12 draws, 3 attachments (2 color, 1 depth)",
        "8x4x1 groups of 64x1x1 = 2,048 invocations",
        "16x16x1 groups of 8x8x1 = 16,384 invocations",
        "copy 4.0 KiB",
        "blit 2,073,600 pixels",
        "640x480x1 rays",
        "build, 3 structures",
        "widgets=5",
        "frame/gbuffer",
        "frame/post/bloom",
        "Frame 0 · queue 0",
        "Frame 0 · queue 1",
        "Frame 3 · queue 0",
        "unknown",  # tag 9 was never described
    ):
        assert expected in text, expected
    assert text.index("Frame 0 · queue 0") < text.index("Frame 1 · queue 0")


@pytest.mark.parametrize("width", [60, 80, 200])
def test_report_fits_the_console(tmp_path: Path, width: int) -> None:
    text = render(build(tmp_path / "r.vkscope"), width)
    assert max(len(line) for line in text.splitlines()) <= width


def test_report_limits_and_incomplete_status(tmp_path: Path) -> None:
    text = render(build(tmp_path / "r.vkscope", goodbye=False), 120, max_frames=1,
                  max_workloads_per_queue=2)  # fmt: skip
    assert "incomplete: 1 connection(s) ended without GOODBYE" in text
    assert "4 more" in text  # queue 1 of frame 0 has six workloads
    assert "3 more frames not shown" in text
    assert "Frame 1" not in text


def test_report_of_an_empty_capture(tmp_path: Path) -> None:
    store = CaptureStore(tmp_path / "empty.vkscope")
    store.finalize()
    text = render(tmp_path / "empty.vkscope", 80)
    assert "incomplete" in text and "0 executed" in text
    assert "no application connected" in text
