"""`vkscope run --counters khr:...` and `vkscope counters` with VK_KHR_performance_query, on the
test fixture stacked below vkscope through VK_INSTANCE_LAYERS: the selection is checked before
the application starts (one message, exit 2), `--frames` is widened to whole pass cycles, the
capture holds every pass and the host joins them per workload, and a profiling lock that cannot
be taken is recorded in the capture."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from support.performance_query import fixture_env, vkscope_run

from harness.env import base_env, run, vkscope_cli
from vkscope.capture.read.reader import open_capture
from vkscope.counters.performance_query import split, widen_frames

pytestmark = pytest.mark.vulkan


def test_selection_text_and_frame_cycles() -> None:
    assert split("khr:ia_vertices,elapsed_ns").text == "khr:ia_vertices,khr:elapsed_ns"
    assert split("khr:All").keys == ("all",)
    assert split("pipeline_statistics,khr:a").others == ("pipeline_statistics",)
    assert split("khr:a,fragment_shader_invocations").others == ("fragment_shader_invocations",)
    assert widen_frames("3", 2) == "2-3"
    assert widen_frames("1-4,9-", 5) == "0-4,5-"
    assert widen_frames("every:3", 2) == "every:3"
    assert widen_frames("7", 1) == "7"


def test_every_pass_is_captured_and_joined_per_workload(
    layer_dir: Path, workload: Path, tmp_path: Path
) -> None:
    code, out = vkscope_run(
        fixture_env(layer_dir), tmp_path,
        "--counters", "khr:compute_invocations,elapsed_ns", "--frames", "3",
        "-s", "frame_submits=1", "--", str(workload), "--scenario", "compute", "--frames", "6",
    )  # fmt: skip
    assert code == 0, out
    assert "widened to 2-3" in out
    with open_capture(tmp_path / "app.vkscope") as capture:
        items = list(capture.workloads())  # each instance's counters joined over its passes
    assert {i.frame for i in items} == {2, 3}
    dispatches = [i for i in items if i.type == "dispatch"]
    assert len(dispatches) == 10
    assert {i.frame: i.metadata["counters_pass"] for i in dispatches} == {2: 0, 3: 1}
    for i in dispatches:
        assert i.counters_missing == {}, i.metadata
        assert i.counters["compute_invocations"] == i.metadata["invocations"]
        assert i.counters["elapsed_ns"] > 0


def test_a_cycle_cut_short_says_which_counters_are_missing(
    layer_dir: Path, workload: Path, tmp_path: Path
) -> None:
    # Three frames of a two-pass selection: frame 2 starts a cycle that frame 3 never ends.
    code, out = vkscope_run(
        fixture_env(layer_dir), tmp_path,
        "--counters", "khr:compute_invocations,elapsed_ns", "-s", "frame_submits=1",
        "--", str(workload), "--scenario", "compute", "--frames", "3",
    )  # fmt: skip
    assert code == 0, out
    with open_capture(tmp_path / "app.vkscope") as capture:
        items = [i for i in capture.workloads() if i.type == "dispatch"]
    last = [i for i in items if i.frame == 2]
    assert last
    for i in last:
        assert set(i.counters) == {"compute_invocations"}
        assert i.counters_missing == {"elapsed_ns": "frame 3 (pass 1) was not captured"}


@pytest.mark.parametrize(
    ("counters", "extra", "message"),
    [
        ("khr:no_such_counter", [], "no queue family here has the performance counter"),
        ("khr:all", ["-s", "counter_passes=2"], "needs 6 passes"),
        ("pipeline_statistics,khr:ia_vertices", [], "cannot be collected in one run"),
    ],
)
def test_a_selection_that_cannot_be_collected_is_refused_before_launch(
    layer_dir: Path, tmp_path: Path, counters: str, extra: list[str], message: str
) -> None:
    code, out = vkscope_run(
        fixture_env(layer_dir), tmp_path, "--counters", counters, *extra, "--", "true"
    )
    assert code == 2, out
    assert message in out
    assert "Traceback" not in out
    assert not (tmp_path / "app.vkscope").exists()


def test_without_the_extension_khr_counters_are_refused(tmp_path: Path) -> None:
    code, out = vkscope_run(base_env(), tmp_path, "--counters", "khr:ia_vertices", "--", "true")
    assert code == 2, out
    assert "no device here has VK_KHR_performance_query" in out


def test_a_profiling_lock_that_cannot_be_taken_is_in_the_capture(
    layer_dir: Path, workload: Path, tmp_path: Path
) -> None:
    env = fixture_env(layer_dir, VKSCOPE_TEST_PERFORMANCE_QUERY_LOCK="busy")
    code, out = vkscope_run(
        env, tmp_path, "--counters", "khr:compute_invocations", "--",
        str(workload), "--scenario", "compute", "--frames", "1",
    )  # fmt: skip
    assert code == 0, out
    assert "profiling lock could not be taken" in out
    with open_capture(tmp_path / "app.vkscope") as capture:
        _, rows = capture.execute("SELECT DISTINCT source, reason FROM device_counters")
        assert list(rows) == [("performance_query", "profiling_lock_unavailable")]


def test_counters_lists_khr_counters_and_the_passes_of_a_selection(layer_dir: Path) -> None:
    res = run(
        [vkscope_cli(), "counters", "--json", "--select", "khr:ia_vertices,elapsed_ns"],
        fixture_env(layer_dir),
    )
    assert res.returncode == 0, res.stderr
    (device,) = json.loads(res.stdout)
    (family,) = device["khr"]
    names = {c["name"]: c for c in family["counters"]}
    assert names["elapsed_ns"]["unit"] == "nanoseconds"
    assert names["elapsed_ns"]["concurrently_impacted"] is True
    assert names["ia_vertices"]["scope"] == "command"
    assert family["passes"] == 2 and family["frames_per_set"] == 2
