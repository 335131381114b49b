"""Pipeline statistics around every workload (docs/counters.md), checked on what the layer sends:
the workload program's scenarios have statistics known in advance (G groups of L invocations
count G*L compute invocations; a triangle list of V vertices V input-assembly vertices and V/3
primitives; a full-screen pass at WxH at least W*H fragment invocations), in every timing mode;
every hard case is counted right or carries its reason; the validation layer below vkscope sees
nothing wrong."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from harness import protocol
from harness.driver import driver_lacks, verdicts
from harness.env import layer_env, run
from harness.timeline import DEVICE, Capture, Receiver
from harness.timing import Runner, Timed, instances, make_runner, scenario_ran

pytestmark = pytest.mark.vulkan

COUNTERS_CODE = protocol.CODES["COUNTERS"]
REASONS = set(protocol.DEFINITION["enums"]["counters_reason"]["values"])
STATISTICS = {name for name in protocol.DEFINITION["enums"]["pipeline_statistic"]["bits"]}
# What vkscope collects: every statistic but task and mesh shader invocations.
COLLECTED = STATISTICS - {"task_shader_invocations", "mesh_shader_invocations"}
TIMING_MODES = ("off", "none", "queue", "full")
TARGET = 64  # the scenarios' render target is 64 x 64 (workloads/src/raster.h)
DRAWS = 8  # vkscope-workload's default --draws
VERTICES_PER_DRAW = 6  # each draw is a rectangle of two triangles (a triangle list)


@pytest.fixture
def counted(layer_dir: Path, workload: Path) -> Iterator[Runner]:
    receivers: list[Receiver] = []
    yield make_runner(layer_dir, workload, receivers)
    for r in receivers:
        r.close()


def values(t: Timed) -> dict[str, Any]:
    found = t.fields.get("counters")
    return dict(found) if isinstance(found, dict) else {}


def reason(t: Timed) -> str | None:
    found = t.fields.get("counters_reason")
    return str(found) if found is not None else None


def settings(mode: str) -> dict[str, str]:
    chosen = {"counters": "pipeline_statistics"}
    if mode != "off":
        chosen["timing"] = mode
    return chosen


def announced(capture: Capture) -> dict[int, set[str]]:
    """Per queue id, the counters its family announced (COUNTERS)."""
    families = {m.payload["family"]: {c["name"] for c in m.payload["counters"]}
                for m in capture.of(COUNTERS_CODE)}  # fmt: skip
    (device,) = capture.of(DEVICE)
    return {q["id"]: families[q["family"]] for q in device.payload["queues"]}


def check_every_instance(items: list[Timed], capture: Capture) -> None:
    """Every instance has the values its queue family announced, or none and a reason; never
    both, never neither."""
    per_queue = announced(capture)
    for t in items:
        assert "counters" in t.fields, t.fields
        if t.fields["counters"] is None:
            assert reason(t) in REASONS, t.fields
        else:
            assert reason(t) is None, t.fields
            assert set(values(t)) == per_queue[t.submit.payload["queue"]], t.fields
            assert all(isinstance(v, int) and v >= 0 for v in values(t).values()), t.fields


def test_the_device_announces_what_each_queue_family_counts(counted: Runner) -> None:
    res, capture = counted("--scenario", "compute", counters="pipeline_statistics")
    scenario_ran(res, "compute")
    announced = capture.of(COUNTERS_CODE)
    assert announced, "no COUNTERS message"
    # lavapipe: one family with graphics and compute, which counts every collected statistic.
    by_family = {m.payload["family"]: m.payload for m in announced}
    assert sorted(by_family) == list(range(len(announced)))
    family = by_family[0]
    assert family["source"] == "pipeline_statistics"
    assert {c["name"] for c in family["counters"]} == COLLECTED
    assert "reason" not in family


@pytest.mark.parametrize("mode", TIMING_MODES)
def test_compute_dispatches_count_groups_times_invocations(counted: Runner, mode: str) -> None:
    res, capture = counted("--scenario", "compute", "--frames", "2", **settings(mode))
    scenario_ran(res, "compute")
    items = list(instances(capture))
    check_every_instance(items, capture)
    dispatches = [t for t in items if t.fields["type"] == "dispatch"]
    assert len(dispatches) == 2 * 5, [t.fields for t in dispatches]
    for t in dispatches:
        counts = values(t)
        assert counts, t.fields
        # The indirect dispatch's groups come in its annex; every dispatch knows its invocations.
        assert t.fields["invocations"] is not None, t.fields
        assert counts["compute_shader_invocations"] == t.fields["invocations"], t.fields
        assert counts["fragment_shader_invocations"] == 0, t.fields
        assert counts["input_assembly_vertices"] == 0, t.fields
    # 16, 64 and 256 groups, the indirect 8 x 2 groups and the 12 of vkCmdDispatchBase, of 64.
    counted_first = sorted(values(t)["compute_shader_invocations"] for t in dispatches[:5])
    assert counted_first == sorted(g * 64 for g in (16, 64, 256, 8 * 2, 12))
    if mode != "off":
        assert all(t.ok for t in dispatches), [t.fields for t in dispatches]


@pytest.mark.parametrize("mode", TIMING_MODES)
def test_render_passes_count_their_vertices_primitives_and_fragments(
    counted: Runner, mode: str
) -> None:
    res, capture = counted("--scenario", "renderpass", "--frames", "2", **settings(mode))
    scenario_ran(res, "renderpass")
    items = list(instances(capture))
    check_every_instance(items, capture)
    passes = [t for t in items if t.fields["type"] == "renderpass"]
    assert len(passes) == 4
    for t in passes:
        counts = values(t)
        assert counts, t.fields
        draws = t.fields["draws"]
        if t.fields["api"] == "vkCmdBeginRenderPass":
            # DRAWS rectangles of two triangles each.
            assert draws == DRAWS
            vertices = VERTICES_PER_DRAW * DRAWS
        else:
            # The same, then a full-screen triangle in the second subpass.
            assert draws == DRAWS + 1
            vertices = VERTICES_PER_DRAW * DRAWS + 3
            assert counts["fragment_shader_invocations"] >= TARGET * TARGET, t.fields
        assert counts["input_assembly_vertices"] == vertices, t.fields
        assert counts["input_assembly_primitives"] == vertices // 3, t.fields
        assert counts["vertex_shader_invocations"] >= vertices // 2, t.fields
        assert counts["fragment_shader_invocations"] > 0, t.fields
        assert counts["compute_shader_invocations"] == 0, t.fields


@pytest.mark.parametrize("mode", TIMING_MODES)
def test_every_workload_of_every_scenario_is_counted_or_says_why(
    counted: Runner, mode: str
) -> None:
    res, capture = counted("--all", "--frames", "2", **settings(mode))
    assert res.returncode == 0, res.stdout + res.stderr
    verdicts(res.stdout)
    items = list(instances(capture))
    assert len(items) > 50
    check_every_instance(items, capture)
    for t in items:
        counts = values(t)
        if counts and t.fields["type"] == "dispatch" and t.fields.get("invocations") is not None:
            assert counts["compute_shader_invocations"] == t.fields["invocations"], t.fields
        if counts and t.fields["type"] == "renderpass":
            # Triangle lists everywhere: three vertices a primitive.
            vertices = counts["input_assembly_vertices"]
            assert vertices == 3 * counts["input_assembly_primitives"], t.fields
            # Each draw is a rectangle (6 vertices) or a full-screen triangle (3).
            assert vertices >= 3 * (t.fields["draws"] or 0) > 0, t.fields
    # The hard cases the scenarios hold, and nothing else, go without values.
    explained = {reason(t) for t in items if t.fields["counters"] is None}
    expected = {"split_render_pass", "secondary_twice", "application_query_active"}
    if driver_lacks("inherited_queries"):
        expected.add("secondary_without_inherited_queries")
    assert explained == expected


def scenario_items(counted: Runner, name: str, **extra: str) -> list[Timed]:
    res, capture = counted("--scenario", name, "--frames", "2", **settings("queue"), **extra)
    scenario_ran(res, name)
    items = list(instances(capture))
    check_every_instance(items, capture)
    return items


def test_a_render_pass_of_secondaries_is_counted_where_queries_are_inherited(
    counted: Runner,
) -> None:
    # The render pass's draws are all in secondaries, so the query must stay active across
    # vkCmdExecuteCommands: with inheritedQueries (which vkscope enables where the device has it)
    # the pass is counted; without it (lavapipe) it says why.
    items = scenario_items(counted, "secondary")
    (passes, dispatches) = (
        [t for t in items if t.fields["type"] == kind] for kind in ("renderpass", "dispatch")
    )
    assert len(passes) == 2 and len(dispatches) == 2
    if driver_lacks("inherited_queries"):
        assert {reason(t) for t in passes} == {"secondary_without_inherited_queries"}
    else:
        for t in passes:
            counts = values(t)
            assert counts, t.fields
            vertices = counts["input_assembly_vertices"]
            assert vertices == 3 * counts["input_assembly_primitives"] > 0, t.fields
            assert vertices >= 3 * (t.fields["draws"] or 0) > 0, t.fields
            assert counts["fragment_shader_invocations"] > 0, t.fields
    # A dispatch recorded in a secondary is counted there, where its query begins and ends.
    assert [values(t)["compute_shader_invocations"] for t in dispatches] == [4 * 64, 4 * 64]


def test_a_secondary_executed_twice_is_not_counted_once(counted: Runner) -> None:
    items = scenario_items(counted, "indirect_draw")
    twice = [t for t in items if reason(t) == "secondary_twice"]
    # Its dispatch ran twice on one query: the values left would be one run's, not both.
    assert twice and all(t.fields["type"] == "dispatch" for t in twice)
    assert all(t.fields["counters"] is None for t in twice)


def test_the_applications_own_statistics_query_is_left_alone(counted: Runner) -> None:
    # The scenario checks its own query's count (256 compute invocations): it passing under
    # vkscope shows the layer's queries did not disturb it.
    items = scenario_items(counted, "app_statistics")
    dispatches = [t for t in items if t.fields["type"] == "dispatch"]
    assert len(dispatches) == 4
    for inside, outside in zip(dispatches[::2], dispatches[1::2], strict=True):
        assert reason(inside) == "application_query_active", inside.fields
        assert values(outside)["compute_shader_invocations"] == 2 * 64, outside.fields


def test_a_split_render_pass_says_so_and_a_whole_one_is_counted(counted: Runner) -> None:
    items = scenario_items(counted, "dynamic_rendering")
    passes = [t for t in items if t.fields["type"] == "renderpass"]
    split = [t for t in passes if t.fields.get("split")]
    whole = [t for t in passes if not t.fields.get("split")]
    assert split and whole
    assert {reason(t) for t in split} == {"split_render_pass"}
    for t in whole:
        assert values(t)["input_assembly_vertices"] == VERTICES_PER_DRAW * t.fields["draws"]


def test_a_multiview_render_pass_counts_every_view(counted: Runner) -> None:
    # The query spans the whole instance, so its values are the sum over both views, however
    # the driver splits the work among them.
    items = scenario_items(counted, "multiview")
    passes = [t for t in items if t.fields["type"] == "renderpass"]
    assert len(passes) == 2
    for t in passes:
        counts = values(t)
        assert counts, t.fields
        vertices = counts["input_assembly_vertices"]
        assert vertices % (VERTICES_PER_DRAW * DRAWS) == 0 and vertices > 0, t.fields
        # The rectangles cover part of the target in each of the two views.
        assert counts["fragment_shader_invocations"] > 0, t.fields


def test_only_selected_frames_are_counted(counted: Runner) -> None:
    # compute submits once a frame: with frame_submits=1 each submission is a frame.
    res, capture = counted(
        "--scenario", "compute", "--frames", "5",
        counters="pipeline_statistics", frame_submits="1", frames="1,3",
    )  # fmt: skip
    scenario_ran(res, "compute")
    items = list(instances(capture))
    check_every_instance(items, capture)
    assert items and all(values(t) for t in items if t.fields["type"] == "dispatch")
    assert {t.submit.payload["frame"] for t in items} == {1, 3}


def test_a_single_statistic_can_be_chosen(counted: Runner) -> None:
    res, capture = counted(
        "--scenario", "compute", counters="pipeline_statistics.compute_shader_invocations"
    )
    scenario_ran(res, "compute")
    for m in capture.of(COUNTERS_CODE):  # one family on lavapipe; more on other devices
        names = [c["name"] for c in m.payload["counters"]]
        assert names in ([], ["compute_shader_invocations"]), m.payload
    dispatches = [t for t in instances(capture) if t.fields["type"] == "dispatch"]
    assert dispatches
    for t in dispatches:
        assert values(t) == {"compute_shader_invocations": t.fields["invocations"]}


@pytest.mark.parametrize("timing", ["off", "queue"])
def test_validation_below_vkscope_sees_nothing_wrong(
    layer_dir: Path, workload: Path, timing: str
) -> None:
    # vkscope above the validation layer: every query, reset and copy it injects is validated.
    env = layer_env(layer_dir, enable=False, **settings(timing))
    res = run([workload, "--all", "--frames", "2", "--validation", "above"], env)
    assert res.returncode == 0, res.stdout + res.stderr
    assert "validation messages: 0" in res.stdout + res.stderr


def test_task_and_mesh_shader_invocations_are_counted_where_the_device_can(
    counted: Runner, layer_dir: Path, workload: Path
) -> None:
    # The mesh_shader scenario enables task and mesh shaders but not meshShaderQueries: vkscope
    # enables those where the device has them, and the pass counts both kinds of invocation.
    lacks = driver_lacks("mesh_shader")
    res, capture = counted("--scenario", "mesh_shader", "--frames", "2", **settings("queue"))
    if lacks:
        assert res.returncode == 0 and "SKIP mesh_shader" in res.stdout, res.stdout + res.stderr
        pytest.skip(f"the driver has no mesh shaders ({lacks})")
    scenario_ran(res, "mesh_shader")
    items = list(instances(capture))
    check_every_instance(items, capture)
    passes = [t for t in items if t.fields["type"] == "renderpass"]
    assert len(passes) == 2
    mesh_names = {"task_shader_invocations", "mesh_shader_invocations"}
    for t in passes:
        counts = values(t)
        assert counts["fragment_shader_invocations"] >= TARGET * TARGET, t.fields
        if driver_lacks("mesh_shader_queries"):
            assert not mesh_names & set(counts), t.fields
        else:
            # 4 task workgroups of 32 invocations, each launching 2 mesh workgroups of 32: the
            # specification leaves it to the implementation whether a workgroup counts once or
            # per invocation, so only the lower bounds are certain.
            assert counts["task_shader_invocations"] >= 4, t.fields
            assert counts["mesh_shader_invocations"] >= 8, t.fields
    env = layer_env(layer_dir, enable=False, **settings("queue"))
    res = run(
        [workload, "--scenario", "mesh_shader", "--frames", "2", "--validation", "above"], env
    )
    assert res.returncode == 0, res.stdout + res.stderr
    assert "validation messages: 0" in res.stdout + res.stderr
