"""The journal: what a capture keeps while it is written, and what finalizing or a reader builds.

Random streams of SUBMITs and ANNEXes (annexes before their SUBMIT, long after it, for SUBMITs
that never come, submitIDs sent twice), cut into random pieces and commits, must read back
exactly as a plain model of the protocol's rules says, both from the finalized file and from
the same file read before it was finalized.
"""

from __future__ import annotations

import contextlib
import random
import sqlite3
import time
from pathlib import Path
from typing import Any

import pytest

from harness.env import base_env, run, vkscope_cli
from vkscope.capture import CaptureServer, open_capture
from vkscope.capture.errors import CorruptCaptureError
from vkscope.capture.write import build
from vkscope.capture.write.client import Stream, connect
from vkscope.capture.write.ingest import Connection
from vkscope.capture.write.store import CaptureStore
from vkscope.capture.write.timing_fields import TIMING_FIELDS
from vkscope.capture.write.wire import Decoder

TAGS = range(1, 13)


def workload_fields(tag: int) -> dict[str, Any]:
    return {"device": 1, "type": "dispatch", "api": "vkCmdDispatch", "groups": [tag, 1, 1]}


class Model:
    """The protocol's rules, plainly: an annex names the last SUBMIT with its submitID received
    before it, or else the first after it; the instance is the first listing of its tagID;
    fields merge in arrival order."""

    def __init__(self) -> None:
        self.submits: list[tuple[int, list[int]]] = []  # (submitID, tags) in arrival order
        self.merged: dict[tuple[int, int], dict[str, Any]] = {}  # (submit index, ordinal)
        self._by_id: dict[int, list[int]] = {}
        self._pending: dict[int, list[tuple[int, dict[str, Any]]]] = {}

    def submit(self, submit_id: int, tags: list[int]) -> None:
        index = len(self.submits)
        self.submits.append((submit_id, tags))
        self._by_id.setdefault(submit_id, []).append(index)
        for tag, fields in self._pending.pop(submit_id, []):
            self._apply(index, tag, fields)

    def annex(self, submit_id: int, tag: int, fields: dict[str, Any]) -> None:
        if submit_id in self._by_id:
            self._apply(self._by_id[submit_id][-1], tag, fields)
        else:
            self._pending.setdefault(submit_id, []).append((tag, fields))

    def _apply(self, index: int, tag: int, fields: dict[str, Any]) -> None:
        tags = self.submits[index][1]
        if tag in tags:
            self.merged.setdefault((index, tags.index(tag)), {}).update(fields)

    def rows(self) -> list[tuple[Any, ...]]:
        """(submitID, tagID, metadata, gpu_begin_ns, gpu_end_ns, timing) per instance."""
        out = []
        for index, (submit_id, tags) in enumerate(self.submits):
            for ordinal, tag in enumerate(tags):
                fields = self.merged.get((index, ordinal), {})
                meta = workload_fields(tag) | {
                    k: v for k, v in fields.items() if k not in TIMING_FIELDS
                }
                timing = [fields.get(k) for k in ("gpu_begin_ns", "gpu_end_ns", "timing")]
                out.append((submit_id, tag, meta, *timing))
        return out


def random_stream(rng: random.Random) -> tuple[Stream, Model]:
    s, model = Stream(), Model()
    s.hello()
    s.device()
    for tag in TAGS:
        s.workload(tag, "dispatch", api="vkCmdDispatch", groups=[tag, 1, 1])
    next_id = 1
    sent: list[tuple[int, list[int]]] = []
    for _ in range(120):
        roll = rng.random()
        if roll < 0.35 or not sent:
            if sent and rng.random() < 0.1:
                submit_id = rng.choice(sent)[0]  # a submitID sent twice
            else:
                submit_id, next_id = next_id, next_id + 1
            tags = [rng.choice(TAGS) for _ in range(rng.randint(1, 6))]
            s.submit([(t, 0) for t in tags], submit_id=submit_id)
            model.submit(submit_id, tags)
            sent.append((submit_id, tags))
        else:
            if roll < 0.45:
                submit_id, tag = next_id + rng.randint(0, 3), rng.choice(TAGS)  # ahead of it
            else:
                submit_id, tags = rng.choice(sent[-3:] if rng.random() < 0.6 else sent)
                tag = rng.choice(tags) if rng.random() < 0.9 else rng.choice(TAGS)
            fields: dict[str, Any] = {rng.choice("abc"): rng.randint(0, 99)}
            if rng.random() < 0.3:
                begin = rng.randint(0, 10**6)
                fields |= {"gpu_begin_ns": begin, "gpu_end_ns": begin + 5, "timing": "ok"}
            s.annex(submit_id, tag, **fields)
            model.annex(submit_id, tag, fields)
    s.goodbye()
    return s, model


