"""The capture server's idle reader (SCHED_IDLE) and the capture thread that guards it, with real
processes keeping every core busy."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from vkscope.capture import CaptureServer, open_capture
from vkscope.capture.client import Stream, connect

pytestmark = pytest.mark.skipif(
    not hasattr(os, "SCHED_IDLE"), reason="the system has no SCHED_IDLE policy"
)


@contextmanager
def every_core_busy() -> Iterator[None]:
    """Processes spinning at the normal policy, several per core: an idle-policy thread gets next
    to no CPU while they run."""
    spinners = [
        subprocess.Popen([sys.executable, "-c", "while True: pass"])
        for _ in range(4 * len(os.sched_getaffinity(0)))
    ]
    try:
        time.sleep(0.5)  # every one of them running
        yield
    finally:
        for p in spinners:
            p.kill()
        for p in spinners:
            p.wait()


def readers() -> set[threading.Thread]:
    return {t for t in threading.enumerate() if t.name == "vkscope-idle-reader"}


def idle_reader() -> threading.Thread:
    """The server's idle reader, once the capture thread has started it."""
    deadline = time.monotonic() + 10
    while True:
        found = [t for t in threading.enumerate() if t.name == "vkscope-idle-reader"]
        if found and found[0].native_id is not None:
            assert len(found) == 1
            return found[0]
        assert time.monotonic() < deadline, "no idle reader started"
        time.sleep(0.01)


def frames(first: int, count: int) -> bytes:
    """`count` frames of one dispatch each, as bytes to send."""
    piece = Stream()
    for n in range(first, first + count):
        piece.workload(n + 1, "dispatch", groups=[n, 1, 1])
        piece.submit([(n + 1, 0)], frame=n, submit_id=n + 1)
        piece.frame(n, cpu_ns=n)
    return piece.data()


def greeting() -> bytes:
    start = Stream()
    start.hello()
    start.device(1, "Test GPU")
    return start.data()


def goodbye() -> bytes:
    end = Stream()
    end.goodbye()
    return end.data()


def test_the_idle_reader_runs_at_the_idle_policy_and_takes_the_turns(tmp_path: Path) -> None:
    server = CaptureServer(tmp_path / "c.vkscope", [f"unix:{tmp_path / 's.sock'}"])
    server.start()
    try:
        reader = idle_reader()
        assert reader.native_id is not None
        # It sets its own policy as it starts.
        deadline = time.monotonic() + 10
        while os.sched_getscheduler(reader.native_id) != os.SCHED_IDLE:
            assert time.monotonic() < deadline, "the idle reader is not at SCHED_IDLE"
            time.sleep(0.01)
        with connect(server.addresses[0]) as sock:
            sock.sendall(greeting() + frames(0, 50) + goodbye())
        deadline = time.monotonic() + 10
        while server.counters().open_connections or server.counters().frames < 50:
            assert time.monotonic() < deadline, server.counters()
            time.sleep(0.01)
    finally:
        summary = server.stop()
    assert summary.status == "complete"
    assert summary.counters.instances == 50


def test_a_starved_idle_reader_is_taken_over_and_nothing_is_lost(tmp_path: Path) -> None:
    server = CaptureServer(tmp_path / "c.vkscope", [f"unix:{tmp_path / 's.sock'}"])
    server.start()
    sock = connect(server.addresses[0])
    try:
        sock.sendall(greeting())
        with every_core_busy():
            # Two seconds of a trickle while nothing is idle: the reader cannot keep up.
            for piece in range(40):
                sock.sendall(frames(piece * 10, 10))
                time.sleep(0.05)
            deadline = time.monotonic() + 20
            while server.counters().frames < 400 or server.counters().uncommitted:
                assert time.monotonic() < deadline, server.counters()
                time.sleep(0.05)
            assert server.takeovers >= 1
            sock.sendall(frames(400, 10) + goodbye())
            sock.close()
            # Stopping while the cores are still busy: the capture thread drains and finalizes.
            started = time.monotonic()
            summary = server.stop()
            assert time.monotonic() - started < 20
    finally:
        sock.close()
        if server._summary is None:
            server.stop()
    assert summary.status == "complete"
    with open_capture(server.capture_path) as cap:
        assert cap.meta.status == "complete"
        groups = [w.metadata["groups"][0] for w in cap.workloads()]
    assert sorted(groups) == list(range(410))


def test_without_the_idle_reader_the_capture_thread_takes_every_turn(tmp_path: Path) -> None:
    server = CaptureServer(
        tmp_path / "c.vkscope", [f"unix:{tmp_path / 's.sock'}"], idle_reader=False
    )
    before = readers()
    server.start()
    try:
        with connect(server.addresses[0]) as sock:
            sock.sendall(greeting() + frames(0, 20) + goodbye())
        deadline = time.monotonic() + 10
        while server.counters().open_connections or server.counters().frames < 20:
            assert time.monotonic() < deadline, server.counters()
            time.sleep(0.01)
        assert readers() <= before  # none started (one of an earlier test may have ended since)
    finally:
        summary = server.stop()
    assert summary.counters.instances == 20
    assert server.takeovers == 0
