"""The workload program's game_scale scenario (bench/workload_cost.py's frame): it times its own
frames and checks its results alone, with its floor (the program's own queries around each
workload) and under vkscope, which sees every workload of every frame, times and counts each of
them, and leaves nothing for the validation layer below it to report."""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import pytest

from harness.env import base_env, layer_env, run
from harness.timeline import Receiver
from harness.timing import Runner, instances, make_runner, scenario_ran

pytestmark = pytest.mark.vulkan

SUMMARY = re.compile(
    r"^workload cost: workloads (\d+) submits (\d+) floor (\S+) record_thread (\S+) frames (\d+) "
    r"frame_us ([0-9.]+) submit_us ([0-9.]+) record_us ([0-9.]+)( gpu_us ([0-9.]+))?$",
    re.MULTILINE,
)
# A clear, four times (render pass, dispatch, dispatch, copy), a render pass, two dispatches, and
# the image and the data read back to the host.
WORKLOADS = 22
FRAMES = 3


@pytest.fixture
def captured(layer_dir: Path, workload: Path) -> Iterator[Runner]:
    receivers: list[Receiver] = []
    yield make_runner(layer_dir, workload, receivers)
    for r in receivers:
        r.close()


def game_scale(*extra: str, frames: int = FRAMES) -> list[str]:
    return ["--scenario", "game_scale", "--workloads", str(WORKLOADS), "--frames", str(frames),
            *extra]  # fmt: skip


@pytest.mark.parametrize("floor", ["none", "timestamps", "pipeline_statistics"])
def test_it_times_its_frames_and_checks_every_one(workload: Path, floor: str) -> None:
    res = run([workload, *game_scale("--floor", floor, "--time-frames", "1")], base_env())
    scenario_ran(res, "game_scale")
    found = SUMMARY.search(res.stdout)
    assert found, res.stdout
    assert found.group(1, 2, 3, 4, 5) == (str(WORKLOADS), "1", floor, "no", str(FRAMES - 1))
    frame, submit, record = (float(found.group(i)) for i in (6, 7, 8))
    assert frame > submit > 0 and record > 0
    # Its own timestamps give the GPU's span of the frame, which the frame contains.
    if floor == "timestamps":
        assert 0 < float(found.group(10)) < frame
    else:
        assert found.group(9) is None


@pytest.mark.parametrize("shape", [(), ("--record-thread",)], ids=["inline", "recording thread"])
def test_its_frame_log_has_every_frame_and_its_phases(
    workload: Path, tmp_path: Path, shape: tuple[str, ...]
) -> None:
    log = tmp_path / "frames.txt"
    res = run([workload, *game_scale("--frame-log", str(log), *shape, frames=4)], base_env())
    scenario_ran(res, "game_scale")
    header, *rows = log.read_text().splitlines()
    assert header.split() == ["frame", "record_us", "submit_us", "wait_us"]
    assert [int(r.split()[0]) for r in rows] == [0, 1, 2, 3]
    for r in rows:
        record, submit, wait = (float(v) for v in r.split()[1:])
        # Each phase took time: 22 workloads recorded, one submission, a fence waited for.
        assert record > 0 and submit > 0 and wait > 0, r


def test_a_frame_log_it_cannot_write_fails_before_the_first_frame(
    workload: Path, tmp_path: Path
) -> None:
    res = run([workload, *game_scale("--frame-log", str(tmp_path / "no" / "such" / "f"))],
              base_env())  # fmt: skip
    # A setup error (exit 4), before any frame ran: no summary line.
    assert res.returncode == 4, res.stdout + res.stderr
    assert "--frame-log: cannot write" in res.stderr
    assert not SUMMARY.search(res.stdout)


def test_its_options_are_checked(workload: Path) -> None:
    bad = run([workload, "--scenario", "game_scale", "--workloads", "3"], base_env())
    assert bad.returncode == 2
    assert "--workloads expects an integer in [4, 100000], got '3'" in bad.stderr
    bad = run([workload, "--scenario", "game_scale", "--floor", "queries"], base_env())
    assert bad.returncode == 2
    assert "--floor expects 'none', 'timestamps' or 'pipeline_statistics'" in bad.stderr


