"""`vkscope run --frames host`: nothing is captured until vkscope asks the layer, over the capture
connection, for the next N frames (after --capture-after seconds, or on SIGUSR1)."""

from __future__ import annotations

import signal
import subprocess
import time
from pathlib import Path

import pytest

from harness.env import base_env, run, vkscope_cli
from vkscope.capture import open_capture

# Frames short enough to run a few thousand in seconds on lavapipe, long enough to still be
# running when the request comes.
APP = ("--scenario", "compute", "--compute-iterations", "16", "--frames", "3000")


def captured_frames(cap: Path) -> tuple[list[int], list[int], set[int]]:
    with open_capture(cap) as capture:
        frames = capture.frames()
        submitted = {frame for _, _, frame in capture.submitted_frames() if frame is not None}
    return [f.number for f in frames if f.captured], [f.number for f in frames], submitted


@pytest.mark.vulkan
def test_capture_after_asks_for_consecutive_frames(workload: Path, tmp_path: Path) -> None:
    cap = tmp_path / "host.vkscope"
    cmd = [vkscope_cli(), "run", "-o", str(cap), "--no-trace", "--no-html", "--no-report"]
    cmd += ["--frames", "host", "--capture-after", "0.3", "--capture-frames", "3"]
    cmd += ["-s", "frame_submits=1", "--", str(workload), *APP]
    res = run(cmd, base_env(), cwd=tmp_path)
    assert res.returncode == 0, res.stderr
    captured, every, submitted = captured_frames(cap)
    assert len(every) == 3000
    assert len(captured) == 3, captured
    assert captured == list(range(captured[0], captured[0] + 3))
    assert captured[0] > 0  # not from the start: after 0.3 s
    # Only the captured frames were sent.
    assert submitted == set(captured)


@pytest.mark.vulkan
def test_sigusr1_asks_again(workload: Path, tmp_path: Path) -> None:
    cap = tmp_path / "signal.vkscope"
    cmd = [vkscope_cli(), "run", "-o", str(cap), "--no-trace", "--no-html", "--no-report"]
    cmd += ["--frames", "host", "--capture-frames", "2", "-s", "frame_submits=1"]
    cmd += ["--", str(workload), *APP[:-1], "6000"]
    proc = subprocess.Popen(cmd, env=base_env(), cwd=tmp_path, stderr=subprocess.PIPE, text=True)
    # vkscope takes the signal once its capture exists (its supervisor is active by then); on a
    # loaded machine, starting Python alone can take more than a second.
    deadline = time.monotonic() + 60
    while not cap.exists() and proc.poll() is None and time.monotonic() < deadline:
        time.sleep(0.05)
    time.sleep(1.0)
    proc.send_signal(signal.SIGUSR1)
    time.sleep(0.5)
    proc.send_signal(signal.SIGUSR1)
    _, err = proc.communicate(timeout=300)
    assert proc.returncode == 0, err
    captured, _, submitted = captured_frames(cap)
    # Two requests of two frames each, half a second apart: two separate pairs.
    assert len(captured) == 4, captured
    first, second = captured[:2], captured[2:]
    assert first[1] == first[0] + 1 and second[1] == second[0] + 1
    assert second[0] > first[1] + 1
    assert submitted == set(captured)


def test_trigger_options_need_frames_host(workload: Path, tmp_path: Path) -> None:
    for extra, why in (
        (["--capture-after", "1"], "--capture-after and --capture-frames need --frames host"),
        (["--frames", "host", "--capture-frames", "0"], "--capture-frames must be at least 1"),
        (["--frames", "host", "--no-capture"], "--frames host needs a capture"),
    ):
        res = run([vkscope_cli(), "run", *extra, "--", str(workload)], base_env(), cwd=tmp_path)
        assert res.returncode == 2, res.stderr
        assert why in res.stderr
        assert not list(tmp_path.iterdir())
