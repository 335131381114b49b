"""Counters on the host (docs/counters.md): `vkscope run --counters` refuses what no device
counts before the application starts, stores each instance's counters, and every reader gives
them: the Python API, `vkscope report` (columns, JSON, per-queue sums, --sort, --counters), the
instance_counters view of `vkscope query`, and `vkscope counters` lists what can be collected."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterator
from pathlib import Path

import pytest

from harness.driver import driver_lacks
from harness.env import base_env, run, vkscope_cli
from vkscope.capture import open_capture
from vkscope.capture.schema import SCHEMA_VERSION

COMPUTE_INVOCATIONS = sorted(g * 64 for g in (16, 64, 256, 8 * 2, 12))


def vkscope(*args: str | Path, cwd: Path) -> tuple[int, str, str]:
    res = run([vkscope_cli(), *args], base_env(), cwd=cwd)
    return res.returncode, res.stdout, res.stderr


@pytest.fixture(scope="module")
def captured(workload: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """The compute and renderpass scenarios, timed and counted, two frames each."""
    folder = tmp_path_factory.mktemp("counters")
    cap = folder / "counted.vkscope"
    code, _, err = vkscope(
        "run", "-o", cap, "--timing", "queue", "--counters", "pipeline_statistics",
        "--no-trace", "--no-html", "--no-report", "--", workload,
        "--scenario", "compute", "--scenario", "renderpass", "--scenario", "secondary",
        "--frames", "2", cwd=folder,
    )  # fmt: skip
    assert code == 0, err
    yield cap


@pytest.mark.vulkan
def test_the_api_gives_each_instance_its_counters(captured: Path) -> None:
    with open_capture(captured) as capture:
        assert capture.schema_version == SCHEMA_VERSION
        assert "compute_shader_invocations" in capture.counter_names()
        items = list(capture.workloads())
    dispatches = [w for w in items if w.type == "dispatch"]
    for w in dispatches:
        assert w.counters["compute_shader_invocations"] == w.metadata["invocations"]
    counted = {w.counters["compute_shader_invocations"] for w in dispatches}
    assert set(COMPUTE_INVOCATIONS) <= counted
    for w in items:
        assert bool(w.counters) != bool(w.counters_reason), (w.counters, w.counters_reason)
    reasons = {w.counters_reason for w in items if w.counters_reason}
    assert reasons == (
        {"secondary_without_inherited_queries"} if driver_lacks("inherited_queries") else set()
    )


@pytest.mark.vulkan
def test_report_json_has_counters_and_reasons_per_workload(captured: Path, tmp_path: Path) -> None:
    code, out, err = vkscope("report", captured, "--format", "json", cwd=tmp_path)
    assert code == 0, err
    report = json.loads(out)
    assert "compute_shader_invocations" in report["capture"]["counters"]
    for w in report["workloads"]:
        assert isinstance(w["counters"], dict)
        assert bool(w["counters"]) != (w["counters_reason"] is not None), w
        assert "compute_shader_invocations" not in w  # values are in `counters` only
    passes = [w for w in report["workloads"] if w["type"] == "renderpass" and w["counters"]]
    assert passes
    for w in passes:
        derived = w["derived"]
        assert derived["vertices_per_primitive"] == 3.0
        assert derived["overdraw"] > 0
        assert derived["invocations_per_us"] > 0
    # Each frame and queue sums its instances' counters.
    for f in report["frames"]:
        rows = [
            w for w in report["workloads"] if (w["frame"], w["queue"]) == (f["frame"], f["queue"])
        ]
        expected = sum(w["counters"].get("compute_shader_invocations", 0) for w in rows)
        assert f["counters"]["compute_shader_invocations"] == expected


@pytest.mark.vulkan
def test_report_sorts_by_a_counter_and_shows_chosen_columns(captured: Path, tmp_path: Path) -> None:
    code, out, err = vkscope(
        "report", captured, "--format", "json", "--sort", "fragment_shader_invocations",
        "--top", "3", cwd=tmp_path,
    )  # fmt: skip
    assert code == 0, err
    top = json.loads(out)["costliest"]
    values = [w["counters"]["fragment_shader_invocations"] for w in top]
    assert len(values) == 3 and values == sorted(values, reverse=True) and values[0] > 0
    assert all(w["type"] == "renderpass" for w in top)
    code, out, err = vkscope(
        "report", captured, "--counters", "compute_shader_invocations", "--table", "workloads",
        "--format", "markdown", cwd=tmp_path,
    )  # fmt: skip
    assert code == 0, err
    assert "| CS inv |" in out and "FS inv" not in out
    assert "| 16,384 |" in out  # 256 groups of 64
    # A workload without values says why in the counter column.
    if driver_lacks("inherited_queries"):
        assert "| secondary_without_inherited_queries |" in out
    code, out, err = vkscope("report", captured, "--format", "csv", cwd=tmp_path)
    assert code == 0, err
    header = out.splitlines()[0].split(",")
    assert "fragment_shader_invocations" in header and "counters" in header


@pytest.mark.vulkan
def test_report_refuses_a_counter_the_capture_lacks(captured: Path, tmp_path: Path) -> None:
    code, _, err = vkscope("report", captured, "--sort", "frobs", cwd=tmp_path)
    assert code == 2
    assert "no counter 'frobs'" in err and "compute_shader_invocations" in err
    assert "Traceback" not in err


@pytest.mark.vulkan
def test_query_joins_instances_with_their_counters(captured: Path, tmp_path: Path) -> None:
    sql = (
        "SELECT DISTINCT value FROM instance_counters WHERE type = 'dispatch' "
        "AND counter = 'compute_shader_invocations'"
    )
    code, out, err = vkscope("query", captured, sql, "--format", "json", cwd=tmp_path)
    assert code == 0, err
    assert set(COMPUTE_INVOCATIONS) <= {r["value"] for r in json.loads(out)}


@pytest.mark.vulkan
def test_run_refuses_counters_no_device_has_before_the_app_starts(
    workload: Path, tmp_path: Path
) -> None:
    marker = tmp_path / "ran"
    refused = ["frobnications", "pipeline_statistics.frobs"]
    if driver_lacks("mesh_shader_queries"):  # named alone, it must be countable somewhere
        refused.append("task_shader_invocations")
    for bad in refused:
        code, _, err = vkscope(
            "run", "-o", tmp_path / "x.vkscope", "--counters", bad, "--",
            "sh", "-c", f"touch {marker}", cwd=tmp_path,
        )  # fmt: skip
        assert code == 2, err
        assert bad.removeprefix("pipeline_statistics.") in err
        assert "compute_shader_invocations" in err  # what can be collected
        assert "Traceback" not in err
        assert not marker.exists() and not (tmp_path / "x.vkscope").exists()


@pytest.mark.vulkan
def test_counters_lists_what_each_queue_family_collects(tmp_path: Path) -> None:
    code, out, err = vkscope("counters", "--json", cwd=tmp_path)
    assert code == 0, err
    devices = json.loads(out)
    assert devices
    family = devices[0]["queue_families"][0]
    names = {c["name"] for c in family["counters"]}
    assert "compute_shader_invocations" in names and "fragment_shader_invocations" in names
    for c in family["counters"]:
        assert c["source"] == "pipeline_statistics" and c["unit"] and c["description"]
    code, out, err = vkscope("counters", cwd=tmp_path)
    assert code == 0, err
    assert "fragment_shader_invocations" in out and "pipeline_statistics" in out


def test_a_capture_of_schema_version_3_reads_with_no_counters(tmp_path: Path) -> None:
    # A version 3 file: the current tables less device_counters, no instance_counters view.
    from vkscope.capture import schema

    path = tmp_path / "v3.vkscope"
    db = sqlite3.connect(path)
    statements = [s for s in schema.TABLES.split(";\n") if s.strip()]
    for statement in statements:
        head = statement.strip()
        if "device_counters" in head.split("(")[0] or "instance_counters" in head.split(" AS")[0]:
            continue
        db.execute(head)
    db.execute(f"PRAGMA application_id = {schema.APPLICATION_ID}")
    db.execute("PRAGMA user_version = 3")
    meta = {
        "schema_version": 3, "vkscope_version": "0", "created_utc": "2026-01-01T00:00:00Z",
        "finished_utc": "2026-01-01T00:00:01Z", "status": "complete", "protocol_version": 1,
        "process_name": "old", "pid": 1, "connections": 1, "messages": 0, "bad_messages": 0,
        "skipped_messages": 0, "dropped": 0,
    }  # fmt: skip
    db.executemany("INSERT INTO meta VALUES (?, ?)", meta.items())
    db.execute(f"CREATE UNIQUE INDEX {schema.WORKLOADS_INDEX} ON workloads (process, tag_id)")
    db.commit()
    db.close()
    with open_capture(path) as capture:
        assert capture.counter_names() == ()
        _, rows = capture.execute("SELECT count(*) FROM instance_counters")
        assert list(rows) == [(0,)]
        _, rows = capture.execute("SELECT count(*) FROM device_counters")
        assert list(rows) == [(0,)]
        # Nor COMMAND_BUFFER-scope counters (schema version 6).
        assert capture.command_buffer_counters() == []
        _, rows = capture.execute("SELECT count(*) FROM command_buffer_counter_values")
        assert list(rows) == [(0,)]