def read_rows(path: Path) -> list[tuple[Any, ...]]:
    with open_capture(path) as cap:
        return [
            (w.submit_id, w.tag_id, w.metadata, w.gpu_begin_ns, w.gpu_end_ns, w.timing)
            for w in cap.workloads()
        ]


def fed_in_pieces(
    path: Path, data: bytes, rng: random.Random, largest: int, *, decoded: bool, commits: float
) -> tuple[CaptureStore, Connection]:
    """A new store, fed `data` through one decoder in random pieces of up to `largest` bytes, as
    decoded messages or as the frames the server hands over, committed after a piece with
    probability `commits` and at the end."""
    store = CaptureStore(path, batch_messages=10**9, commit_interval_s=3600)
    conn = store.connect("test")
    decoder = Decoder()
    pos = 0
    while pos < len(data):
        piece = data[pos : pos + rng.randint(1, largest)]
        pos += len(piece)
        if decoded:
            store.rows.ingest(conn, decoder.feed(piece))  # decoded messages: the same journal
        else:
            store.rows.ingest_frames(conn, decoder.feed_frames(piece))
        if rng.random() < commits:
            store.commit()
    store.commit()
    return store, conn


def committed(path: Path, stream: Stream) -> tuple[CaptureStore, Connection]:
    """A new store that has taken the whole stream in one piece and committed it."""
    store = CaptureStore(path)
    conn = store.connect("test")
    store.rows.ingest_frames(conn, Decoder().feed_frames(stream.data()))
    store.commit()
    return store, conn


