"""VK_KHR_performance_query counters of COMMAND_BUFFER scope (docs/counters.md, "Scopes"), on the
test fixture with the Khronos validation layer between vkscope and it: in a frame of their pass
each submitted command buffer is counted from its first command to its last and reported on its
own (COMMAND_BUFFER_COUNTERS, keyed by its SUBMIT), its value equal to the compute invocations
of its dispatches; the workloads of that frame say why they have no counters; a mixed selection
alternates frames of workload and command buffer passes; the host stores, joins and reports it."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from support.performance_query import (
    Runner,
    announced,
    fixture_env,
    validation_errors,
    values,
    vkscope_run,
)

from harness import protocol
from harness.env import run, vkscope_cli
from harness.timeline import Capture
from harness.timing import instances, scenario_ran
from vkscope.capture.read.reader import open_capture

pytestmark = pytest.mark.vulkan

CB_COUNTERS = protocol.CODES["COMMAND_BUFFER_COUNTERS"]
SUBMIT = protocol.CODES["SUBMIT"]
WHOLE = "command_buffer_invocations"


# The validation layer of these machines (1.3.239) reports VUID-vkCmdEndQuery-queryPool-03227
# ("the end of the query is not the last command") for every submission of a command buffer with
# a COMMAND_BUFFER-scope query, though vkscope's vkCmdEndQuery is its last command (the layer
# records it in vkEndCommandBuffer, right before the driver's): it reported it just the same with
# one, two or three commands recorded after the query's end, so no command buffer satisfies it.
# That message, and no other, is allowed where such queries ran.
END_NOT_LAST = "VUID-vkCmdEndQuery-queryPool-03227"


def other_validation_errors(res: Any, whole_queries: int) -> list[str]:
    found = validation_errors(res)
    ends = [m for m in found if END_NOT_LAST in m]
    assert (len(ends) > 0) == (whole_queries > 0), (len(ends), whole_queries)
    return [m for m in found if END_NOT_LAST not in m]


def truth(capture: Capture) -> dict[int, int | None]:
    """Per submitted command buffer (submitID): the compute invocations of its dispatches (None
    where one of them has no known count: an indirect dispatch whose parameters were not read)."""
    out: dict[int, int | None] = {
        m.sequence: 0 for m in capture.of(SUBMIT) if m.sequence is not None
    }
    for t in instances(capture):
        if t.fields["type"] == "dispatch":
            assert t.submit.sequence is not None
            known, count = out[t.submit.sequence], t.fields.get("invocations")
            out[t.submit.sequence] = None if known is None or count is None else known + count
    return out


def frames_of(capture: Capture) -> dict[int, int]:
    return {m.sequence: m.payload["frame"] for m in capture.of(SUBMIT) if m.sequence is not None}


def whole(capture: Capture) -> dict[int, dict[str, Any]]:
    found: dict[int, dict[str, Any]] = {}
    for m in capture.of(CB_COUNTERS):
        assert m.sequence is not None and m.sequence not in found, m
        found[m.sequence] = m.payload
    return found


def test_each_command_buffer_gets_the_invocations_of_its_dispatches(khr: Runner) -> None:
    res, capture = khr(
        "--scenario", "compute", "--frames", "2", counters=f"khr:{WHOLE}", frame_submits="1"
    )
    scenario_ran(res, "compute")
    assert other_validation_errors(res, len(whole(capture))) == []
    counters = announced(capture)
    assert list(counters) == [WHOLE]
    assert counters[WHOLE]["scope"] == "command_buffer" and counters[WHOLE]["pass_index"] == 0
    expected = truth(capture)
    got = whole(capture)
    assert set(got) == set(expected) and len(got) == 2, (got, expected)
    for submit, payload in got.items():
        assert payload == {"counters": {WHOLE: expected[submit]}, "counters_pass": 0}, payload
        assert (expected[submit] or 0) > 0
    # Its workloads ran inside the command buffer's query: none has counters, and each says why.
    dispatches = [t for t in instances(capture) if t.fields["type"] == "dispatch"]
    assert len(dispatches) == 10
    for t in dispatches:
        assert t.fields["counters"] is None
        assert t.fields["counters_reason"] == "command_buffer_scope_frame"


def test_a_mixed_selection_alternates_workload_and_command_buffer_frames(khr: Runner) -> None:
    res, capture = khr(
        "--scenario", "compute", "--frames", "4",
        counters=f"khr:compute_invocations,khr:{WHOLE}", frame_submits="1",
    )  # fmt: skip
    scenario_ran(res, "compute")
    assert other_validation_errors(res, len(whole(capture))) == []
    counters = announced(capture)
    assert {n: c["pass_index"] for n, c in counters.items()} == {
        "compute_invocations": 0,
        WHOLE: 1,
    }
    expected, frames, got = truth(capture), frames_of(capture), whole(capture)
    # Frames 1 and 3 collect the command buffer pass; 0 and 2 the workloads'.
    assert sorted(frames[s] for s in got) == [1, 3]
    for submit, payload in got.items():
        assert payload["counters"] == {WHOLE: expected[submit]}
        assert payload["counters_pass"] == 1
    for t in instances(capture):
        if t.fields["type"] != "dispatch":
            continue
        if t.submit.payload["frame"] % 2 == 0:
            assert values(t) == {"compute_invocations": t.fields["invocations"]}, t.fields
        else:
            assert t.fields["counters_reason"] == "command_buffer_scope_frame", t.fields


def test_a_command_buffer_submitted_again_is_counted_each_time(khr: Runner) -> None:
    # Recorded once in frame 0 (a command buffer pass), submitted three times a frame.
    res, capture = khr("--scenario", "reusable", "--frames", "2", counters=f"khr:{WHOLE}")
    scenario_ran(res, "reusable")
    assert other_validation_errors(res, len(whole(capture))) == []
    expected, got = truth(capture), whole(capture)
    assert set(got) == set(expected)
    assert all(p["counters"] == {WHOLE: expected[s]} for s, p in got.items()), got
    assert sorted(v or 0 for v in expected.values())[-6:] == [64] * 6, (
        expected
    )  # and the scenario's setup


# A device with secondary command buffers (the `secondary` and `game` scenarios allocate them):
# a primary is counted once an earlier recording of it executed none.
WITHOUT = {"executes_secondaries", "may_execute_secondaries"}


def test_every_scenario_is_counted_per_command_buffer_or_says_why(khr: Runner) -> None:
    # One frame per submission: the passes alternate among every scenario's submissions.
    res, capture = khr(
        "--all", "--frames", "4", counters=f"khr:compute_invocations,khr:{WHOLE}", frame_submits="1"
    )
    assert res.returncode == 0, res.stdout + res.stderr
    assert other_validation_errors(res, len(whole(capture))) == []
    expected, got = truth(capture), whole(capture)
    assert len(got) > 10
    compared = 0
    for submit, payload in got.items():
        if payload["counters"] is None:
            assert payload["counters_reason"] in WITHOUT, payload
        elif expected[submit] is not None:
            assert payload["counters"] == {WHOLE: expected[submit]}, (submit, payload)
            compared += 1
    assert compared > 10, got


def test_the_capture_reports_each_command_buffer(
    layer_dir: Path, workload: Path, tmp_path: Path
) -> None:
    code, out = vkscope_run(
        fixture_env(layer_dir), tmp_path,
        "--counters", f"khr:compute_invocations,{WHOLE}", "--frames", "3",
        "-s", "frame_submits=1", "--", str(workload), "--scenario", "compute", "--frames", "6",
    )  # fmt: skip
    assert code == 0, out
    assert "widened to 2-3" in out
    path = tmp_path / "app.vkscope"
    with open_capture(path) as capture:
        items = capture.command_buffer_counters()
        dispatches = [i for i in capture.workloads() if i.type == "dispatch"]
        assert capture.counter_names() == ("compute_invocations",)
        _, rows = capture.execute("SELECT frame, counter, value FROM command_buffer_counter_values")
        per_counter = list(rows)
    # Frame 3 is the command buffer pass: one command buffer of five dispatches.
    assert [(i.frame, i.counters_pass, i.counters_reason) for i in items] == [(3, 1, None)]
    want = sum(i.metadata["invocations"] for i in dispatches if i.frame == 3)
    assert items[0].counters == {WHOLE: want}
    assert isinstance(items[0].counters[WHOLE], int)  # uint64 storage: stored as sent
    assert per_counter == [(3, WHOLE, want)]
    # Frame 3's dispatches have frame 2's compute_invocations joined in, and nothing missing:
    # a COMMAND_BUFFER-scope counter is no workload's.
    for i in dispatches:
        assert i.counters == {"compute_invocations": i.metadata["invocations"]}, i.metadata
        assert i.counters_missing == {}
    res = run([vkscope_cli(), "report", str(path), "--format", "json"], fixture_env(layer_dir))
    assert res.returncode == 0, res.stderr
    report = json.loads(res.stdout)
    assert report["capture"]["command_buffer_counters"] == [WHOLE]
    (row,) = report["command_buffers"]
    assert row["frame"] == 3 and row["counters"] == {WHOLE: want} and row["counters_pass"] == 1
    res = run([vkscope_cli(), "report", str(path)], fixture_env(layer_dir))
    assert res.returncode == 0, res.stderr
    assert "Counters per command buffer" in res.stdout
    assert f"{want:,}" in res.stdout
