"""VK_KHR_performance_query counters around every workload (docs/counters.md), on the test
fixture that implements the extension from lavapipe's own queries, with the Khronos validation
layer between vkscope and the fixture: each captured frame collects one pass of the selection,
every value equals what pipeline statistics count for the same workload, the passes of a
selection cover it over consecutive frames, and the validation layer sees nothing wrong."""

from __future__ import annotations

from pathlib import Path

import pytest
from support.performance_query import (
    ALL,
    COUNTERS_CODE,
    FIXTURE,
    TRUTH,
    Runner,
    announced,
    by_frame,
    validation_errors,
    values,
)

from harness import protocol
from harness.env import layer_env, run
from harness.timeline import Receiver
from harness.timing import instances, scenario_ran
from vkscope.settings import LAYER_NAME

pytestmark = pytest.mark.vulkan


@pytest.mark.parametrize("chosen", [ALL[3:4], ALL[3:5], ALL])
def test_dispatches_get_every_selected_counter_over_the_passes(
    khr: Runner, chosen: list[str]
) -> None:
    frames = 2 * len(chosen)
    res, capture = khr(
        "--scenario", "compute", "--frames", str(frames),
        counters=",".join(f"khr:{c}" for c in chosen), frame_submits="1",
    )  # fmt: skip
    scenario_ran(res, "compute")
    assert validation_errors(res) == []
    counters = announced(capture)
    assert list(counters) == chosen
    # Each counter its own pass, in selection order.
    assert [counters[c]["pass_index"] for c in chosen] == list(range(len(chosen)))
    assert counters[chosen[0]]["storage"] == "uint64"
    dispatches = [t for t in instances(capture) if t.fields["type"] == "dispatch"]
    assert len(dispatches) == 5 * frames
    seen: set[str] = set()
    for frame, items in by_frame(dispatches).items():
        want = chosen[frame % len(chosen)]
        for t in items:
            got = values(t)
            assert set(got) == {want}, t.fields
            assert t.fields["counters_pass"] == frame % len(chosen), t.fields
            if want == "compute_invocations":
                assert got[want] == t.fields["invocations"], t.fields
            elif want == "elapsed_ns":
                assert got[want] >= 0
            seen.add(want)
    assert seen == set(chosen)


def test_values_equal_pipeline_statistics_of_the_same_workloads(khr: Runner) -> None:
    # Render passes: the fixture's counters are pipeline statistics underneath, so vkscope's
    # pipeline statistics run of the same scenario is the truth for each pass instance. A
    # RENDER_PASS-scope counter's queries begin outside the instance, as validation checks.
    chosen = [*ALL[:3], "render_pass_fragments"]
    res, capture = khr(
        "--scenario", "renderpass", "--frames", "4", counters=",".join(f"khr:{c}" for c in chosen)
    )
    scenario_ran(res, "renderpass")
    assert validation_errors(res) == []
    res2, truth = khr(
        "--scenario", "renderpass", "--frames", "4", validation="none",
        counters="pipeline_statistics",
    )  # fmt: skip
    scenario_ran(res2, "renderpass")
    expected = {
        (t.submit.payload["frame"], t.fields.get("label_path"),
         t.fields["api"]): values(t)
        for t in instances(truth) if t.fields["type"] == "renderpass"
    }  # fmt: skip
    passes = [t for t in instances(capture) if t.fields["type"] == "renderpass"]
    assert passes
    for t in passes:
        key = (t.submit.payload["frame"], t.fields.get("label_path"), t.fields["api"])
        got = values(t)
        assert len(got) == 1, t.fields
        ((name, value),) = got.items()
        assert value == expected[key][TRUTH[name]], (t.fields, expected[key])


def test_a_command_buffer_submitted_again_is_counted_each_time(khr: Runner) -> None:
    # Recorded once, submitted three times a frame: its pool is reset before every submission.
    res, capture = khr(
        "--scenario", "reusable", "--frames", "2", counters="khr:compute_invocations"
    )
    scenario_ran(res, "reusable")
    assert validation_errors(res) == []
    dispatches = [t for t in instances(capture) if t.fields["type"] == "dispatch"]
    assert len(dispatches) == 6
    assert all(values(t) == {"compute_invocations": 64} for t in dispatches), [
        t.fields for t in dispatches
    ]