@pytest.mark.parametrize("seed", range(30))
def test_annexes_merge_as_the_protocol_says_whatever_the_order(
    tmp_path: Path, seed: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    rng = random.Random(seed)
    monkeypatch.setattr(build, "CHUNK_INSTANCES", rng.choice([1, 5, 40, 100_000]))
    stream, model = random_stream(rng)
    path = tmp_path / "c.vkscope"
    store, conn = fed_in_pieces(path, stream.data(), rng, 3000, decoded=seed % 2 == 0, commits=0.3)
    store.disconnect(conn)
    store.commit()
    expected = model.rows()
    assert read_rows(path) == expected  # read before finalizing: built by the reader
    assert store.finalize() == "complete"
    assert read_rows(path) == expected
    with sqlite3.connect(path) as db:
        assert db.execute("SELECT count(*) FROM journal").fetchone() == (0,)
        (instances,) = db.execute("SELECT count(*) FROM workload_instances").fetchone()
        assert instances == len(expected)


def test_annexes_for_submits_that_never_come_are_reported_once_finalized(tmp_path: Path) -> None:
    s = Stream()
    s.hello()
    s.device()
    s.workload(1, "dispatch")
    s.annex(5, 1, draws=1)  # SUBMIT 5 never comes
    sid = s.submit([(1, 0)])
    s.goodbye()
    path = tmp_path / "c.vkscope"
    store, conn = committed(path, s)
    with open_capture(path) as live:  # it may still come: nothing to say yet
        assert live.diagnostics() == [] and [w.submit_id for w in live.workloads()] == [sid]
    store.disconnect(conn)
    store.finalize()
    with open_capture(path) as cap:
        (diag,) = cap.diagnostics()
        assert diag.kind == "annex_unmatched" and "submit 5 tagID 1" in diag.reason


def test_a_workload_that_breaks_the_protocol_is_reported_when_built(tmp_path: Path) -> None:
    s = Stream()
    s.hello()
    s.device()
    s.add(0x03, 1, b'{"device": "one", "type": "dispatch", "api": ""}')  # a JSON object, but
    s.workload(2, "dispatch")
    s.submit([(2, 0)])
    s.goodbye()
    path = tmp_path / "c.vkscope"
    store, conn = committed(path, s)
    with open_capture(path) as live:
        (diag,) = live.diagnostics()  # the reader builds the journal, and finds it too
        assert (diag.kind, diag.offset) == ("invalid_payload", len(s.frames[0] + s.frames[1]))
    store.disconnect(conn)
    store.finalize()
    with open_capture(path) as cap:
        (diag,) = cap.diagnostics()
        assert diag.kind == "invalid_payload" and "Expected `int`, got `str`" in diag.reason
        assert diag.excerpt == s.frames[2][:32]
        assert (cap.meta.messages, cap.meta.bad_messages) == (len(s.frames) - 1, 1)
        assert [w.tag_id for w in cap.workloads()] == [2]


def test_a_damaged_journal_is_a_damaged_capture(tmp_path: Path) -> None:
    s = Stream()
    s.hello()
    s.device()
    s.workload(1, "dispatch")
    s.submit([(1, 0)])
    path = tmp_path / "c.vkscope"
    store, _ = committed(path, s)
    store.abandon()  # as if killed
    with sqlite3.connect(path) as db:
        db.execute("UPDATE journal SET data = x'c1c1c1' WHERE kind = 'submits'")
    with pytest.raises(CorruptCaptureError, match=r"journal row \d+ \(submits\) cannot be read"):
        open_capture(path)


def test_report_html_query_and_perfetto_read_a_capture_being_written(tmp_path: Path) -> None:
    path = tmp_path / "live.vkscope"
    s = Stream()
    s.hello(process="live")
    s.device(1, clock="clock_monotonic")
    s.labels(1, ["frame", "pass"])
    for tag in (1, 2):
        s.workload(tag, "dispatch", api="vkCmdDispatch", groups=[tag, 1, 1])
    for frame in range(3):
        sid = s.submit([(1, 1), (2, 1)], frame=frame, cpu_ns=1000 * frame)
        s.timing(sid, 1, 1000 * frame + 10, 1000 * frame + 20)
        s.annex(sid, 2, invocations=7)
        s.frame(frame)
    server = CaptureServer(path, [f"unix:{tmp_path / 's'}"])
    with server:
        sock = connect(server.addresses[0])
        sock.sendall(s.data())  # and the connection stays open: the capture goes on
        deadline = time.monotonic() + 10
        while server.counters().instances < 6 or server.counters().uncommitted:
            assert time.monotonic() < deadline
            time.sleep(0.01)
        env = base_env()
        sql = "SELECT count(*), sum(annex IS NOT NULL), sum(timing = 'ok') FROM workload_instances"
        res = run([vkscope_cli(), "query", "--format", "csv", path, sql], env)
        assert res.returncode == 0, res.stderr
        assert res.stdout.splitlines()[-1] == "6,3,3"
        res = run([vkscope_cli(), "report", path], env)
        assert res.returncode == 0, res.stderr
        assert "not finalized" in res.stdout and "frame/pass" in res.stdout
        res = run([vkscope_cli(), "html", "-o", tmp_path / "live.html", path], env)
        assert res.returncode == 0, res.stderr
        assert (tmp_path / "live.html").stat().st_size > 0
        res = run([vkscope_cli(), "perfetto", "-o", tmp_path / "live.pftrace", path], env)
        assert res.returncode == 0, res.stderr
        assert "6 workloads" in res.stdout + res.stderr
        sock.close()
        assert server.stop().status == "incomplete"
    assert sorted(p.name for p in tmp_path.iterdir() if p.suffix == ".vkscope") == [path.name]


@pytest.mark.parametrize("decoded", [False, True], ids=["frames", "messages"])
def test_frames_wait_in_the_journal_and_read_back_in_order(tmp_path: Path, decoded: bool) -> None:
    rng = random.Random(7)
    s = Stream()
    s.hello()
    s.device()
    s.workload(1, "dispatch")
    expected = []
    for number in range(40):
        s.submit([(1, 0)], frame=number)
        captured = rng.choice([True, False, None])
        s.frame(number, cpu_ns=1000 * number, captured=captured)
        expected.append((number, 1000 * number, captured))
    s.goodbye()
    path = tmp_path / "c.vkscope"
    store, conn = fed_in_pieces(path, s.data(), rng, 400, decoded=decoded, commits=0.2)
    assert store.counters().frames == 40
    # The file itself: its frames are in the journal, not in the table.
    with contextlib.closing(sqlite3.connect(path)) as db:
        assert db.execute("SELECT count(*) FROM frames").fetchone() == (0,)
        journaled = db.execute("SELECT total(count) FROM journal WHERE kind = 'frames'")
        assert journaled.fetchone() == (40,)

    def frames() -> list[tuple[Any, ...]]:
        with open_capture(path) as cap:
            return [(f.number, f.cpu_ns, f.captured) for f in cap.frames()]

    assert frames() == expected  # built by the reader
    store.disconnect(conn)
    assert store.finalize() == "complete"
    assert frames() == expected
    with sqlite3.connect(path) as db:
        assert db.execute("SELECT count(*) FROM journal").fetchone() == (0,)


def test_a_frame_that_breaks_the_protocol_is_reported_when_built(tmp_path: Path) -> None:
    s = Stream()
    s.hello()
    s.device()
    s.frame(0)
    s.add(0x05, 1, b'{"device": 1, "queue": "first", "cpu_ns": 5}')  # a JSON object, but
    s.frame(2)
    s.goodbye()
    path = tmp_path / "c.vkscope"
    store, conn = committed(path, s)
    bad_at = len(b"".join(s.frames[:3]))
    with open_capture(path) as live:
        (diag,) = live.diagnostics()  # the reader builds the journal, and finds it too
        assert (diag.kind, diag.offset) == ("invalid_payload", bad_at)
        assert [f.number for f in live.frames()] == [0, 2]
    store.disconnect(conn)
    store.finalize()
    with open_capture(path) as cap:
        (diag,) = cap.diagnostics()
        assert diag.kind == "invalid_payload" and "Expected `int`, got `str`" in diag.reason
        assert diag.message_type == 0x05 and diag.excerpt == s.frames[3][:32]
        assert (cap.meta.messages, cap.meta.bad_messages) == (len(s.frames) - 1, 1)
        assert [f.number for f in cap.frames()] == [0, 2]


def test_submits_and_their_completions_wait_in_the_journal(tmp_path: Path) -> None:
    s = Stream()
    s.hello()
    s.device()
    s.workload(1, "dispatch")
    completed = {}
    for number in range(30):
        sid = s.submit([(1, 0)], frame=number, cpu_ns=100 * number)
        if number % 3:
            s.submit_done(sid, 100 * number + 50)
            completed[sid] = 100 * number + 50
    s.submit([], frame=30)  # lists nothing: a submit row all the same
    # Times past i64 and past u64, stored as an INSERT stores them; in journal rows of their
    # own (the stream is committed every 333 bytes), as each takes a path of its own.
    for cpu_ns, stored in ((2**63 + 5, 5 - 2**63), (2**64 + 1, None)):
        sid = s.submit([(1, 0)], frame=31)
        s.submit_done(sid, cpu_ns)
        completed[sid] = stored
        for number in range(5):
            s.frame(number)
    s.submit_done(99, 7)  # for no SUBMIT
    s.goodbye()
    data = s.data()
    path = tmp_path / "c.vkscope"
    store = CaptureStore(path, batch_messages=10**9, commit_interval_s=3600)
    conn = store.connect("test")
    decoder = Decoder()
    for pos in range(0, len(data), 333):
        store.rows.ingest_frames(conn, decoder.feed_frames(data[pos : pos + 333]))
        store.commit()
    assert store.counters().submits == 33
    with contextlib.closing(sqlite3.connect(path)) as db:
        assert db.execute("SELECT count(*) FROM submits").fetchone() == (0,)

    def read() -> tuple[dict[int, int | None], list[Any], int]:
        with open_capture(path) as cap:
            done = {w.submit_id: w.submit_cpu_complete_ns for w in cap.workloads()}
            diagnostics = [(d.kind, d.offset) for d in cap.diagnostics()]
            return done, diagnostics, len(list(cap.execute("SELECT * FROM submits")[1]))

    expected = {sid: completed.get(sid) for sid in [*range(1, 31), 32, 33]}
    unmatched = [("submit_done_unmatched", len(b"".join(s.frames[:-2])))]
    assert read() == (expected, unmatched, 33)  # built by the reader
    store.disconnect(conn)
    assert store.finalize() == "complete"
    assert read() == (expected, unmatched, 33)
