"""The read model's own rules, on captures made the real way: a workload's identity (computed in
SQL for streams sorted by identity and in Python for streams in submission order, which must
agree), the usable-GPU-time rule, and the rule that reads an older capture's annex timing."""

from __future__ import annotations

import sqlite3
from collections import Counter
from itertools import pairwise
from pathlib import Path

import msgspec
import pytest
from support.captures import capture_from, downgrade_to_version_1

from vkscope.capture import open_capture
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
            s.timing(sid, tag, begin, end, serialization="queue")
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


def test_a_version_1_capture_reads_its_annex_timing(capture: Path, tmp_path: Path) -> None:
    old = tmp_path / "v1.vkscope"
    old.write_bytes(capture.read_bytes())
    with sqlite3.connect(old) as db:
        db.execute(
            "UPDATE workload_instances SET annex = json_set(coalesce(annex, '{}'), "
            "'$.gpu_begin_ns', gpu_begin_ns, '$.gpu_end_ns', gpu_end_ns), "
            "gpu_begin_ns = NULL, gpu_end_ns = NULL"
        )
    downgrade_to_version_1(old)
    with open_capture(old) as cap, open_capture(capture) as new:
        assert [w.gpu_ns for w in cap.workloads()] == [w.gpu_ns for w in new.workloads()]
        assert queue_totals(cap, FrameKey(1, 1, 0)) == queue_totals(new, FrameKey(1, 1, 0))
