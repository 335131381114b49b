"""khr counters (VK_KHR_performance_query) in every host tool, on the test fixture stacked below
vkscope: the values joined over the pass cycle are each workload's `counters` in the Python API,
`vkscope report` (columns, per-frame and queue sums, --sort, JSON with units) and the
instance_counters view of `vkscope query`; the counters a workload lacks after the join say why
(counters_missing, the instance_counters_missing view), and a concurrently impacted counter is
stored in the capture and marked in the report. An older capture still opens and joins."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterator
from pathlib import Path

import pytest

from harness.env import base_env, run, vkscope_cli
from vkscope.capture.read.reader import open_capture
from vkscope.capture.schema import SCHEMA_VERSION

pytestmark = pytest.mark.vulkan

FIXTURE = "VK_LAYER_VKSCOPE_test_performance_query"
TWO = "khr:compute_invocations,elapsed_ns"


def fixture_env(layer_dir: Path) -> dict[str, str]:
    env = base_env()
    env["VK_ADD_LAYER_PATH"] = str(layer_dir / "testing")
    env["VK_INSTANCE_LAYERS"] = FIXTURE
    return env


def vkscope(env: dict[str, str], cwd: Path, *args: str | Path) -> tuple[int, str, str]:
    res = run([vkscope_cli(), *args], env, cwd=cwd)
    return res.returncode, res.stdout, res.stderr


@pytest.fixture(scope="module")
def captured(
    layer_dir: Path, workload: Path, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Path]:
    """Two passes of the compute scenario over frames 2-3, then frame 4 alone: its cycle is cut
    short, so its workloads lack the second pass's counter."""
    folder = tmp_path_factory.mktemp("khr_report")
    code, out, err = vkscope(
        fixture_env(layer_dir), folder, "run", "--no-html", "--no-report", "--no-trace",
        "-o", "app.vkscope", "--counters", TWO, "--frames", "2-4", "-s", "frame_submits=1",
        "--", workload, "--scenario", "compute", "--frames", "5",
    )  # fmt: skip
    assert code == 0, out + err
    yield folder / "app.vkscope"


def test_the_api_gives_each_workload_its_joined_counters(captured: Path) -> None:
    with open_capture(captured) as capture:
        assert capture.schema_version == SCHEMA_VERSION
        details = capture.counter_details()
        dispatches = [w for w in capture.workloads() if w.type == "dispatch"]
    assert details["elapsed_ns"].concurrently_impacted
    assert details["elapsed_ns"].unit == "nanoseconds"
    assert not details["compute_invocations"].concurrently_impacted
    assert {w.frame for w in dispatches} == {2, 3, 4}
    for w in dispatches:
        assert w.counters["compute_invocations"] == w.metadata["invocations"], w.metadata
        if w.frame == 4:
            assert set(w.counters) == {"compute_invocations"}
            assert w.counters_missing == {"elapsed_ns": "frame 5 (pass 1) was not captured"}
        else:
            assert w.counters["elapsed_ns"] > 0 and w.counters_missing == {}


def test_the_capture_stores_what_performance_query_says_of_each_counter(captured: Path) -> None:
    db = sqlite3.connect(captured)
    rows = db.execute(
        "SELECT name, scope, storage, pass_index, concurrently_impacted, length(uuid) "
        "FROM device_counters WHERE source = 'performance_query' ORDER BY pass_index"
    ).fetchall()
    db.close()
    assert {r[0] for r in rows} == {"compute_invocations", "elapsed_ns"}
    by_name = {r[0]: r[1:] for r in rows}
    assert by_name["compute_invocations"][:4] == ("command", "uint64", 0, 0)
    assert by_name["elapsed_ns"][2:] == (1, 1, 32)


