"""The timer's floor on the host (docs/timing.md, "The timer's floor"): what a DEVICE message's
`timer_floor` becomes in the capture, the uncertainty each GPU time carries, the near-floor mark
in every reader (the Python API, the report's table, JSON and CSV, the HTML page's data, the
Perfetto trace, the diff), frames that compiled something left out as warm-up, and a capture
from before the floor. Captures are protocol streams sent to a real capture server."""

from __future__ import annotations

import csv
import io
import json
import sqlite3
from pathlib import Path

from support.captures import capture_from
from support.diff_scenes import diff, diff_json
from support.floor_scenes import BIG_NS, TINY_NS, floor_stream, two_device_floor_stream
from support.perfetto import ReadTrace

from vkscope.analysis.report import default_tables, write_report, writer_for
from vkscope.capture import distributions, open_capture, warmup_frames
from vkscope.capture.read.timer_floor import NEAR_FLOOR_FACTOR
from vkscope.capture.write.client import Stream
from vkscope.export import export_perfetto
from vkscope.html import page_data


def floor_capture(tmp_path: Path, name: str = "floor.vkscope", **options: object) -> Path:
    return capture_from(tmp_path, floor_stream(**options), name=name)  # type: ignore[arg-type]


def report(path: Path, fmt: str) -> str:
    out = io.StringIO()
    tables = default_tables(fmt)
    with open_capture(path) as cap:
        write_report(cap, writer_for(fmt, out, tables), tables=tables)
    return out.getvalue()


def test_the_floor_is_stored_per_family_in_nanoseconds(tmp_path: Path) -> None:
    with open_capture(floor_capture(tmp_path)) as cap:
        floors = cap.timer_floors()
    assert len(floors) == 1
    f = floors[0]
    assert (f.process, f.device, f.family, f.period_ns, f.samples) == (1, 1, 0, 1.0, 32)
    assert f.back_to_back is not None and f.empty is not None
    assert (f.back_to_back.min_ns, f.back_to_back.median_ns, f.back_to_back.max_ns) == (8, 10, 12)
    assert (f.empty.min_ns, f.empty.median_ns, f.empty.max_ns) == (90, 100, 300)
    assert (f.floor_ns, f.uncertainty_ns, f.near_ns) == (100, 300, NEAR_FLOOR_FACTOR * 100)


def test_a_family_not_measured_says_why(tmp_path: Path) -> None:
    s = Stream()
    s.hello(process="game", pid=1)
    s.device(1, clock="clock_monotonic", timer_floor=[
        {"family": 0, "reason": "queue family has no timestamps"}])  # fmt: skip
    s.goodbye()
    with open_capture(capture_from(tmp_path, s)) as cap:
        (f,) = cap.timer_floors()
    assert (f.reason, f.empty, f.floor_ns, f.samples) == ("queue family has no timestamps",
                                                          None, None, 0)  # fmt: skip


def test_each_gpu_time_carries_its_uncertainty_and_near_floor_mark(tmp_path: Path) -> None:
    path = floor_capture(tmp_path)
    with open_capture(path) as cap:
        found = {(w.frame, w.gpu_ns): w for w in cap.workloads()}
        spread = {d.identity.ordinal: d for d in distributions(cap)}
    for f in range(6):
        tiny, big = found[(f, TINY_NS)], found[(f, BIG_NS)]
        assert (tiny.near_floor, tiny.gpu_ns_uncertainty) == (True, 300)
        assert (big.near_floor, big.gpu_ns_uncertainty) == (False, 300)
    assert spread[0].near_floor is True and spread[1].near_floor is False
    assert spread[0].gpu_ns_uncertainty == 300


def test_the_report_marks_times_near_the_floor(tmp_path: Path) -> None:
    path = floor_capture(tmp_path)
    doc = json.loads(report(path, "json"))
    (floor,) = doc["capture"]["timer_floors"]
    assert (floor["floor_ns"], floor["uncertainty_ns"], floor["near_floor_ns"]) == (100, 300, 400)
    assert doc["capture"]["near_floor_factor"] == NEAR_FLOOR_FACTOR
    rows = doc["workloads"]
    assert {(w["gpu_ns"], w["near_floor"], w["gpu_ns_uncertainty"]) for w in rows} == {
        (TINY_NS, True, 300),
        (BIG_NS, False, 300),
    }
    assert {(d["ordinal"], d["near_floor"]) for d in doc["distributions"]} == {
        (0, True),
        (1, False),
    }
    assert {(c["gpu_ns"], c["near_floor"]) for c in doc["costliest"]} >= {(BIG_NS, False)}
    text = report(path, "markdown")
    assert "**timer floor**: family 0: 100 ns (an empty workload min 90 ns, median 100 ns" in text
    assert f"GPU times within {NEAR_FLOOR_FACTOR}x their family's floor are marked" in text
    costliest = text[text.index("## Costliest workloads") :].split("\n## ")[0].splitlines()
    assert "| GPU time | floor |" in costliest[2]
    marked = [line.endswith("| near | 0.5% |") for line in costliest[4:14]]
    assert marked == [False] * 5 + [True] * 5