@pytest.mark.parametrize("chosen", [ALL[3:5], ALL])
def test_a_command_buffer_recorded_once_gets_every_counter_over_its_submissions(
    khr: Runner, chosen: list[str]
) -> None:
    # Recorded once (no ONE_TIME_SUBMIT), submitted three times a frame: its queries are the
    # whole selection's, one pass per submission; the submission that runs the last pass of a
    # set carries every value, the earlier ones of the set say so, and a set the run ended
    # before completing says that.
    res, capture = khr(
        "--scenario", "reusable", "--frames", "3", counters=",".join(f"khr:{c}" for c in chosen)
    )
    scenario_ran(res, "reusable")
    assert validation_errors(res) == []
    dispatches = sorted(
        (t for t in instances(capture) if t.fields["type"] == "dispatch"),
        key=lambda t: int(t.submit.sequence or 0),
    )
    assert len(dispatches) == 9
    passes = len(chosen)
    complete = len(dispatches) // passes
    for n, t in enumerate(dispatches):
        if n < complete * passes and n % passes == passes - 1:
            got = values(t)
            assert set(got) == set(chosen), t.fields
            assert got["compute_invocations"] == 64, t.fields
            assert t.fields["counters_submissions"] == passes, t.fields
            assert t.fields.get("counters_reason") is None, t.fields
        elif n < complete * passes:
            assert t.fields["counters_reason"] == "passes_on_later_submission", t.fields
        else:
            assert t.fields["counters_reason"] == "pass_cycle_incomplete", t.fields


@pytest.mark.parametrize("scenario", ["compute", "reusable"])
def test_the_fixture_is_clean_under_the_validation_layer_below_it(
    khr: Runner, scenario: str
) -> None:
    # The fixture stands in for a driver: the validation layer below it checks what it does with
    # the driver's queries. Two counters are two passes; `reusable` submits command buffers
    # recorded once, so that one query runs a second pass without a reset in between.
    res, capture = khr(
        "--scenario", scenario, "--frames", "4", validation="below", frame_submits="1",
        counters="khr:compute_invocations,khr:ia_vertices",
    )  # fmt: skip
    scenario_ran(res, scenario)
    assert validation_errors(res) == []
    counted = [values(t) for t in instances(capture) if t.fields["type"] == "dispatch"]
    assert any(c.get("compute_invocations") for c in counted), counted


@pytest.mark.window_system
def test_vkcube_with_the_fixture_is_clean_under_the_validation_layer_below_it(
    khr: Runner,
) -> None:
    # vkcube: an instance of API 1.0, command buffers recorded once and submitted every frame.
    res, capture = khr(
        "--c", "8", validation="below", program=["xvfb-run", "-a", "vkcube"],
        counters="khr:fragment_invocations,khr:ia_vertices",
        extra_env={"VK_LOADER_DEBUG": "layer"},  # says which layers it loaded, in which order
    )  # fmt: skip
    assert res.returncode == 0, res.stdout + res.stderr
    assert validation_errors(res) == []
    cubes = [values(t) for t in instances(capture) if t.fields["type"] == "renderpass"]
    assert any(c.get("ia_vertices") == 36 for c in cubes), cubes


def test_a_command_pool_recording_anew_without_one_time_submit_gets_a_pass_per_frame(
    khr: Runner,
) -> None:
    # No ONE_TIME_SUBMIT, yet every command buffer is recorded anew each frame: the first
    # frame's recordings take the whole selection and are recorded again before their second
    # pass (they say so); from then on the command pool's recordings take their frame's pass.
    chosen = ALL[3:5]
    res, capture = khr(
        "--scenario", "compute", "--frames", "5", "--no-one-time-submit",
        counters=",".join(f"khr:{c}" for c in chosen), frame_submits="1",
    )  # fmt: skip
    scenario_ran(res, "compute")
    assert validation_errors(res) == []
    dispatches = by_frame([t for t in instances(capture) if t.fields["type"] == "dispatch"])
    assert sorted(dispatches) == [0, 1, 2, 3, 4]
    assert {t.fields["counters_reason"] for t in dispatches[0]} == {"pass_cycle_incomplete"}
    for frame in range(1, 5):
        for t in dispatches[frame]:
            assert t.fields["counters_pass"] == frame % 2, t.fields
            got = values(t)
            assert set(got) == {chosen[frame % 2]}, t.fields
            if "compute_invocations" in got:
                assert got["compute_invocations"] == t.fields["invocations"], t.fields


