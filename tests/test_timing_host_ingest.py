"""Timing on the host: what the layer's timing messages become in the capture file.

Captures are made the way the layer makes them: protocol frames sent over a real Unix socket to
a real CaptureServer, read back from the SQLite file with open_capture and plain SQL.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

from support.captures import capture_from, downgrade_to_version_1, downgrade_to_version_2

from vkscope.capture import SCHEMA_VERSION, open_capture
from vkscope.capture.write.client import Stream
from vkscope.protocol import SUBMIT_DONE

GPU = 1_000_000_000  # where the synthetic GPU clock starts


def rows(path: Path, sql: str) -> list[tuple[object, ...]]:
    with sqlite3.connect(path) as db:
        return db.execute(sql).fetchall()


def timed_stream() -> tuple[Stream, list[int]]:
    s = Stream()
    s.hello(process="timed")
    s.device(1, "Timed GPU", queues=2, clock="clock_monotonic", max_deviation_ns=250)
    s.device(2, "Other GPU", queues=1, clock="device")
    s.labels(1, ["frame", "pass"])
    s.workload(1, "renderpass", width=64, height=64, draws=3, attachments=[])
    s.workload(2, "dispatch", groups=None, local_size=[8, 1, 1], invocations=None)
    s.workload(3, "buffer_transfer", kind="copy", bytes=256)
    a = s.submit([(1, 1), (2, 1), (3, 0)], frame=0, queue=0, cpu_ns=5)
    s.timing(a, 1, GPU, GPU + 400)
    s.annex(a, 2, groups=[4, 1, 1], invocations=32)  # not timing: stays in the annex JSON
    s.timing(a, 2, GPU + 500, GPU + 700)
    s.timing(a, 3, None, None, status="untimed", reason="queue family has no timestamps")
    s.submit_done(a, 9_000)
    s.frame(0, captured=True)
    b = s.submit([(1, 1), (1, 1)], frame=1, queue=1, cpu_ns=10)  # the same tag twice
    s.timing(b, 1, None, None, status="ambiguous", reason="secondary executed several times",
             serialization="full")  # fmt: skip
    s.timing(b, 1, GPU + 1000, GPU + 1100, serialization="full")  # a later annex wins
    s.frame(1, captured=False)
    s.frame(2)  # a layer that does not say
    s.goodbye()
    return s, [a, b]


def check_timed(path: Path, a: int, b: int) -> None:
    with open_capture(path) as cap:
        devices = {d.id: d for d in cap.devices()}
        assert (devices[1].clock_domain, devices[1].clock_max_deviation_ns) == (
            "clock_monotonic",
            250,
        )
        assert (devices[2].clock_domain, devices[2].clock_max_deviation_ns) == ("device", None)
        assert [(f.number, f.captured) for f in cap.frames()] == [(0, True), (1, False), (2, None)]
        w = list(cap.workloads())
        assert [(x.submit_id, x.tag_id) for x in w] == [(a, 1), (a, 2), (a, 3), (b, 1), (b, 1)]
        assert [(x.gpu_begin_ns, x.gpu_end_ns, x.gpu_ns) for x in w] == [
            (GPU, GPU + 400, 400), (GPU + 500, GPU + 700, 200), (None, None, None),
            (GPU + 1000, GPU + 1100, 100), (None, None, None),
        ]  # fmt: skip
        assert [(x.timing, x.serialization) for x in w] == [
            ("ok", "queue"), ("ok", "queue"), ("untimed", "queue"), ("ok", "full"), (None, None),
        ]  # fmt: skip
        # The later annex said nothing of a reason: the earlier one's stays (fields merge).
        assert w[3].timing_reason == "secondary executed several times"
        assert w[2].timing_reason == "queue family has no timestamps"
        assert [x.submit_cpu_complete_ns for x in w] == [9_000, 9_000, 9_000, None, None]
        assert w[1].metadata["groups"] == [4, 1, 1] and "gpu_begin_ns" not in w[1].metadata
        assert cap.diagnostics() == []
    # In the file: the timing fields live in their columns, not in the annex JSON.
    annex = rows(path, "SELECT annex FROM workload_instances ORDER BY id")
    assert annex == [(None,), ('{"groups":[4,1,1],"invocations":32}',), (None,), (None,), (None,)]
    # As received: every annex but those of timing alone, which the columns hold exactly.
    assert rows(path, "SELECT tag_id, payload FROM annexes") == [
        (2, '{"groups":[4,1,1],"invocations":32}')
    ]
    view = rows(path, "SELECT gpu_ns, timing, submit_cpu_complete_ns FROM instances_view")
    assert view[0] == (400, "ok", 9_000)


def test_timing_messages_land_in_their_columns(tmp_path: Path) -> None:
    s, (a, b) = timed_stream()
    check_timed(capture_from(tmp_path, s), a, b)


def test_annexes_merge_into_committed_instances(tmp_path: Path) -> None:
    # One message per batch and the stream in pieces: annexes meet their instances in the file.
    s, (a, b) = timed_stream()
    check_timed(capture_from(tmp_path, s, one_by_one=True), a, b)


def test_a_later_annex_without_timing_keeps_the_times(tmp_path: Path) -> None:
    s = Stream()
    s.hello()
    s.device(1, clock="device")
    s.workload(1, "dispatch", groups=None)
    sid = s.submit([(1, 0)])
    s.timing(sid, 1, 10, 30)
    s.annex(sid, 1, groups=[2, 2, 1])  # the indirect parameters, read back later
    s.goodbye()
    for one_by_one in (False, True):
        out = tmp_path / str(one_by_one)
        out.mkdir()
        with open_capture(capture_from(out, s, one_by_one=one_by_one)) as cap:
            (w,) = cap.workloads()
        assert (w.gpu_begin_ns, w.gpu_end_ns, w.timing, w.metadata["groups"]) == (
            10, 30, "ok", [2, 2, 1],
        )  # fmt: skip


def test_times_that_cannot_be_stored_exactly_are_null(tmp_path: Path) -> None:
    s = Stream()
    s.hello()
    s.device(1)
    s.workload(1, "dispatch")
    s.workload(2, "dispatch")
    s.workload(3, "dispatch")
    sid = s.submit([(1, 0), (2, 0), (3, 0)])
    s.annex(sid, 1, gpu_begin_ns="12", gpu_end_ns=20, timing="ok")
    s.annex(sid, 2, gpu_begin_ns=2**64 + 5, gpu_end_ns=1.5, timing=7)
    s.annex(sid, 3, gpu_begin_ns=True, gpu_end_ns=-(2**70), serialization=["queue"])
    s.goodbye()
    path = capture_from(tmp_path, s)
    got = rows(path, "SELECT gpu_begin_ns, gpu_end_ns, timing, serialization "
                     "FROM workload_instances ORDER BY id")  # fmt: skip
    assert got == [(None, 20, "ok", None), (None, None, None, None), (None, None, None, None)]
    sent = rows(path, "SELECT tag_id, payload FROM annexes ORDER BY seq")
    assert [tag for tag, _ in sent] == [1, 2, 3]  # the annexes table keeps what was sent
    assert "18446744073709551621" in str(sent[1][1])


def test_submit_done_for_an_unknown_submit_is_diagnosed(tmp_path: Path) -> None:
    s = Stream()
    s.hello()
    s.device(1)
    s.workload(1, "dispatch")
    sid = s.submit([(1, 0)])
    s.submit_done(sid, 100)
    s.submit_done(sid + 40, 200)
    s.submit_done(2**64 - 1, 300)
    s.goodbye()
    path = capture_from(tmp_path, s)
    assert rows(path, "SELECT submit_id, cpu_complete_ns FROM submits") == [(sid, 100)]
    with open_capture(path) as cap:
        kinds = [(d.kind, d.message_type, d.reason) for d in cap.diagnostics()]
    assert [k[:2] for k in kinds] == [("submit_done_unmatched", SUBMIT_DONE)] * 2
    assert f"submit {sid + 40}," in kinds[0][2] and f"submit {2**64 - 1}," in kinds[1][2]


def test_several_processes_keep_their_own_timing(tmp_path: Path) -> None:
    streams = []
    for n in range(2):
        s = Stream()
        s.hello(process=f"p{n}", pid=100 + n)
        s.device(1, clock="clock_monotonic")
        s.workload(1, "dispatch")
        sid = s.submit([(1, 0)])
        s.timing(sid, 1, 100 * n, 100 * n + 10 + n)
        s.submit_done(sid, 1000 + n)
        s.goodbye()
        streams.append(s)
    path = capture_from(tmp_path, streams)
    with open_capture(path) as cap:
        got = sorted((w.process, w.gpu_ns, w.submit_cpu_complete_ns) for w in cap.workloads())
    assert got == [(1, 10, 1000), (2, 11, 1001)]


def test_version_2_captures_still_open(tmp_path: Path) -> None:
    s, (a, b) = timed_stream()
    path = capture_from(tmp_path, s)
    downgrade_to_version_2(path)
    with open_capture(path) as cap:
        assert cap.meta.schema_version == 2
    check_timed(path, a, b)
    assert rows(path, "PRAGMA user_version") == [(2,)]


def test_version_1_captures_still_open(tmp_path: Path) -> None:
    assert SCHEMA_VERSION == 13
    s, _ = timed_stream()
    path = capture_from(tmp_path, s)
    downgrade_to_version_1(path)
    columns = [r[1] for r in rows(path, "PRAGMA table_info(workload_instances)")]
    assert "timing" not in columns
    with open_capture(path) as cap:
        assert cap.meta.schema_version == 1
        w = list(cap.workloads())
        assert len(w) == 5 and w[1].metadata["groups"] == [4, 1, 1]
        assert {(x.timing, x.gpu_ns, x.submit_cpu_complete_ns) for x in w} == {(None, None, None)}
        assert {d.clock_domain for d in cap.devices()} == {None}
        assert {f.captured for f in cap.frames()} == {None}
        names, found = cap.execute("SELECT id, timing, gpu_ns, serialization FROM instances_view")
        assert names == ["id", "timing", "gpu_ns", "serialization"]
        assert [r[1:] for r in found] == [(None, None, None)] * 5
        # The rowid-range join still uses the primary key through the compatibility views.
        _, plan = cap.execute(
            "EXPLAIN QUERY PLAN SELECT i.id FROM submits s CROSS JOIN workload_instances i "
            "ON i.id >= s.first_instance AND i.id < s.first_instance + s.instance_count"
        )
        assert any("INTEGER PRIMARY KEY" in str(r) for r in plan)
    assert rows(path, "PRAGMA user_version") == [(1,)]  # the file itself is untouched


def test_the_schema_version_is_recorded(tmp_path: Path) -> None:
    s, _ = timed_stream()
    path = capture_from(tmp_path, s)
    assert rows(path, "PRAGMA user_version") == [(SCHEMA_VERSION,)]
    assert rows(path, "SELECT value FROM meta WHERE key = 'schema_version'") == [(SCHEMA_VERSION,)]
