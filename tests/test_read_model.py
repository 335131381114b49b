"""The read model's own rules, on captures made the real way: a workload's identity (computed in
SQL for streams sorted by identity, in Python for streams in submission order and with numpy for
the columnar read, which must agree), the usable-GPU-time rule, the rule that reads an older
capture's annex timing, and the columnar read holding what the records hold."""

from __future__ import annotations

import sqlite3
from collections import Counter
from itertools import pairwise
from pathlib import Path

import msgspec
import pytest
from support.captures import capture_from, downgrade_to_version_1

from vkscope.capture import CorruptCaptureError, open_capture
from vkscope.capture.read.columns import CHECKED_AS_READ, instance_batches
from vkscope.capture.read.gpu_time import usable_gpu_ns
from vkscope.capture.read.queries import by_identity, frames_with_work, queue_totals
from vkscope.capture.read.records import FrameKey
from vkscope.capture.write.client import Stream

T0 = 1_000_000


def scene() -> Stream:
    """Two frames whose submits interleave across two queues (frame 0's last submit comes after
    frame 1's first), types and labels repeated within a scope, an undescribed tagID, a queue no
    DEVICE message listed, and GPU times of every kind."""
    s = Stream()
    s.hello(process="identity")
    s.device(1, "GPU", queues=2, clock="clock_monotonic")
    s.labels(1, ["frame", "shadows"])
    s.labels(2, ["frame", "a/b"])  # a label with a slash: compared label by label
    s.labels(3, ["frame", "a", "b"])
    s.workload(1, "renderpass", width=8, height=8, draws=1, attachments=[])
    s.workload(2, "dispatch", groups=[1, 1, 1], local_size=[1, 1, 1], invocations=1)
    # tagID 3 is never described
    submits = [
        (0, 0, [(1, 1), (2, 1), (2, 1), (1, 1), (3, 0)]),
        (1, 0, [(2, 2), (2, 3), (2, 2)]),
        (0, 1, [(2, 1), (2, 1)]),  # frame 0 again, after frame 1 began
        (1, 1, [(1, 1)]),
        (1, 7, [(2, 1)]),  # queue 7: no DEVICE message listed it
    ]
    for n, (frame, queue, listed) in enumerate(submits):
        sid = s.submit(listed, frame=frame, queue=queue, cpu_ns=T0 * (n + 1))
        for k, (tag, _) in enumerate(listed):
            begin = T0 * (n + 1) + 1000 * k
            # One end before its begin, one begin alone: neither is a usable GPU time.
            end = begin - 1 if (n, k) == (1, 1) else None if (n, k) == (0, 2) else begin + 100
            reason = "no query" if (n, k) == (0, 2) else None
            s.timing(sid, tag, begin, end, serialization="queue", reason=reason)
        # Sampled counters and the clock in the annexes of some: numbers, and one that is not.
        s.annex(sid, listed[0][0], counters={"a": n, "b": 0.5}, clock_changed=n % 2 == 1)
        if n == 2:
            s.annex(sid, listed[1][0], counters={"a": "many", "c": 7})
    s.goodbye()
    return s


