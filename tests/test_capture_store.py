"""The store: annexes merged wherever their instance is, odd IDs, checks made at the end."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from vkscope import protocol as m
from vkscope.capture import CorruptCaptureError, open_capture
from vkscope.capture.read.stored_columns import stored_meta
from vkscope.capture.write.client import Stream
from vkscope.capture.write.ingest import Connection
from vkscope.capture.write.store import CaptureStore
from vkscope.capture.write.wire import Decoder


class Feeder:
    """One in-process connection into a store, with commits where the test puts them."""

    def __init__(self, store: CaptureStore) -> None:
        self.store = store
        self.conn: Connection = store.connect("test")
        self.decoder = Decoder()

    def send(self, stream: Stream) -> None:
        data = stream.data()
        stream.frames.clear()
        self.store.rows.ingest(self.conn, self.decoder.feed(data))


def new_store(tmp_path: Path) -> CaptureStore:
    # Batches are committed only when a test says so.
    return CaptureStore(tmp_path / "c.vkscope", batch_messages=10**9, commit_interval_s=3600)


def test_annexes_merge_in_arrival_order_across_batches(tmp_path: Path) -> None:
    store = new_store(tmp_path)
    feed, s = Feeder(store), Stream()
    s.hello()
    s.device()
    s.workload(1, "dispatch", groups=None, invocations=None, local_size=[8, 1, 1])
    s.workload(2, "renderpass", draws=5)
    s.annex(10, 1, groups=[1, 1, 1], note="early")  # before its SUBMIT, which comes a batch later
    feed.send(s)
    store.commit()
    s.submit([(1, 0), (2, 0)], submit_id=10)
    s.annex(10, 1, groups=[2, 1, 1])  # same batch as the SUBMIT: merged in memory
    s.annex(11, 2, draws=7)  # before its SUBMIT, same batch
    s.submit([(2, 0)], submit_id=11)
    feed.send(s)
    store.commit()
    s.annex(10, 1, groups=[3, 1, 1], invocations=24)  # SUBMIT already in the file: UPDATE
    s.annex(10, 2, draws=6)
    feed.send(s)
    store.commit()
    s.annex(10, 2, draws=9)  # and again, in a later batch
    s.goodbye()
    feed.send(s)
    store.disconnect(feed.conn)
    assert store.finalize() == "complete"
    with open_capture(tmp_path / "c.vkscope") as cap:
        rows = list(cap.workloads())
        assert [(w.submit_id, w.tag_id, w.ordinal) for w in rows] == [
            (10, 1, 0),
            (10, 2, 1),
            (11, 2, 0),
        ]
        assert rows[0].metadata["groups"] == [3, 1, 1]
        assert rows[0].metadata["invocations"] == 24
        assert rows[0].metadata["note"] == "early"
        assert rows[0].metadata["local_size"] == [8, 1, 1]
        assert rows[1].metadata["draws"] == 9
        assert rows[2].metadata["draws"] == 7
        assert cap.diagnostics() == []
        assert len(list(cap._rows("SELECT * FROM annexes"))) == 6


def test_annexes_that_match_nothing_are_diagnosed(tmp_path: Path) -> None:
    store = new_store(tmp_path)
    feed, s = Feeder(store), Stream()
    s.hello()
    s.device()
    s.workload(1, "dispatch")
    s.submit([(1, 0)], submit_id=5)
    s.annex(5, 99, draws=1)  # tag not in that submit (same batch)
    feed.send(s)
    store.commit()
    s.annex(5, 98, draws=1)  # tag not in that submit (submit in the file)
    s.annex(6, 1, draws=1)  # submit that never comes
    s.goodbye()
    feed.send(s)
    store.disconnect(feed.conn)
    store.finalize()
    with open_capture(tmp_path / "c.vkscope") as cap:
        reasons = [d.reason for d in cap.diagnostics()]
        assert len(reasons) == 3
        assert "tagID 99, which SUBMIT 5 does not list" in reasons[0]
        assert "tagID 98, which SUBMIT 5 does not list" in reasons[1]
        assert "submit 6 tagID 1: that SUBMIT never arrived" in reasons[2]
        assert all(d.offset is not None for d in cap.diagnostics())
        assert next(cap.workloads()).metadata.get("draws") is None


def test_u64_ids_past_sqlite_integers_round_trip(tmp_path: Path) -> None:
    store = new_store(tmp_path)
    feed, s = Feeder(store), Stream()
    big_tag, big_submit = 2**64 - 1, 2**63 + 5
    s.hello()
    s.labels(2**63, ["huge"])
    s.workload(big_tag, "buffer_transfer", kind="fill", bytes=2**64 - 1)
    s.submit([(big_tag, 2**63)], submit_id=big_submit)
    feed.send(s)
    store.commit()
    s.annex(big_submit, big_tag, pixels=3)
    s.goodbye()
    feed.send(s)
    store.disconnect(feed.conn)
    assert store.finalize() == "complete"
    with open_capture(tmp_path / "c.vkscope") as cap:
        (w,) = cap.workloads()
        assert (w.submit_id, w.tag_id, w.type) == (big_submit, big_tag, "buffer_transfer")
        assert w.metadata["bytes"] == 2**64 - 1  # exact in the JSON
        assert w.metadata["pixels"] == 3
        assert w.labels == ("huge",)


def test_a_submit_listing_ids_past_64_bits_is_diagnosed_and_the_rest_kept(tmp_path: Path) -> None:
    store = new_store(tmp_path)
    feed, s = Feeder(store), Stream()
    s.hello()
    s.device()
    s.workload(1, "dispatch")
    kept = [
        s.submit([(1, 0)]),
        s.submit([(1, 0)], cpu_ns=10**19),  # a long number, but no ID out of range
        s.submit([(2**64 - 1, 0), (1, -(2**63))]),  # the ends of the range
    ]
    dropped = [s.submit([(1, 0), (2**64, 0)]), s.submit([(1, -(2**63) - 1)])]
    s.goodbye()
    offsets = [len(b"".join(s.frames[:6])), len(b"".join(s.frames[:7]))]
    sent = len(s.frames)
    feed.send(s)
    store.disconnect(feed.conn)
    store.finalize()
    with open_capture(tmp_path / "c.vkscope") as cap:
        bad = [d for d in cap.diagnostics() if d.kind == "invalid_payload"]
        assert len(bad) == 2 and all("past 64 bits" in d.reason for d in bad)
        assert [d.offset for d in bad] == offsets
        assert sorted({w.submit_id for w in cap.workloads()}) == kept
        assert dropped[0] not in kept
        assert (cap.meta.messages, cap.meta.bad_messages) == (sent - 2, 2)
        assert store.counters().submits == 3


def test_instances_of_undescribed_workloads_are_kept_and_diagnosed(tmp_path: Path) -> None:
    store = new_store(tmp_path)
    feed, s = Feeder(store), Stream()
    s.hello()
    s.device()
    s.submit([(42, 7)], submit_id=1)
    s.goodbye()
    feed.send(s)
    store.disconnect(feed.conn)
    store.finalize()
    with open_capture(tmp_path / "c.vkscope") as cap:
        (w,) = cap.workloads()
        assert (w.type, w.metadata, w.labels) == (None, {}, ())
        kinds = {d.kind for d in cap.diagnostics()}
        assert kinds == {"missing_workload", "missing_labels"}


def test_a_capture_nobody_connected_to_is_incomplete(tmp_path: Path) -> None:
    store = new_store(tmp_path)
    assert store.finalize() == "incomplete"
    with open_capture(tmp_path / "c.vkscope") as cap:
        assert [d.kind for d in cap.diagnostics()] == ["no_connection"]
        assert list(cap.workloads()) == []


def test_the_file_is_one_file_once_finalized(tmp_path: Path) -> None:
    store = new_store(tmp_path)
    feed, s = Feeder(store), Stream()
    s.hello()
    s.goodbye()
    feed.send(s)
    store.disconnect(feed.conn)
    store.finalize()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["c.vkscope"]


def test_diagnostics_per_connection_are_capped(tmp_path: Path) -> None:
    store = CaptureStore(tmp_path / "c.vkscope", max_diagnostics_per_connection=10)
    feed, s = Feeder(store), Stream()
    for _ in range(25):
        s.add(m.WORKLOAD, 1, b"not json")
    feed.send(s)
    store.disconnect(feed.conn)
    store.finalize()
    with open_capture(tmp_path / "c.vkscope") as cap:
        diags = cap.diagnostics()
        assert len(diags) == 11
        assert diags[-1].reason == "15 more diagnostics were not recorded"
        assert cap.meta.bad_messages == 25


def test_a_workload_described_twice_keeps_its_later_description(tmp_path: Path) -> None:
    store = new_store(tmp_path)
    feed, s = Feeder(store), Stream()
    s.hello()
    s.workload(1, "dispatch", groups=[1, 1, 1])
    s.workload(1, "dispatch", groups=[2, 2, 2])
    s.submit([(1, 0)])
    feed.send(s)
    store.commit()
    with open_capture(tmp_path / "c.vkscope") as unfinished:  # before the index exists
        assert [w.metadata["groups"] for w in unfinished.workloads()] == [[2, 2, 2]]
    store.disconnect(feed.conn)
    store.finalize()
    with open_capture(tmp_path / "c.vkscope") as cap:
        assert [w.metadata["groups"] for w in cap.workloads()] == [[2, 2, 2]]
        assert list(cap._rows("SELECT count(*) FROM workloads")) == [(1,)]


def test_a_finishing_step_that_cannot_read_the_capture_leaves_it_as_built(tmp_path: Path) -> None:
    """The step after the build (the instance columns, in vkscope run) that fails on the file
    says why in a diagnostic; the capture is finalized all the same and read row by row."""
    seen: list[int] = []

    def refuse(db: sqlite3.Connection, path: Path) -> None:
        seen.append(db.execute("SELECT count(*) FROM workload_instances").fetchone()[0])
        raise CorruptCaptureError(path, "damaged: a planted failure")

    store = CaptureStore(tmp_path / "c.vkscope", finishing=refuse)
    feed, s = Feeder(store), Stream()
    s.hello()
    s.device()
    s.workload(1, "dispatch")
    s.submit([(1, 0), (1, 0)])
    s.goodbye()
    feed.send(s)
    store.disconnect(feed.conn)
    assert store.finalize() == "complete"
    assert seen == [2]  # the step saw the instances built and committed
    with open_capture(tmp_path / "c.vkscope") as cap:
        (said,) = [d for d in cap.diagnostics() if d.kind == "finishing"]
        assert said.reason == "not finished: damaged: a planted failure"
        assert stored_meta(cap) is None
        assert len(list(cap.workloads())) == 2


def test_a_finishing_step_that_fails_any_other_way_costs_nothing_either(tmp_path: Path) -> None:
    """An unexpected failure inside the step's own transaction (a library missing from the
    host, found on the device: the ADBC driver is an extra) is rolled back and said; the capture
    is whole, not lost."""

    def missing(db: sqlite3.Connection, path: Path) -> None:
        db.execute("BEGIN")
        db.execute("DELETE FROM instance_columns")
        raise ModuleNotFoundError("No module named 'adbc_driver_sqlite'")

    store = CaptureStore(tmp_path / "c.vkscope", finishing=missing)
    feed, s = Feeder(store), Stream()
    s.hello()
    s.device()
    s.workload(1, "dispatch")
    s.submit([(1, 0)])
    s.goodbye()
    feed.send(s)
    store.disconnect(feed.conn)
    assert store.finalize() == "complete"
    with open_capture(tmp_path / "c.vkscope") as cap:
        (said,) = [d for d in cap.diagnostics() if d.kind == "finishing"]
        assert "ModuleNotFoundError" in said.reason and "adbc_driver_sqlite" in said.reason
        assert len(list(cap.workloads())) == 1
