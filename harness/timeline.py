"""Helpers for the timeline tests: a capture receiver on a Unix socket and a frame decoder.

The decoder is written from docs/protocol.md independently of the layer's encoder and of the
host's capture package, so the tests check the wire format itself; only the message codes come
from the protocol definition, and every message the layer sends is checked against it
(support.protocol). test_support_oracles.py tests the decoder on hand-made frames.
"""

from __future__ import annotations

import contextlib
import json
import os
import socket
import struct
import tempfile
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from harness import protocol

HELLO, DEVICE, WORKLOAD, LABELS, FRAME, DROPPED, LOG, GOODBYE = (
    protocol.CODES[name]
    for name in ("HELLO", "DEVICE", "WORKLOAD", "LABELS", "FRAME", "DROPPED", "LOG", "GOODBYE")
)
SUBMIT, ANNEX, SUBMIT_DONE = (protocol.CODES[n] for n in ("SUBMIT", "ANNEX", "SUBMIT_DONE"))

_SEQUENCE_BIT = protocol.DEFINITION["frame"]["sequence_bit"]
_PLAIN = struct.Struct("<BQI")
_SEQUENCED = struct.Struct("<BQQI")


@dataclass(frozen=True)
class Message:
    type: int
    sequence: int | None
    tag: int
    payload: Any


def decode(stream: bytes, strict: bool = True) -> list[Message]:
    """Every frame of one connection. A truncated last frame is an error, unless not `strict`
    (a connection the host cut) where it is left out."""
    out = []
    pos = 0
    while pos < len(stream):
        header = _SEQUENCED.size if stream[pos] & _SEQUENCE_BIT else _PLAIN.size
        if not strict and (
            len(stream) - pos < header or len(stream) - pos - header < _header_length(stream, pos)
        ):
            break
        kind = stream[pos]
        if kind & _SEQUENCE_BIT:
            _, sequence, tag, length = _SEQUENCED.unpack_from(stream, pos)
            pos += _SEQUENCED.size
        else:
            _, tag, length = _PLAIN.unpack_from(stream, pos)
            sequence = None
            pos += _PLAIN.size
        payload = stream[pos : pos + length]
        assert len(payload) == length, f"truncated frame of type {kind:#x}"
        pos += length
        out.append(Message(kind, sequence, tag, json.loads(payload)))
    return out


def _header_length(stream: bytes, pos: int) -> int:
    if stream[pos] & _SEQUENCE_BIT:
        return int(_SEQUENCED.unpack_from(stream, pos)[3])
    return int(_PLAIN.unpack_from(stream, pos)[2])


@dataclass
class Capture:
    """What the layer sent over every connection of one run, in order."""

    connections: list[list[Message]] = field(default_factory=list)

    @property
    def messages(self) -> list[Message]:
        return [m for c in self.connections for m in c]

    def of(self, kind: int) -> list[Message]:
        return [m for m in self.messages if m.type == kind]

    @property
    def workloads(self) -> dict[int, dict[str, Any]]:
        return {m.tag: m.payload for m in self.of(WORKLOAD)}

    @property
    def submits(self) -> list[Message]:
        return self.of(SUBMIT)

    @property
    def labels(self) -> dict[int, list[str]]:
        stacks: dict[int, list[str]] = {0: []}
        for m in self.of(LABELS):
            stacks[m.tag] = m.payload["labels"]
        return stacks

    def annexes(self, submit: int, tag: int) -> dict[str, Any]:
        """The fields every ANNEX for instance submit.tag gives, merged in arrival order."""
        merged: dict[str, Any] = {}
        for m in self.of(ANNEX):
            if (m.sequence, m.tag) == (submit, tag):
                merged.update(m.payload)
        return merged

    def instance(self, submit: int, tag: int) -> dict[str, Any]:
        return {**self.workloads[tag], **self.annexes(submit, tag)}

    def submitted(self) -> Iterator[tuple[Message, int, dict[str, Any], list[str]]]:
        """(SUBMIT, tag, instance, label stack) for every workload of every SUBMIT, in order."""
        stacks = self.labels
        for s in self.submits:
            for tag, stack in s.payload["workloads"]:
                assert s.sequence is not None
                yield s, tag, self.instance(s.sequence, tag), stacks[stack]


class Receiver:
    """A capture server stand-in: accepts connections on a Unix socket and keeps their bytes."""

    def __init__(self) -> None:
        # Short: Unix socket paths are limited to about 100 bytes, pytest's tmp_path may not be.
        self.folder = Path(tempfile.mkdtemp(prefix="vkscope-tl-", dir="/tmp"))
        self.path = self.folder / "host.sock"
        self._server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self._server.bind(str(self.path))
        self._server.listen(8)
        self._streams: list[bytearray] = []
        self._threads: list[threading.Thread] = []
        self._clients: list[socket.socket] = []
        self._lock = threading.Lock()
        self._accepting = threading.Thread(target=self._accept, daemon=True)
        self._accepting.start()

    @property
    def address(self) -> str:
        return f"unix:{self.path}"

    def received(self) -> int:
        with self._lock:
            return sum(len(s) for s in self._streams)

    def _accept(self) -> None:
        while True:
            try:
                client, _ = self._server.accept()
            except OSError:
                return
            stream = bytearray()
            with self._lock:
                self._streams.append(stream)
                self._clients.append(client)
            reader = threading.Thread(target=self._read, args=(client, stream), daemon=True)
            reader.start()
            self._threads.append(reader)

    def _read(self, client: socket.socket, stream: bytearray) -> None:
        with client:
            while True:
                try:
                    data = client.recv(1 << 16)
                except OSError:
                    return
                if not data:
                    return
                with self._lock:
                    stream += data

    def kill(self) -> None:
        """The host dies: the listening socket and every connection close at once."""
        self._server.close()
        with self._lock:
            for c in self._clients:
                with contextlib.suppress(OSError):
                    c.shutdown(socket.SHUT_RDWR)
                c.close()

    def finish(self, timeout: float = 10.0, strict: bool = True) -> Capture:
        """After the application has exited: waits for its connections to end and decodes them
        (`strict`: see decode)."""
        for t in self._threads:
            t.join(timeout)
        self._server.close()
        with self._lock:
            streams = [bytes(s) for s in self._streams]
        capture = Capture([decode(s, strict) for s in streams])
        wrong = [p for m in capture.messages for p in protocol.problems(m.type, m.payload)]
        assert not wrong, f"the layer sent what protocol.toml does not define: {wrong[:5]}"
        return capture

    def close(self) -> None:
        self.kill()
        with contextlib.suppress(OSError):
            os.unlink(self.path)
            os.rmdir(self.folder)