@pytest.fixture(scope="module")
def capture(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return capture_from(tmp_path_factory.mktemp("identity"), scene())


def _python(path: Path) -> Counter[tuple[object, ...]]:
    """(frame, queue, labels as JSON, type, ordinal, queue id, GPU time) of every instance, as the
    records in submission order give them."""
    with open_capture(path) as cap:
        return Counter(
            (w.frame, w.identity.queue, msgspec.json.encode(list(w.identity.labels)).decode(),
             w.identity.type or "", w.identity.ordinal, w.queue, w.gpu_ns)
            for w in cap.workloads() if w.identity is not None
        )  # fmt: skip


def _sql(path: Path) -> Counter[tuple[object, ...]]:
    """The same, as the streams sorted by identity give them, frame by frame."""
    found: Counter[tuple[object, ...]] = Counter()
    with open_capture(path) as cap:
        keys = [k for k, _ in frames_with_work(cap)]
        for key in keys:
            for v in by_identity(cap, key=key):
                assert (v.process, v.device, v.frame) == (key.process, key.device, key.frame)
                found[(key.frame, *v[:6])] += 1
    return found


def test_the_two_ways_of_counting_identities_agree(capture: Path) -> None:
    python, sql = _python(capture), _sql(capture)
    assert python == sql
    # Frame 0's dispatches under frame/shadows: 2 on queue 0, then 2 more on queue 1.
    shadows = sorted(
        (k[1], k[4]) for k in python if k[0] == 0 and k[2] == '["frame","shadows"]' and k[3]
        == "dispatch"
    )  # fmt: skip
    assert shadows == [("0.0", 0), ("0.0", 1), ("1.0", 0), ("1.0", 1)]
    # A label path with a slash is not the path of two labels.
    frame1 = sorted((k[2], k[4]) for k in python if k[0] == 1 and k[1] == "0.0")
    assert frame1 == [('["frame","a","b"]', 0), ('["frame","a/b"]', 0), ('["frame","a/b"]', 1)]
    assert {k[1] for k in python if k[5] == 7} == {"id 7"}
    assert {k[3] for k in python if k[0] == 0 and k[1] == "0.0" and k[2] == "[]"} == {""}


def test_a_stream_sorted_by_identity_names_each_instance_as_its_record_does(
    capture: Path,
) -> None:
    with open_capture(capture) as cap:
        records = {w.id: w.identity for w in cap.workloads()}
        whole = list(by_identity(cap))
    assert sorted(v.id for v in whole) == sorted(records)
    assert all(v.identity == records[v.id] for v in whole)
    # An identity's instances, frame after frame, in submission order.
    orders = [v.order for v in whole]
    assert orders == sorted(orders)
    for a, b in pairwise(whole):
        if a.order == b.order:
            assert a.id < b.id


def test_a_stream_in_submission_order_keeps_counting_a_frame_resumed_later(
    capture: Path,
) -> None:
    with open_capture(capture) as cap:
        whole = [(w.id, w.identity) for w in cap.workloads()]
        by_frame = [(w.id, w.identity) for f in (0, 1) for w in cap.workloads(frame=f)]
        by_queue = [(w.id, w.identity) for q in (0, 1, 7) for w in cap.workloads(queue=q)]
    assert sorted(by_frame) == sorted(w for w in whole if w[0] in dict(by_frame))
    assert sorted(by_queue) == sorted(whole)


def test_one_rule_says_which_gpu_time_is_usable(capture: Path) -> None:
    assert [usable_gpu_ns(b, e) for b, e in ((5, 9), (5, 5), (9, 5), (5, None), (None, 9))] == [
        4, 0, None, None, None,
    ]  # fmt: skip
    assert usable_gpu_ns(True, 9) is None  # type: ignore[arg-type]  # not an integer time
    with open_capture(capture) as cap:
        records = list(cap.workloads(frame=1, queue=0))
        totals = queue_totals(cap, FrameKey(1, 1, 1))
    # The third instance lists tagID 2 again: annexes name the first instance with their tagID.
    assert [w.gpu_ns for w in records] == [100, None, None]
    assert totals[0] == (3, 100)


def _version_1(capture: Path, tmp_path: Path) -> Path:
    """The capture as a version 1 vkscope wrote it: its GPU times in the annexes."""
    old = tmp_path / "v1.vkscope"
    old.write_bytes(capture.read_bytes())
    with sqlite3.connect(old) as db:
        db.execute(
            "UPDATE workload_instances SET annex = json_set(coalesce(annex, '{}'), "
            "'$.gpu_begin_ns', gpu_begin_ns, '$.gpu_end_ns', gpu_end_ns), "
            "gpu_begin_ns = NULL, gpu_end_ns = NULL"
        )
    downgrade_to_version_1(old)
    return old


def test_a_version_1_capture_reads_its_annex_timing(capture: Path, tmp_path: Path) -> None:
    old = _version_1(capture, tmp_path)
    with open_capture(old) as cap, open_capture(capture) as new:
        assert [w.gpu_ns for w in cap.workloads()] == [w.gpu_ns for w in new.workloads()]
        assert queue_totals(cap, FrameKey(1, 1, 0)) == queue_totals(new, FrameKey(1, 1, 0))


def _records(path: Path, counters: tuple[str, ...]) -> list[dict[str, object]]:
    """What the records say of each instance, under the columns' names."""
    with open_capture(path) as cap:
        return [
            {"id": w.id, "process": w.process, "device": w.device, "frame": w.frame,
             "queue_id": w.queue, "queue": w.identity.queue, "label_path": w.label_path,
             "labels_json": msgspec.json.encode(list(w.identity.labels)).decode(),
             "type": w.type, "ordinal": w.identity.ordinal, "gpu_ns": w.gpu_ns,
             "timing": w.timing, "timing_reason": w.timing_reason,
             "serialization": w.serialization, "draws": w.metadata.get("draws"),
             "groups_x": (w.metadata.get("groups") or [None])[0],
             "clock_changed": w.metadata.get("clock_changed"),
             **{c: w.counters.get(c) for c in counters}}
            for w in cap.workloads() if w.identity is not None
        ]  # fmt: skip


def _columns(
    path: Path, counters: tuple[str, ...], batch_rows: int, *, stored: bool = True
) -> list[dict[str, object]]:
    with open_capture(path, cells_checked_as_read=CHECKED_AS_READ) as cap:
        batches = list(instance_batches(cap, counters, batch_rows=batch_rows, stored=stored))
    return [row for b in batches for row in b.to_pylist()]


@pytest.mark.parametrize("batch_rows", [1, 4, 1000])
def test_the_columns_hold_what_the_records_hold(capture: Path, batch_rows: int) -> None:
    counters = ("a", "b", "c")
    records = _records(capture, counters)
    columns = _columns(capture, counters, batch_rows)  # counters the capture did not store
    assert len(columns) == len(records) == 12
    stored = _columns(capture, (), batch_rows)  # the columns stored when it was finalized
    assert stored == [{k: c[k] for k in stored[0]} for c in columns]
    assert [{k: c[k] for k in r} for c, r in zip(columns, records, strict=True)] == records
    # What the scene gave them, seen through the columns.
    assert {c["a"] for c in columns} == {0.0, 1.0, 3.0, 4.0, None}  # "many" is not a number
    assert [c["c"] for c in columns if c["c"] is not None] == [7.0]
    assert {c["clock_changed"] for c in columns} == {True, False, None}
    assert {c["timing_reason"] for c in columns} == {"no query", None}


def test_the_columns_of_an_older_capture_are_read_through_its_presentation(
    capture: Path, tmp_path: Path
) -> None:
    old = _version_1(capture, tmp_path)
    with open_capture(old) as cap:
        assert not cap.reads_file_directly(("workload_instances",))
    records = _records(old, ("a",))
    columns = _columns(old, ("a",), 3)
    assert [{k: c[k] for k in r} for c, r in zip(columns, records, strict=True)] == records
    assert [c["gpu_ns"] for c in columns] == [r["gpu_ns"] for r in _records(capture, ())]


@pytest.mark.parametrize(
    "damage", ["tag_id = 'seven' WHERE id = 9", "label_stack_id = 2.5 WHERE id = 1",
               "annex = '{' WHERE id = 6", "timing_reason = x'00ff' WHERE id = 11"],
)  # fmt: skip
def test_the_columns_refuse_a_damaged_cell(capture: Path, tmp_path: Path, damage: str) -> None:
    """In the first batch of rows or a later one: the cells these columns read from the rows
    are checked as they are read, instead of by open_capture."""
    damaged = tmp_path / "damaged.vkscope"
    damaged.write_bytes(capture.read_bytes())
    with sqlite3.connect(damaged) as db:
        db.execute(f"UPDATE workload_instances SET {damage}")
    with pytest.raises(CorruptCaptureError, match="damaged"):
        _columns(damaged, ("a",), 4, stored=False)
