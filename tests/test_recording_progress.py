"""`vkscope run` shows a progress bar while the capture is finalized, on a terminal only."""

from __future__ import annotations

import io
from pathlib import Path

from rich.console import Console

from vkscope.capture import CaptureServer
from vkscope.capture.write.client import Stream, connect
from vkscope.recording import finalize


def capture_server(tmp_path: Path, name: str) -> CaptureServer:
    server = CaptureServer(tmp_path / f"{name}.vkscope", [f"unix:{tmp_path / name}.sock"])
    server.start()
    s = Stream()
    s.hello()
    s.device()
    s.workload(1, "dispatch", groups=[1, 1, 1])
    s.submit([(1, 0)])
    s.goodbye()
    with connect(server.addresses[0]) as sock:
        sock.sendall(s.data())
    return server


def test_a_terminal_sees_the_finalizing_progress(tmp_path: Path) -> None:
    out = io.StringIO()
    console = Console(file=out, force_terminal=True, width=100)
    summary = finalize(capture_server(tmp_path, "tty"), console)
    assert summary.status == "complete"
    assert "finalizing the capture" in out.getvalue()


def test_no_progress_bar_off_a_terminal(tmp_path: Path) -> None:
    out = io.StringIO()
    console = Console(file=out, force_terminal=False)
    summary = finalize(capture_server(tmp_path, "pipe"), console)
    assert summary.status == "complete" and out.getvalue() == ""