def test_csv_has_the_uncertainty_and_the_mark(tmp_path: Path) -> None:
    path = floor_capture(tmp_path)
    out = io.StringIO()
    with open_capture(path) as cap:
        write_report(cap, writer_for("csv", out, frozenset({"workloads"})),
                     tables=frozenset({"workloads"}))  # fmt: skip
    rows = list(csv.DictReader(io.StringIO(out.getvalue())))
    assert {(r["gpu_ns"], r["near_floor"], r["gpu_ns_uncertainty"]) for r in rows} == {
        (str(TINY_NS), "True", "300.0"),
        (str(BIG_NS), "False", "300.0"),
    }


def test_the_html_page_carries_each_queue_s_floor(tmp_path: Path) -> None:
    with open_capture(floor_capture(tmp_path)) as cap:
        data = page_data(cap)
    (queue,) = data["queues"]
    assert queue["floor"] == {"family": 0, "floor_ns": 100.0, "uncertainty_ns": 300.0,
                              "near_ns": 400.0, "factor": NEAR_FLOOR_FACTOR}  # fmt: skip


def test_the_perfetto_trace_carries_the_mark(tmp_path: Path) -> None:
    path = floor_capture(tmp_path)
    out = tmp_path / "floor.pftrace"
    export_perfetto(path, out)
    slices = [s for s in ReadTrace(out).slices() if "instance" in s.args]
    assert {(s.args["gpu_ns"], s.args["near_floor"], s.args["gpu_ns_uncertainty"])
            for s in slices} == {(TINY_NS, True, 300.0), (BIG_NS, False, 300.0)}  # fmt: skip


def test_diff_marks_identities_near_the_floor(tmp_path: Path) -> None:
    base = floor_capture(tmp_path, "base.vkscope")
    new = floor_capture(tmp_path, "new.vkscope")
    code, doc = diff_json(base, new)
    assert code == 0
    near = {c["ordinal"]: (c["base"]["near_floor"], c["new"]["near_floor"]) for c in doc["changes"]}
    assert near == {0: (True, True), 1: (False, False)}
    code, text, _ = diff(base, new, limit=None)
    assert code == 0
    assert "near the timer's floor (base and new)" in text


def test_an_identity_on_two_devices_is_judged_by_one_rule_in_every_reader(tmp_path: Path) -> None:
    # The identity's instances ran on a device whose floor its median is far past and on one
    # whose floor it is near: the instances carry their own device's mark, and the identity,
    # in the distributions as in the diff, is judged against the higher of its family's floors.
    path = capture_from(tmp_path, two_device_floor_stream(), name="two.vkscope")
    with open_capture(path) as cap:
        marks = {w.device: w.near_floor for w in cap.workloads()}
        (spread,) = list(distributions(cap))
    assert marks == {1: False, 2: True}
    assert spread.near_floor is True
    code, doc = diff_json(path, path)
    assert code == 0
    assert [(c["base"]["near_floor"], c["new"]["near_floor"]) for c in doc["changes"]] == [
        (True, True)
    ]


def test_frames_that_compiled_are_warm_up_frames(tmp_path: Path) -> None:
    path = floor_capture(tmp_path, compiled={0: 3, 3: 2})
    with open_capture(path) as cap:
        warm = warmup_frames(cap)
        frames = {f.number: (f.pipelines, f.shader_modules) for f in cap.frames()}
        assert warmup_frames(cap, 1).frames == {(1, 1, 0): "first 1"}
        steady = distributions(cap)
    assert frames[3] == (2, 0) and frames[1] == (0, 0)
    assert warm.frames == {(1, 1, 0): "first frame", (1, 1, 3): "compiled: 2 pipelines created"}
    assert "2 frames left out (0, 3: compiled, first frame)" in warm.describe()
    assert {d.frames for d in steady} == {4}
    doc = json.loads(report(path, "json"))
    assert {(w["frame"], w["why"]) for w in doc["capture"]["warmup"]["frames"]} == {
        (0, "first frame"),
        (3, "compiled: 2 pipelines created"),
    }


def test_a_capture_before_the_floor_opens_without_one(tmp_path: Path) -> None:
    path = floor_capture(tmp_path, compiled={2: 1})
    with sqlite3.connect(path) as db:
        db.execute("DROP TABLE timer_floors")
        db.execute("ALTER TABLE frames DROP COLUMN pipelines")
        db.execute("ALTER TABLE frames DROP COLUMN shader_modules")
        db.execute("PRAGMA user_version = 11")
        db.execute("UPDATE meta SET value = 11 WHERE key = 'schema_version'")
    with open_capture(path) as cap:
        assert cap.schema_version == 11
        assert cap.timer_floors() == []
        assert {(w.near_floor, w.gpu_ns_uncertainty) for w in cap.workloads()} == {(None, None)}
        assert {(f.pipelines, f.shader_modules) for f in cap.frames()} == {(None, None)}
        assert warmup_frames(cap).frames == {(1, 1, 0): "first frame"}
    doc = json.loads(report(path, "json"))
    assert doc["capture"]["timer_floors"] == []
    text = report(path, "markdown")
    assert "timer floor" not in text
