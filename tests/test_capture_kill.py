"""A capture server killed outright keeps a readable file with everything it committed."""

from __future__ import annotations

import contextlib
import os
import random
import signal
import socket
import sqlite3
import struct
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

import vkscope
from vkscope import protocol as m
from vkscope.capture import Capture, open_capture
from vkscope.capture.write.client import Stream, connect

SERVER = """
import sys, time
from pathlib import Path
from vkscope.capture import CaptureServer
server = CaptureServer(Path(sys.argv[1]), ["unix:" + sys.argv[2]])
server.start()
print("ready", flush=True)
while True:
    time.sleep(1)
"""


def test_sigkill_keeps_what_was_committed(tmp_path: Path) -> None:
    capture, sock_path = tmp_path / "killed.vkscope", tmp_path / "s.sock"
    env = dict(os.environ)
    # The server process imports the same vkscope as this one (source tree or installed).
    env["PYTHONPATH"] = os.pathsep.join([str(Path(vkscope.__file__).parents[1]), *sys.path])
    proc = subprocess.Popen(
        [sys.executable, "-c", SERVER, str(capture), str(sock_path)],
        stdout=subprocess.PIPE,
        text=True,
        env=env,
    )
    try:
        assert proc.stdout is not None and proc.stdout.readline().strip() == "ready"
        s = Stream()
        s.hello(process="doomed")
        s.labels(1, ["frame"])
        for tag in range(1, 5001):
            s.workload(tag, "dispatch", groups=[tag, 1, 1])
        for first in range(1, 5001, 50):
            s.submit([(t, 1) for t in range(first, first + 50)], frame=first // 1000)
        s.frame(0)
        sock = connect(f"unix:{sock_path}")
        sock.sendall(s.data())
        time.sleep(0.5)  # several commit intervals
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=10)
        sock.close()
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        if proc.stdout is not None:
            proc.stdout.close()
    assert proc.returncode == -signal.SIGKILL
    with open_capture(capture) as cap:
        assert cap.meta.status == "capturing"  # never finalized
        assert cap.meta.process_name == "doomed"
        rows = list(cap.workloads())
        assert len(rows) == 5000
        assert [w.tag_id for w in rows] == list(range(1, 5001))
        assert rows[-1].metadata["groups"] == [5000, 1, 1]
        assert rows[0].label_path == "frame"
        assert [f.number for f in cap.frames()] == [0]
        cap.check()
    with open_capture(capture) as again:  # and it stays readable
        assert again.workload_count() == 5000


# -- killed at a random point of a long stream ----------------------------------------------------

HOST = """
import sys, time
from pathlib import Path
from vkscope.capture import CaptureServer
server = CaptureServer(Path(sys.argv[1]), ["unix:" + sys.argv[2]])
server.start()
print("ready", flush=True)
while True:  # until the whole stream is in the file (or the test kills us first)
    c = server.counters()
    if c.connections and not c.open_connections and not c.uncommitted:
        break
    time.sleep(0.005)
print("ingested", flush=True)
sys.stdin.readline()
print("finalizing", flush=True)
server.stop()
print("finalized", flush=True)
"""
WORKLOADS = 1_000_000
PER_SUBMIT = 64
_PLAIN = struct.Struct("<BQI")
_SEQUENCED = struct.Struct("<BQQI")


def _frame(mtype: int, tag: int, payload: bytes, sequence: int | None = None) -> bytes:
    if sequence is None:
        return _PLAIN.pack(mtype, tag, len(payload)) + payload
    return _SEQUENCED.pack(mtype, sequence, tag, len(payload)) + payload