# How the frame is submitted and recorded, and how vkscope reads its queries: one-time recordings
# read in place (forced: a CPU device copies them by default), or copied out.
SHAPES = {
    "one submission": (),
    "three submissions, a recording thread": ("--submits", "3", "--record-thread"),
}
READS = {"copied": {}, "in place": {"timing_read": "in_place", "counters_read": "in_place"}}


@pytest.mark.parametrize("reads", READS)
@pytest.mark.parametrize("shape", SHAPES)
def test_every_workload_of_every_frame_is_timed_and_counted(
    captured: Runner, shape: str, reads: str
) -> None:
    res, capture = captured(
        *game_scale(*SHAPES[shape]), timing="queue", counters="pipeline_statistics",
        frame_submits="3" if "--submits" in SHAPES[shape] else "1", **READS[reads],
    )  # fmt: skip
    scenario_ran(res, "game_scale")
    items = list(instances(capture))
    assert len(items) == WORKLOADS * FRAMES
    kinds = Counter(t.fields["type"] for t in items[:WORKLOADS])
    assert kinds == {"renderpass": 5, "dispatch": 10, "buffer_transfer": 5, "image_transfer": 2}
    for t in items:
        assert t.ok, t.fields
        assert t.fields["serialization"] == "queue"
        counts = t.fields["counters"]
        assert counts is not None, t.fields
        if t.fields["type"] == "dispatch":
            assert counts["compute_shader_invocations"] == t.fields["invocations"] == 2 * 64
        elif t.fields["type"] == "renderpass":
            # Three rectangles of two triangles.
            assert t.fields["draws"] == 3
            assert counts["input_assembly_vertices"] == 18, t.fields
            assert counts["input_assembly_primitives"] == 6, t.fields
        else:
            assert counts["input_assembly_vertices"] == 0, t.fields
            assert counts["compute_shader_invocations"] == 0, t.fields


@pytest.mark.parametrize("floor", ["timestamps", "pipeline_statistics"])
def test_the_floor_is_clean_under_validation(workload: Path, floor: str) -> None:
    res = run([workload, *game_scale("--floor", floor, "--record-thread"), "--validation",
               "above"], base_env())  # fmt: skip
    assert res.returncode == 0, res.stdout + res.stderr
    assert "validation messages: 0" in res.stdout


@pytest.mark.parametrize(
    "settings",
    [{"timing": "queue", "counters": "pipeline_statistics"},
     {"timing": "queue", "timing_read": "in_place", "counters": "pipeline_statistics",
      "counters_read": "in_place"}],
    ids=["copied", "in place"],
)  # fmt: skip
def test_what_vkscope_adds_is_clean_under_validation(
    layer_dir: Path, workload: Path, settings: dict[str, str]
) -> None:
    # vkscope above the validation layer, both from the application's list.
    env = layer_env(layer_dir, enable=False, frame_submits="1", **settings)
    res = run([workload, *game_scale("--submits", "2"), "--validation", "above"], env)
    assert res.returncode == 0, res.stdout + res.stderr
    assert "validation messages: 0" in res.stdout


@pytest.mark.parametrize("reads", READS)
@pytest.mark.parametrize("counters", ["", "pipeline_statistics"])
def test_a_budgets_windows_are_clean_under_validation(
    layer_dir: Path, workload: Path, counters: str, reads: str
) -> None:
    # Past the budget's warmup and first baseline (12 frames), frames measure windows of their
    # workloads: starts written ahead after a workload left out, pools reset at a window's start
    # (read in place, a one-time recording's pools are reset on the host between frames instead).
    env = layer_env(layer_dir, enable=False, frame_submits="1", timing="queue", budget="30",
                    **({"counters": counters} if counters else {}), **READS[reads])  # fmt: skip
    res = run([workload, *game_scale(frames=30), "--validation", "above"], env)
    assert res.returncode == 0, res.stdout + res.stderr
    assert "validation messages: 0" in res.stdout