def test_report_json_has_joined_counters_units_sums_and_what_is_missing(
    layer_dir: Path, captured: Path, tmp_path: Path
) -> None:
    code, out, err = vkscope(base_env(), tmp_path, "report", captured, "--format", "json")
    assert code == 0, err
    report = json.loads(out)
    info = report["capture"]["counter_info"]
    assert info["elapsed_ns"] == {
        "unit": "nanoseconds", "concurrently_impacted": True, "scope": "command"
    }  # fmt: skip
    dispatches = [w for w in report["workloads"] if w["type"] == "dispatch"]
    assert dispatches
    for w in dispatches:
        assert w["counters"]["compute_invocations"] > 0
        if w["frame"] == 4:
            assert "elapsed_ns" not in w["counters"]
            assert w["counters_missing"] == {"elapsed_ns": "frame 5 (pass 1) was not captured"}
        else:
            assert w["counters"]["elapsed_ns"] > 0 and w["counters_missing"] is None
    for f in report["frames"]:
        rows = [
            w for w in report["workloads"] if (w["frame"], w["queue"]) == (f["frame"], f["queue"])
        ]
        for name in ("compute_invocations", "elapsed_ns"):
            expected = sum(w["counters"].get(name, 0) for w in rows)
            assert f["counters"].get(name, 0) == expected, (name, f)
    assert {f["frame"] for f in report["frames"] if "elapsed_ns" in f["counters"]} == {2, 3}


def test_report_sorts_by_a_khr_counter_and_marks_concurrently_impacted_ones(
    captured: Path, tmp_path: Path
) -> None:
    code, out, err = vkscope(
        base_env(), tmp_path, "report", captured, "--format", "json",
        "--sort", "compute_invocations", "--top", "3",
    )  # fmt: skip
    assert code == 0, err
    values = [w["counters"]["compute_invocations"] for w in json.loads(out)["costliest"]]
    assert len(values) == 3 and values == sorted(values, reverse=True) and values[0] > 0
    code, out, err = vkscope(
        base_env(), tmp_path, "report", captured, "--table", "workloads", "--format", "markdown"
    )
    assert code == 0, err
    assert "| elapsed_ns \\* |" in out and "| compute_invocations |" in out  # `*` escaped
    assert "| missing |" in out  # frame 4's elapsed_ns
    assert "marked \\*: concurrently impacted" in out
    assert "same time affects their values): elapsed_ns" in out


def test_query_views_give_joined_counters_and_missing_ones(captured: Path, tmp_path: Path) -> None:
    sql = (
        "SELECT frame, counter, count(*) FROM instance_counters WHERE type = 'dispatch' "
        "GROUP BY 1, 2 ORDER BY 1, 2"
    )
    code, out, err = vkscope(base_env(), tmp_path, "query", captured, sql, "--format", "json")
    assert code == 0, err
    rows = {(r["frame"], r["counter"]): r["count(*)"] for r in json.loads(out)}
    assert rows[(2, "elapsed_ns")] == rows[(2, "compute_invocations")] > 0
    assert rows[(3, "compute_invocations")] == rows[(3, "elapsed_ns")]
    assert (4, "elapsed_ns") not in rows and rows[(4, "compute_invocations")] > 0
    sql = "SELECT DISTINCT frame, counter, reason FROM instance_counters_missing"
    code, out, err = vkscope(base_env(), tmp_path, "query", captured, sql, "--format", "json")
    assert code == 0, err
    assert json.loads(out) == [
        {"frame": 4, "counter": "elapsed_ns", "reason": "frame 5 (pass 1) was not captured"}
    ]


def test_a_version_4_capture_with_khr_counters_still_joins(captured: Path, tmp_path: Path) -> None:
    old = tmp_path / "v4.vkscope"
    old.write_bytes(captured.read_bytes())
    db = sqlite3.connect(old)
    for column in ("storage", "scope", "uuid", "pass_index", "concurrently_impacted"):
        db.execute(f"ALTER TABLE device_counters DROP COLUMN {column}")
    db.execute("PRAGMA user_version = 4")
    db.execute("UPDATE meta SET value = 4 WHERE key = 'schema_version'")
    db.commit()
    db.close()
    with open_capture(old) as capture:
        assert capture.schema_version == 4
        assert not capture.counter_details()["elapsed_ns"].concurrently_impacted
        dispatches = [w for w in capture.workloads() if w.type == "dispatch" and w.frame == 2]
        _, rows = capture.execute("SELECT count(*) FROM device_counters WHERE scope IS NULL")
        assert next(iter(rows))[0] > 0
    assert dispatches and all(set(w.counters) == {"compute_invocations", "elapsed_ns"}
                              for w in dispatches)  # fmt: skip


