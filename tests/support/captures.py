"""Captures made the real way for tests: protocol streams sent to a real CaptureServer over a Unix
socket, each on its own connection, and the finished file returned."""

from __future__ import annotations

import time
import uuid
from collections.abc import Iterable
from pathlib import Path

from vkscope.capture import CaptureServer
from vkscope.capture.write.client import Stream, connect


def capture_from(
    tmp_path: Path,
    streams: Iterable[Stream] | Stream,
    *,
    name: str = "cap.vkscope",
    one_by_one: bool = False,
) -> Path:
    """Sends each stream over its own connection to a real capture server writing
    `tmp_path`/`name`; returns the file, finalized (its status checked: complete).

    `one_by_one` sends one message at a time and waits for the server to commit it, so that
    every annex meets an instance that is already in the file (or not there yet).
    """
    streams = [streams] if isinstance(streams, Stream) else list(streams)
    path = tmp_path / name
    server = CaptureServer(path, [f"unix:@vkscope-test-{uuid.uuid4().hex}"],
                           batch_messages=1 if one_by_one else 50_000,
                           commit_interval_s=0.01)  # fmt: skip
    with server:
        for sent, s in enumerate(streams, 1):
            with connect(server.addresses[0]) as sock:
                for piece in s.frames if one_by_one else [s.data()]:
                    sock.sendall(piece)
                    if one_by_one:
                        _settle(server)
            deadline = time.monotonic() + 30
            while True:
                c = server.counters()
                if c.connections == sent and not c.open_connections and not c.uncommitted:
                    break
                assert time.monotonic() < deadline, f"the server did not take the stream: {c}"
                time.sleep(0.01)
        summary = server.stop()
    assert summary.status == "complete", summary
    return path


def _settle(server: CaptureServer) -> None:
    deadline = time.monotonic() + 5
    time.sleep(0.005)
    while server.counters().uncommitted and time.monotonic() < deadline:
        time.sleep(0.005)
