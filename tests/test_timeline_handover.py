"""The timeline alone interprets submitted streams on a thread of the layer's own (the
interpretation worker), while the application goes on: it resets and re-records its command
buffers as soon as their fence signals, and begins and ends queue labels between submissions.
Over many frames, every workload still arrives once per submission with its label stack.
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest

from harness.env import layer_env, run
from harness.timeline import Receiver

pytestmark = pytest.mark.vulkan

FRAMES = 40


def capture_of(layer_dir: Path, workload: Path, *args: str) -> Receiver:
    receiver = Receiver()
    env = layer_env(layer_dir, timeline="true", host=receiver.address)
    res = run([workload, *args], env)
    assert res.returncode == 0, res.stdout + res.stderr
    return receiver


def test_re_recorded_command_buffers_keep_their_labels_every_frame(
    layer_dir: Path, workload: Path
) -> None:
    receiver = capture_of(layer_dir, workload, "--scenario", "labels", "--frames", str(FRAMES))
    try:
        capture = receiver.finish()
    finally:
        receiver.close()
    frame = ["labels.queue", "labels.frame"]
    one_frame = [
        ("vkCmdFillBuffer", [*frame, "labels.transfers"]),
        ("vkCmdUpdateBuffer", [*frame, "labels.transfers"]),
        ("vkCmdDispatch", [*frame, "labels.compute", "labels.compute.dispatch"]),
        ("vkCmdCopyBuffer", [*frame, "labels.cross"]),
    ]
    stacks = [(w["api"], stack) for _, _, w, stack in capture.submitted()]
    assert stacks == one_frame * FRAMES


def test_game_scale_frames_each_report_every_workload(layer_dir: Path, workload: Path) -> None:
    workloads = 22
    receiver = capture_of(
        layer_dir, workload, "--scenario", "game_scale", "--workloads", str(workloads),
        "--frames", str(FRAMES), "--submits", "3", "--record-thread",
    )  # fmt: skip
    try:
        capture = receiver.finish()
    finally:
        receiver.close()
    submitted = list(capture.submitted())
    assert len(submitted) == workloads * FRAMES
    kinds = Counter(w["type"] for _, _, w, _ in submitted)
    assert kinds == {
        "renderpass": 5 * FRAMES,
        "dispatch": 10 * FRAMES,
        "buffer_transfer": 5 * FRAMES,
        "image_transfer": 2 * FRAMES,
    }
    # Each submission's workloads are its own: no tag is listed by two submissions.
    tags = [tag for m in capture.submits for tag, _ in m.payload["workloads"]]
    assert len(tags) == len(set(tags)) == workloads * FRAMES
