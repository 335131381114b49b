"""A capture under a cost budget on the host: what the controller saw is stored frame by frame,
each workload identity's values come from the frames that measured it, and every reader (the
Python API, the report, the HTML page, the Perfetto trace, the diff) says how many frames that was
and why an identity was never measured. Captures are protocol streams sent to a real capture
server (tests/support/budget_scenes.py)."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

from support.budget_scenes import BUDGET_REASON, Item, budget_capture, rotating
from support.captures import capture_from, downgrade_to_version_2
from support.diff_scenes import diff, diff_json
from support.html_scenes import coverage_entry
from support.perfetto import INSTANT, ReadTrace

from vkscope import protocol as m
from vkscope.analysis.report import write_report, writer_for
from vkscope.capture import open_capture
from vkscope.capture.read.coverage import (
    BUDGET_ZERO,
    NOT_REACHED,
    SEEN_ONCE,
    budget_summary,
    identity_coverage,
)
from vkscope.capture.write.client import Stream
from vkscope.export import export_perfetto
from vkscope.html import page_data


def coverage_by_name(path: Path) -> dict[str, Any]:
    with open_capture(path) as cap:
        return {
            f"{c.identity.type} {c.identity.label_path} #{c.identity.ordinal}": c
            for c in identity_coverage(cap)
        }


def test_what_the_controller_saw_is_stored_frame_by_frame(tmp_path: Path) -> None:
    path = budget_capture(tmp_path, rotating(6))
    with open_capture(path) as cap:
        assert cap.budget_percent() == 5.0
        assert [d.budget_percent for d in cap.devices()] == [5.0]
        frames = cap.budget_frames()
        assert [f.number for f in frames] == list(range(6))
        assert {(f.state, f.workloads, f.measured) for f in frames} == {("measured", 4, 1)}
        assert frames[0].interval_ns == 0 and not frames[0].sample
        assert frames[1].base_ns == 900_000 and frames[1].unit_ns == 1500.0
        assert [(f.recording_ns, f.recording_share) for f in frames[:2]] == [
            (300_000, 0.0),
            (301_000, 0.25),
        ]
        summary = budget_summary(cap)
    assert summary is not None
    assert (summary.percent, summary.measured_frames, summary.measured_median) == (5.0, 6, 1.0)
    assert summary.recording_share == 1.25
    assert "moves with the application's recording by 1.25 times it" in report(path, "markdown")


def test_an_identity_s_values_come_from_the_frames_that_measured_it(tmp_path: Path) -> None:
    # Eight frames of four dispatches: each measured in two of them, at its own GPU time.
    found = coverage_by_name(budget_capture(tmp_path, rotating(8)))
    assert sorted(found) == [f"dispatch Frame #{k}" for k in range(4)]
    for k in range(4):
        c = found[f"dispatch Frame #{k}"]
        assert (c.frames, c.measured, c.left_out, c.reason) == (8, 2, 6, None)
        assert c.median == (k + 1) * 10_000


def test_workloads_that_change_from_frame_to_frame_are_seen_once_and_never_joined(
    tmp_path: Path,
) -> None:
    # Each frame's dispatch sits under a label of its own (frame numbers in labels): every
    # identity runs once, measured or not, and no value may move from one to another.
    frames = [[Item("dispatch", ("Frame", f"Particles {f}"), 5_000 if f % 2 else None)]
              for f in range(6)]  # fmt: skip
    found = coverage_by_name(budget_capture(tmp_path, frames))
    assert len(found) == 6
    for f in range(6):
        c = found[f"dispatch Frame/Particles {f} #0"]
        assert c.frames == 1
        if f % 2:
            assert (c.measured, c.median, c.reason) == (1, 5_000, None)
        else:
            assert (c.measured, c.median, c.reason) == (0, None, SEEN_ONCE)


def test_why_an_identity_was_never_measured(tmp_path: Path) -> None:
    # Three frames measure dispatch #0 only; #1 is left out of all three; #2 is untimed for a
    # reason of timing's own.
    untimed = Item("dispatch", (), reason="no query pool available")
    frames = [[Item("dispatch", (), 7_000), Item("dispatch", ()), untimed] for _ in range(3)]
    found = coverage_by_name(budget_capture(tmp_path, frames))
    assert found["dispatch  #0"].reason is None
    assert found["dispatch  #1"].reason == NOT_REACHED
    assert found["dispatch  #2"].reason == "no query pool available"
    zero = [[Item("dispatch", ()), Item("dispatch", ())] for _ in range(3)]
    found = coverage_by_name(budget_capture(tmp_path, zero, percent=0.0, name="zero"))
    assert {c.reason for c in found.values()} == {BUDGET_ZERO}


def test_a_capture_before_budgets_reads_without_one(tmp_path: Path) -> None:
    path = budget_capture(tmp_path, rotating(4))
    downgrade_to_version_2(path)
    with sqlite3.connect(path) as db:
        db.execute("ALTER TABLE devices DROP COLUMN budget_percent")
        db.execute("DROP TABLE budget_frames")
    with open_capture(path) as cap:
        assert cap.budget_percent() is None
        assert cap.budget_frames() == []
        assert budget_summary(cap) is None


def test_a_capture_before_the_recording_was_taken_out_reads_without_it(tmp_path: Path) -> None:
    path = budget_capture(tmp_path, rotating(4))
    with sqlite3.connect(path) as db:
        db.execute("ALTER TABLE budget_frames DROP COLUMN recording_ns")
        db.execute("ALTER TABLE budget_frames DROP COLUMN recording_share")
        db.execute("PRAGMA user_version = 12")
        db.execute("UPDATE meta SET value = 12 WHERE key = 'schema_version'")
    with open_capture(path) as cap:
        frames = cap.budget_frames()
        assert [f.number for f in frames] == [0, 1, 2, 3]
        assert {(f.recording_ns, f.recording_share) for f in frames} == {(None, None)}
        summary = budget_summary(cap)
    assert summary is not None and summary.recording_share is None


def report(path: Path, fmt: str, tables: frozenset[str] | None = None) -> str:
    from io import StringIO

    from vkscope.analysis.report import default_tables

    out = StringIO()
    chosen = tables if tables is not None else default_tables(fmt)
    with open_capture(path) as cap:
        write_report(cap, writer_for(fmt, out, chosen), tables=chosen)
    return out.getvalue()


def test_the_report_says_the_budget_and_each_identity_s_coverage(tmp_path: Path) -> None:
    frames = [[*row, Item("dispatch", ("Once", str(f)))] for f, row in enumerate(rotating(8))]
    path = budget_capture(tmp_path, frames)
    doc = json.loads(report(path, "json"))
    capture = doc["capture"]
    assert capture["budget"]["percent"] == 5.0 and capture["budget"]["measured_frames"] == 8
    assert capture["coverage"]["identities"] == 12 and capture["coverage"]["measured"] == 4
    assert capture["coverage"]["never_measured"] == [{"reason": SEEN_ONCE, "identities": 8}]
    rows = {(r["label_path"], r["ordinal"]): r for r in doc["identities"]}
    assert rows[("Frame", 3)] == {
        "queue": "0.0", "type": "dispatch", "ordinal": 3, "label_path": "Frame", "frames": 8,
        "measured": 2, "left_out": 6, "gpu_ns": 40_000, "reason": None,
    }  # fmt: skip
    assert rows[("Once/5", 0)]["reason"] == SEEN_ONCE
    text = report(path, "markdown")
    assert "**budget**: 5% of the frame without instruments" in text
    assert "**coverage**: 4 of 12 workload identities measured, each in 2 frames" in text
    assert "**never measured**: 8: seen in one frame only" in text
    csv = report(path, "csv", frozenset({"identities"})).splitlines()
    assert csv[0] == "queue,type,ordinal,label_path,frames,measured,left_out,gpu_ns,reason"
    assert len(csv) == 1 + 12


def test_the_html_page_carries_each_workload_s_coverage(tmp_path: Path) -> None:
    path = budget_capture(tmp_path, rotating(8))
    with open_capture(path) as cap:
        data = page_data(cap)
        instances = list(cap.workloads())
    budget = data["budget"]
    assert budget["percent"] == 5.0
    assert budget["identities"] == budget["measured_identities"] == 4
    ix = data["workloads"]["ix"]
    for w, at in zip(instances, ix, strict=True):
        entry = coverage_entry(budget, at)
        assert entry is not None
        frames, measured, median, reason = entry
        assert w.identity is not None
        assert (frames, measured, reason) == (8, 2, None)
        assert median == (w.identity.ordinal + 1) * 10_000
    # Without a budget there is no coverage to carry.
    plain = budget_capture(tmp_path, rotating(2), name="plain")
    with sqlite3.connect(plain) as db:
        db.execute("UPDATE devices SET budget_percent = NULL")
    with open_capture(plain) as cap:
        data = page_data(cap)
    assert data["budget"] is None


def test_the_perfetto_trace_carries_the_budget_and_the_coverage(tmp_path: Path) -> None:
    frames = [[*row, Item("dispatch", ("Once", str(f)))] for f, row in enumerate(rotating(4))]
    path = budget_capture(tmp_path, frames)
    out = tmp_path / "b.pftrace"
    export_perfetto(path, out)
    trace = ReadTrace(out)
    frame_slices = [s for s in trace.slices() if (s.name or "").startswith("frame ")]
    assert len(frame_slices) == 4
    assert all(s.args["budget_measured"] == 1 and s.args["budget_workloads"] == 5
               for s in frame_slices)  # fmt: skip
    workloads = [s for s in trace.slices() if "instance" in s.args]
    assert {s.args["coverage"] for s in workloads if s.args.get("labels") != ["Once"]} >= {
        "measured in 1 of 4 frames"
    }
    once = [s for s in workloads if s.args.get("never_measured")]
    assert len(once) == 4 and {s.args["never_measured"] for s in once} == {SEEN_ONCE}
    events = [e for e in trace.events if e.type == INSTANT and e.name == "cost budget"]
    assert len(events) == 1
    assert events[0].args["identities_never_measured"] == 4
    assert events[0].args["budget_percent"] == 5.0
    counter = trace.track_named("budget: workloads measured · GPU 1")
    assert len(counter) == 1 and counter[0].counter


def test_diff_compares_identities_measured_in_both_and_says_which_it_could_not(
    tmp_path: Path,
) -> None:
    base = budget_capture(tmp_path, rotating(12), name="base")
    # The new capture measures dispatches #0 and #1 only: #2 and #3 are left out of its frames.
    frames = [[Item("dispatch", ("Frame",), (k + 1) * 10_000 if k == f % 2 else None)
               for k in range(4)] for f in range(12)]  # fmt: skip
    new = budget_capture(tmp_path, frames, name="new")
    code, doc = diff_json(base, new)
    assert code == 0
    assert doc["counts"]["measured_in_one"] == 2
    assert doc["totals"]["gpu_ns_per_frame"]["status"] == "budgeted"
    assert doc["base"]["budget_percent"] == doc["new"]["budget_percent"] == 5.0
    status = {c["ordinal"]: c for c in doc["changes"]}
    assert status[0]["status"] == status[1]["status"] == "within_noise"
    for k in (2, 3):
        assert status[k]["status"] == "measured_in_one"
        assert status[k]["not_compared"] == (
            "new: the cost budget left it out of all 12 frames it ran in"
        )
        assert status[k]["new"]["left_out"] == 12
    code, text, _ = diff(base, new)
    assert code == 0
    assert "Not compared: measured in one capture only (2)" in text
    assert "Per-frame totals not compared" in text


def test_left_out_instances_say_so_in_the_api(tmp_path: Path) -> None:
    path = budget_capture(tmp_path, rotating(2))
    with open_capture(path) as cap:
        reasons = {w.timing_reason for w in cap.workloads() if w.gpu_ns is None}
    assert reasons == {BUDGET_REASON}


def test_khr_passes_the_budget_left_out_of_a_cycle_come_from_other_frames(tmp_path: Path) -> None:
    # Two passes, a frame each (pass 0: counter a, pass 1: counter b); one dispatch per frame,
    # measured in frames 0 (pass 0) and 3 (pass 1) only: never twice in one pass cycle.
    s = Stream()
    s.hello()
    s.device(1, budget=5.0)
    counters = [{"name": "a", "unit": "count", "pass_index": 0, "scope": "command"},
                {"name": "b", "unit": "count", "pass_index": 1, "scope": "command"}]  # fmt: skip
    s.add(m.COUNTERS, 1, {"family": 0, "source": "performance_query", "counters": counters})
    for f in range(6):
        tag = 10 + f
        s.workload(tag, "dispatch", api="vkCmdDispatch")
        submit = s.submit([(tag, 0)], frame=f)
        if f in (0, 3):
            name = "a" if f % 2 == 0 else "b"
            s.annex(submit, tag, counters={name: 100 + f}, counters_pass=f % 2)
        else:
            s.annex(submit, tag, counters=None, counters_reason="budget")
        s.frame(f)
    s.goodbye()
    path = capture_from(tmp_path, s, name="khr.vkscope")
    with open_capture(path) as cap:
        items = {w.frame: w for w in cap.workloads()}
        coverage = list(identity_coverage(cap))
    assert items[0].counters == {"a": 100, "b": 103} and items[0].counters_missing == {}
    assert items[3].counters == {"a": 100, "b": 103}
    for f in (1, 2, 4, 5):
        assert items[f].counters == {} and items[f].counters_reason == "budget"
    (only,) = coverage
    assert (only.frames, only.measured, only.left_out) == (6, 2, 4)
