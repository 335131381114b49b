"""The `frames` setting with timing (docs/timing.md): only captured frames are sent and carry
timings, outside them nothing is written into command buffers, and a command buffer recorded outside
a captured frame but submitted inside one is described and says it is untimed."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from harness.env import layer_env, run
from harness.timeline import ANNEX, FRAME, Receiver
from harness.timing import (
    SUBMIT_DONE,
    Runner,
    instances,
    make_runner,
    query_pools,
    scenario_ran,
    submit_done,
)

pytestmark = pytest.mark.vulkan


@pytest.fixture
def timed(layer_dir: Path, workload: Path) -> Iterator[Runner]:
    receivers: list[Receiver] = []
    yield make_runner(layer_dir, workload, receivers)
    for r in receivers:
        r.close()


def test_only_selected_frames_are_timed(timed: Runner) -> None:
    # compute submits once a frame: with frame_submits=1 each submission is a frame.
    res, capture = timed(
        "--scenario", "compute", "--frames", "5", timing="queue", frame_submits="1", frames="1,3"
    )
    scenario_ran(res, "compute")
    assert [(m.tag, m.payload["captured"]) for m in capture.of(FRAME)] == [
        (0, False),
        (1, True),
        (2, False),
        (3, True),
        (4, False),
    ]
    by_frame: dict[int, list[dict[str, object]]] = {}
    for t in instances(capture):
        by_frame.setdefault(t.submit.payload["frame"], []).append(t.fields)
    # Outside captured frames nothing is sent but the FRAME itself.
    assert sorted(by_frame) == [1, 3]
    # Each captured frame runs the whole scenario: the same workloads, all of them sent.
    assert [f["api"] for f in by_frame[1]] == [f["api"] for f in by_frame[3]]
    for fields in by_frame.values():
        assert sum(f["type"] == "dispatch" for f in fields) >= 4, fields
        assert all(f["timing"] == "ok" for f in fields), fields
        assert all("tagged" not in f for f in fields), fields  # sent only when false
    done = submit_done(capture)
    assert {s.payload["frame"] for s in capture.submits if s.sequence in done} == {1, 3}
    # The indirect dispatch's parameters are copied and reported in every captured frame.
    groups = {
        t.submit.payload["frame"]: t.fields["groups"]
        for t in instances(capture)
        if t.fields["api"] == "vkCmdDispatchIndirect"
    }
    assert groups == {1: [8, 2, 1], 3: [8, 2, 1]}


def test_outside_captured_frames_nothing_is_injected_or_sent(timed: Runner) -> None:
    res, capture = timed(
        "--all", "--frames", "3", timing="full", frame_submits="1", frames="1000000-"
    )
    assert res.returncode == 0, res.stdout + res.stderr
    frames = capture.of(FRAME)
    assert len(frames) > 3
    assert all(m.payload["captured"] is False for m in frames)
    # Not one timer query pool was ever created, so no timestamp was written ...
    assert query_pools(capture) == 0
    # ... and nothing was described, sent, copied or timed.
    assert not capture.submits
    assert not list(instances(capture))
    assert not capture.of(SUBMIT_DONE)
    assert not capture.of(ANNEX)


def test_recorded_before_a_captured_frame_is_untimed(timed: Runner) -> None:
    # reusable records its command buffer once, after its setup's one submission (frame 0 with
    # frame_submits=1), in frame 1; frames 2 and later are captured and submit it.
    res, capture = timed(
        "--scenario", "reusable", "--frames", "2", timing="queue", frame_submits="1", frames="2-"
    )
    scenario_ran(res, "reusable")
    dispatches = [t for t in instances(capture) if t.fields["type"] == "dispatch"]
    # Its first submission, in frame 1, is not captured; the five in frames 2-6 are.
    assert [t.submit.payload["frame"] for t in dispatches] == list(range(2, 7))
    # Logged while recorded, described once a captured frame submitted it: one workload, five
    # instances.
    assert len({t.tag for t in dispatches}) == 1
    for t in dispatches:
        assert t.fields["api"] == "vkCmdDispatch"
        assert t.fields["groups"] is not None
        assert t.fields["tagged"] is False
        assert t.fields["timing"] == "untimed"
        assert t.fields["timing_reason"] == "recorded outside a captured frame"
        assert t.fields["gpu_begin_ns"] is None
        assert t.fields["serialization"] == "none"  # nothing was written into it


def test_trigger_file_switches_capture(timed: Runner, tmp_path: Path) -> None:
    trigger = tmp_path / "capture-now"
    args = ("--scenario", "compute", "--frames", "2")
    settings = {"timing": "queue", "frame_submits": "1", "frames": f"trigger:{trigger}"}
    res, absent = timed(*args, **settings)
    scenario_ran(res, "compute")
    assert not absent.of(SUBMIT_DONE)
    trigger.touch()
    res, present = timed(*args, **settings)
    scenario_ran(res, "compute")
    assert [m.payload["captured"] for m in present.of(FRAME)] == [True, True]
    assert all(t.fields["timing"] == "ok" for t in instances(present))


@pytest.mark.parametrize(
    ("frames", "reported"),
    [
        # A bad selection is reported and every frame captured.
        (
            "every:0",
            ("setting frames='every:0' ignored", "every:N needs a frame count N of at least 1"),
        ),
        # A host selection with no host would capture nothing: said so.
        ("host", ("setting frames='host' with no host to ask for frames",)),
    ],
)
def test_a_selection_that_cannot_work_is_reported(
    layer_dir: Path, workload: Path, tmp_path: Path, frames: str, reported: tuple[str, ...]
) -> None:
    log = tmp_path / "layer.log"
    env = layer_env(layer_dir, timing="queue", frames=frames, log_file=str(log))
    res = run([workload, "--scenario", "buffer_transfer"], env)
    assert res.returncode == 0, res.stderr
    text = log.read_text()
    for line in reported:
        assert line in text