@pytest.fixture(scope="module")
def long_stream() -> bytes:
    """A million workloads as a layer sends them: per submit, its 64 WORKLOADs, the SUBMIT and
    an ANNEX for one of them. Made from templates: the client would take seconds."""
    s = Stream()
    s.hello(process="long")
    s.device()
    parts = [s.data()]
    for sid in range(1, WORKLOADS // PER_SUBMIT + 1):
        first = (sid - 1) * PER_SUBMIT + 1
        for tag in range(first, first + PER_SUBMIT):
            body = b'{"device":1,"type":"dispatch","api":"vkCmdDispatch","groups":[%d,1,1]}' % tag
            parts.append(_frame(m.WORKLOAD, tag, body))
        listed = ",".join(f"[{t},0]" for t in range(first, first + PER_SUBMIT))
        body = b'{"device":1,"queue":0,"frame":%d,"workloads":[%s]}' % (sid, listed.encode())
        parts.append(_frame(m.SUBMIT, 0, body, sid))
        parts.append(_frame(m.ANNEX, first, b'{"invocations":%d}' % sid, sid))
    return b"".join(parts)


def _start_host(capture: Path, sock_path: Path) -> subprocess.Popen[str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(Path(vkscope.__file__).parents[1]), *sys.path])
    proc = subprocess.Popen(
        [sys.executable, "-c", HOST, str(capture), str(sock_path)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
        env=env,
    )
    assert proc.stdout is not None and proc.stdout.readline().strip() == "ready"
    return proc


def _committed_workloads(capture: Path) -> int:
    """WORKLOADs committed so far, read straight from the journal of a capture being written."""
    uri = capture.resolve().as_uri() + "?mode=ro"
    with sqlite3.connect(uri, uri=True) as db:
        row = db.execute("SELECT total(count) FROM journal WHERE kind = 'workloads'").fetchone()
    return int(row[0])


def _check_prefix(cap: Capture) -> tuple[int, int]:
    """The capture holds a prefix of the stream, whole submits, each instance described, the
    annexes of those submits merged; returns how many instances and workloads."""
    assert cap.meta.process_name == "long"
    count = cap.workload_count()
    assert count % PER_SUBMIT == 0
    _, rows = cap.execute(
        "SELECT count(*), min(tag_id), max(tag_id), total(tag_id != id) FROM workload_instances"
    )
    assert next(rows) == (count, 1 if count else None, count or None, 0)
    _, rows = cap.execute("SELECT count(*), max(submit_id), total(frame != submit_id) FROM submits")
    assert next(rows) == (count // PER_SUBMIT, (count // PER_SUBMIT) or None, 0)
    _, rows = cap.execute(
        "SELECT count(*), total(json_extract(metadata, '$.groups[0]') != tag_id) FROM workloads"
    )
    described, wrong = next(rows)
    assert described >= count and wrong == 0
    _, rows = cap.execute(
        "SELECT count(*), total(json_extract(annex, '$.invocations') != submit_id) "
        "FROM workload_instances WHERE annex IS NOT NULL"
    )
    annexed, wrong = next(rows)
    assert count // PER_SUBMIT - 1 <= annexed <= count // PER_SUBMIT and wrong == 0
    last = count // PER_SUBMIT
    for w in cap.workloads(frame=last) if last else ():  # the last submit, through the API
        assert (w.submit_id, w.type, w.metadata["groups"]) == (last, "dispatch", [w.tag_id, 1, 1])
    assert not [d for d in cap.diagnostics() if d.kind != "annex_unmatched"]
    return count, described


def _send_until_killed(sock: socket.socket, data: bytes) -> None:
    with contextlib.suppress(OSError):  # the host is killed halfway
        sock.sendall(data)


def test_killed_at_a_random_point_of_a_million_workloads(
    tmp_path: Path, long_stream: bytes
) -> None:
    capture, sock_path = tmp_path / "killed.vkscope", tmp_path / "s.sock"
    delay = random.uniform(0.0, 1.9)  # the stream takes a second or two: anywhere in it
    proc = _start_host(capture, sock_path)
    try:
        sock = connect(f"unix:{sock_path}")
        sender = threading.Thread(target=_send_until_killed, args=(sock, long_stream))
        sender.start()
        # The point is counted from the stream's first commit: on a loaded machine the host may
        # not have committed even its HELLO a tenth of a second in.
        deadline = time.monotonic() + 60
        while _committed_workloads(capture) == 0:
            assert time.monotonic() < deadline, "the host committed no workload in 60 s"
            time.sleep(0.01)
        time.sleep(delay)
        seen = _committed_workloads(capture)  # what is committed now must survive the kill
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=10)
        sender.join(timeout=10)
        sock.close()
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    with open_capture(capture) as cap:
        assert cap.meta.status == "capturing", f"killed after {delay:.3f} s"  # not finalized
        _, described = _check_prefix(cap)
    assert described >= seen, f"killed after {delay:.3f} s: {seen} workloads were committed"


@pytest.mark.solo
def test_killed_while_finalizing_a_million_workloads(tmp_path: Path, long_stream: bytes) -> None:
    capture, sock_path = tmp_path / "killed.vkscope", tmp_path / "s.sock"
    delay = random.uniform(0.05, 1.5)  # finalizing takes seconds
    proc = _start_host(capture, sock_path)
    assert proc.stdin is not None and proc.stdout is not None
    try:
        with connect(f"unix:{sock_path}") as sock:
            sock.sendall(long_stream)
        assert proc.stdout.readline().strip() == "ingested"
        proc.stdin.write("finalize\n")
        proc.stdin.flush()
        assert proc.stdout.readline().strip() == "finalizing"
        time.sleep(delay)
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=10)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    with open_capture(capture) as cap:
        # Rolled back to what was committed before finalizing began: everything, unbuilt.
        assert cap.meta.status == "capturing", f"killed after {delay:.3f} s"
        assert _check_prefix(cap) == (WORKLOADS, WORKLOADS)
