"""Under `vkscope run` the submitted streams are interpreted on a thread of the layer's own: what
the application does to its command buffers and queues once the submit call returns must not
change what the capture says about the submission it made."""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path

import pytest

from harness.env import base_env, run, vkscope_cli
from vkscope.capture import open_capture

FRAMES = 40


@pytest.mark.vulkan
def test_game_frames_keep_their_own_queue_label_when_pools_are_reset_at_once(
    tmp_path: Path, workload: Path
) -> None:
    # The game scenario resets its command pools and records the same command buffers again as
    # soon as its fences signal, and wraps each frame's submits in the queue label "Frame N" (a
    # new name every frame, ended and begun between the submits of its two queues). Whatever the
    # interpretation has not reached when the application re-records must still be reported as
    # it was submitted: every frame the same workloads, under its own frame's label.
    cap = tmp_path / "game.vkscope"
    args: list[str | Path] = [
        vkscope_cli(), "run", "-o", cap, "--no-report", "--no-trace", "--no-html",
        "-s", "frame_submits=2", "--", workload, "--scenario", "game",
        "--frames", str(FRAMES), "--numbered-frames",
    ]  # fmt: skip
    res = run(args, base_env(), cwd=tmp_path)
    assert res.returncode == 0, res.stdout + res.stderr
    by_frame: dict[int, list[tuple[str, ...]]] = defaultdict(list)
    with open_capture(cap) as capture:
        for w in capture.workloads():
            assert w.frame is not None, w
            by_frame[w.frame].append(w.labels)
    assert len(by_frame) == FRAMES, sorted(by_frame)
    names = []
    shapes = set()
    for frame in sorted(by_frame):
        paths = by_frame[frame]
        outer = {p[0] if p else None for p in paths}
        assert len(outer) == 1, (frame, outer)
        names.append(outer.pop())
        shapes.add(tuple(p[1:] for p in paths))
    assert names == [f"Frame {n}" for n in range(FRAMES)]
    assert len(shapes) == 1, "a frame's workloads or their pass labels differ from another's"
    assert len(next(iter(shapes))) > 1