def test_a_command_buffer_recorded_once_is_joined_to_every_counter(
    layer_dir: Path, workload: Path, tmp_path: Path
) -> None:
    # Recorded once before the first frame and submitted three times in every frame: its
    # queries are the whole selection's, a pass per submission; every instance reads the values
    # of the set it ran in.
    code, out, err = vkscope(
        fixture_env(layer_dir), tmp_path, "run", "--no-html", "--no-report", "--no-trace",
        "-o", "app.vkscope", "--counters", TWO, "-s", "frame_submits=3", "--", workload,
        "--scenario", "reusable",
        "--frames", "3",
    )  # fmt: skip
    assert code == 0, out + err
    with open_capture(tmp_path / "app.vkscope") as capture:
        dispatches = [w for w in capture.workloads() if w.type == "dispatch"]
        code, rows = capture.execute(
            "SELECT count(*) FROM instance_counters_missing WHERE type = 'dispatch'"
        )
        missing = next(iter(rows))[0]
    assert len(dispatches) == 9
    assert missing == 0
    for w in dispatches:
        assert w.counters["compute_invocations"] == 64, w.metadata
        assert w.counters["elapsed_ns"] >= 0
    # Sets of two submissions: the second carries the values, the first reads them from it.
    carriers = [w for w in dispatches if w.metadata.get("counters_submissions") == 2]
    assert len(carriers) == 4
    reasons = [w.metadata.get("counters_reason") for w in dispatches]
    assert reasons == [*(["passes_on_later_submission", None] * 4), "pass_cycle_incomplete"]
    # The last run ended before its set did: it reads the workload's values from the frame of
    # the other pass in its cycle, like any instance whose frame lacks a pass.
    assert dispatches[-1].counters in [w.counters for w in dispatches[5:8]]


def test_a_render_pass_scope_counter_belongs_to_render_passes_only(
    layer_dir: Path, workload: Path, tmp_path: Path
) -> None:
    code, out, err = vkscope(
        fixture_env(layer_dir), tmp_path, "run", "--no-html", "--no-report", "--no-trace",
        "-o", "app.vkscope", "--counters", "khr:fragment_invocations,render_pass_fragments",
        "-s", "frame_submits=2", "--", workload, "--scenario", "renderpass",
        "--scenario", "compute", "--frames", "2",
    )  # fmt: skip
    assert code == 0, out + err
    with open_capture(tmp_path / "app.vkscope") as capture:
        assert capture.counter_details()["render_pass_fragments"].scope == "render_pass"
        items = list(capture.workloads())
    assert {w.frame for w in items} == {0, 1}
    passes = [w for w in items if w.type == "renderpass"]
    assert passes
    for w in passes:
        assert w.counters_missing == {}, w.metadata
        assert w.counters["render_pass_fragments"] == w.counters["fragment_invocations"] > 0
    for w in items:
        if w.type != "renderpass":
            assert set(w.counters) == {"fragment_invocations"}, w.metadata
            assert w.counters_missing == {}, w.metadata


def test_diff_compares_khr_counters_joined_over_their_passes(captured: Path) -> None:
    # Frames 2-4 of a two-pass selection: frame 2 counted compute_invocations, frame 3
    # elapsed_ns, frame 4 compute_invocations again with its cycle cut short. Joined, every
    # dispatch has compute_invocations in all three frames (frame 3 from frame 2).
    from vkscope.diff.compare import MATCHED, Diff
    from vkscope.diff.stats import Rule

    with Diff(captured, captured, Rule(), metric="compute_invocations") as d:
        rows = [r for r in d.rows(MATCHED) if r.identity.type == "dispatch"]
        assert rows
        for r in rows:
            assert r.base is not None and r.base.summary.samples == 3, r
    with Diff(captured, captured, Rule(), metric="elapsed_ns") as d:
        rows = [r for r in d.rows(MATCHED) if r.identity.type == "dispatch"]
        assert rows
        for r in rows:
            assert r.base is not None and r.base.summary.samples == 2, r