def test_a_busy_profiling_lock_turns_khr_counters_off_and_says_so(
    layer_dir: Path, workload: Path
) -> None:
    receiver = Receiver()
    try:
        env = layer_env(layer_dir, host=receiver.address, counters="khr:compute_invocations")
        env["VK_ADD_LAYER_PATH"] = f"{layer_dir}:{layer_dir / 'testing'}"
        env["VK_INSTANCE_LAYERS"] = f"{LAYER_NAME}:{FIXTURE}"
        env["VKSCOPE_TEST_PERFORMANCE_QUERY_LOCK"] = "busy"
        res = run([workload, "--scenario", "compute", "--frames", "1"], env)
        capture = receiver.finish()
    finally:
        receiver.close()
    scenario_ran(res, "compute")
    families = [m.payload for m in capture.of(COUNTERS_CODE)]
    assert families and {f["reason"] for f in families} == {"profiling_lock_unavailable"}
    assert "profiling lock could not be taken" in res.stderr


REASONS = set(protocol.DEFINITION["enums"]["counters_reason"]["values"])


@pytest.mark.parametrize("chosen", [ALL[:1], ALL[2:4], ALL, ["render_pass_fragments"]])
def test_every_workload_of_every_scenario_is_counted_or_says_why(
    khr: Runner, chosen: list[str]
) -> None:
    res, capture = khr(
        "--all", "--frames", str(len(chosen)), counters=",".join(f"khr:{c}" for c in chosen)
    )
    assert res.returncode == 0, res.stdout + res.stderr
    assert validation_errors(res) == []
    items = list(instances(capture))
    assert len(items) > 50
    explained = set()
    for t in items:
        if t.fields["counters"] is None:
            assert t.fields["counters_reason"] in REASONS, t.fields
            explained.add(t.fields["counters_reason"])
            continue
        got = values(t)
        if "counters_submissions" in t.fields:
            # A command buffer recorded once (reusable): the whole selection over its submissions.
            assert set(got) == set(chosen) - {"render_pass_fragments"}, t.fields
        else:
            assert len(got) == 1 and set(got) <= set(chosen), t.fields
        if "compute_invocations" in got and t.fields.get("invocations") is not None:
            assert got["compute_invocations"] == t.fields["invocations"], t.fields
        if t.fields["type"] == "dispatch":
            assert got.get("ia_vertices", 0) == got.get("fragment_invocations", 0) == 0
    # What cannot be counted, and nothing else, goes without values.
    assert explained <= {
        "secondary_command_buffer",
        "secondary_without_inherited_queries",
        "split_render_pass",
        "outside_frame",
        # The earlier submissions of a command buffer recorded once, and its last set's, which
        # the run ended before completing.
        "passes_on_later_submission",
        "pass_cycle_incomplete",
    }, explained


def test_workloads_in_secondaries_and_split_render_passes_say_why(khr: Runner) -> None:
    for scenario, reason in (
        ("secondary", {"secondary_command_buffer", "secondary_without_inherited_queries"}),
        ("dynamic_rendering", {"split_render_pass"}),
    ):
        res, capture = khr("--scenario", scenario, "--frames", "1", counters="khr:ia_vertices")
        scenario_ran(res, scenario)
        assert validation_errors(res) == []
        items = list(instances(capture))
        without = {t.fields["counters_reason"] for t in items if t.fields["counters"] is None}
        assert without and without <= reason, (scenario, without)
        if scenario == "dynamic_rendering":
            whole = [t for t in items if t.fields["type"] == "renderpass" and t.fields["counters"]]
            assert whole
            for t in whole:
                assert values(t)["ia_vertices"] == 6 * t.fields["draws"], t.fields


@pytest.mark.parametrize("storage", ["int32", "int64", "uint32", "uint64", "float32", "float64"])
def test_every_storage_type_reaches_the_host_with_its_value(khr: Runner, storage: str) -> None:
    # The fixture stores its counters as `storage`; vkscope reads each as its storage says.
    stored = {"VKSCOPE_TEST_PERFORMANCE_QUERY_STORAGE": storage}
    res, capture = khr(
        "--scenario", "compute", "--frames", "1", validation="none",
        counters="khr:compute_invocations", extra_env=stored,
    )  # fmt: skip
    scenario_ran(res, "compute")
    assert announced(capture)["compute_invocations"]["storage"] == storage
    dispatches = [t for t in instances(capture) if t.fields["type"] == "dispatch"]
    assert dispatches
    for t in dispatches:
        value = values(t)["compute_invocations"]
        # Integers stay integers; a float's integral value may travel as an integer.
        assert storage.startswith("float") or isinstance(value, int), t.fields
        assert value == t.fields["invocations"], t.fields
