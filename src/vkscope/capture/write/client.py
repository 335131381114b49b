"""A stand-in for the layer's side of a connection, for tests, benchmarks and experiments.

`Stream` builds protocol bytes the way the layer sends them (it numbers SUBMITs itself);
`connect` opens a connection to a capture server at a `unix:PATH` or `tcp:HOST:PORT` address.
"""

from __future__ import annotations

import socket
from typing import Any

from ... import protocol as m
from .wire import encode_frame


class Stream:
    """Protocol frames for one connection, accumulated in order."""

    def __init__(self) -> None:
        self.frames: list[bytes] = []
        self._next_submit = 1

    def data(self) -> bytes:
        return b"".join(self.frames)

    def add(
        self, message_type: int, tag: int, payload: object, sequence: int | None = None
    ) -> bytes:
        frame = encode_frame(message_type, tag, payload, sequence)
        self.frames.append(frame)
        return frame

    def hello(self, process: str = "app", pid: int = 1234, layer_version: str = "test") -> bytes:
        body = {"protocol": m.PROTOCOL_VERSION, "pid": pid, "process": process,
                "layer_version": layer_version}  # fmt: skip
        return self.add(m.HELLO, 0, body)

    def device(
        self,
        device: int = 1,
        name: str = "Test GPU",
        queues: int = 1,
        *,
        clock: str | None = None,
        max_deviation_ns: int | None = None,
        budget: float | None = None,
        timer_floor: list[dict[str, Any]] | None = None,
    ) -> bytes:
        """A DEVICE; `clock` (a clock domain) adds the `clock` object that timing sends, `budget`
        the cost budget (percent) its instruments are held to, `timer_floor` the timer's floor
        of its families (protocol TimerFloor: ticks of 1 ns)."""
        qs = [
            {"id": q, "family": q, "index": 0, "flags": ["graphics", "compute", "transfer"],
             "timestamp_valid_bits": 64}
            for q in range(queues)
        ]  # fmt: skip
        body = {"name": name, "vendor_id": 0x10DE, "device_id": 0x2684, "driver_name": "test",
                "driver_info": "1.0", "api_version": "1.3.230", "timestamp_period_ns": 1.0,
                "queues": qs}  # fmt: skip
        if clock is not None:
            body["clock"] = {"domain": clock, "max_deviation_ns": max_deviation_ns}
        if budget is not None:
            body["budget"] = budget
        if timer_floor is not None:
            body["timer_floor"] = timer_floor
        return self.add(m.DEVICE, device, body)

    def labels(self, stack_id: int, labels: list[str], device: int = 1) -> bytes:
        return self.add(m.LABELS, stack_id, {"device": device, "labels": labels})

    def workload(
        self, tag: int, type_: str, device: int = 1, api: str = "", **fields: Any
    ) -> bytes:
        return self.add(m.WORKLOAD, tag, {"device": device, "type": type_, "api": api, **fields})

    def submit(
        self,
        workloads: list[tuple[int, int]],
        *,
        frame: int = 0,
        queue: int = 0,
        device: int = 1,
        cpu_ns: int = 0,
        submit_id: int | None = None,
    ) -> int:
        """Sends a SUBMIT and returns its submitID."""
        if submit_id is None:
            submit_id = self._next_submit
        self._next_submit = submit_id + 1
        body = {"device": device, "queue": queue, "frame": frame, "cpu_ns": cpu_ns,
                "api": "vkQueueSubmit2", "batch": 0, "workloads": workloads}  # fmt: skip
        self.add(m.SUBMIT, 0, body, submit_id)
        return submit_id

    def annex(self, submit_id: int, tag: int, **fields: Any) -> bytes:
        return self.add(m.ANNEX, tag, fields, submit_id)

    def timing(
        self,
        submit_id: int,
        tag: int,
        begin_ns: int | None,
        end_ns: int | None,
        *,
        serialization: str = "queue",
        status: str = "ok",
        reason: str | None = None,
    ) -> bytes:
        """The timing annex the layer sends once the GPU is done with `submit_id.tag`."""
        fields: dict[str, Any] = {"gpu_begin_ns": begin_ns, "gpu_end_ns": end_ns,
                                  "serialization": serialization, "timing": status}  # fmt: skip
        if reason is not None:
            fields["timing_reason"] = reason
        return self.annex(submit_id, tag, **fields)

    def submit_done(self, submit_id: int, cpu_ns: int) -> bytes:
        return self.add(m.SUBMIT_DONE, 0, {"cpu_ns": cpu_ns}, submit_id)

    def frame(
        self,
        number: int,
        device: int = 1,
        queue: int = 0,
        cpu_ns: int = 0,
        *,
        captured: bool | None = None,
        budget: dict[str, Any] | None = None,
        pipelines: int | None = None,
        shader_modules: int | None = None,
    ) -> bytes:
        """A FRAME; `budget`: the cost budget controller's record of it (protocol BudgetFrame);
        `pipelines`, `shader_modules`: what the application created in it."""
        body: dict[str, Any] = {"device": device, "queue": queue, "cpu_ns": cpu_ns,
                                "reason": "present"}  # fmt: skip
        if captured is not None:
            body["captured"] = captured
        if pipelines is not None:
            body["pipelines"] = pipelines
        if shader_modules is not None:
            body["shader_modules"] = shader_modules
        if budget is not None:
            body["budget"] = budget
        return self.add(m.FRAME, number, body)

    def dropped(self, count: int) -> bytes:
        return self.add(m.DROPPED, 0, {"dropped": count})

    def goodbye(self, dropped: int = 0) -> bytes:
        return self.add(m.GOODBYE, 0, {"dropped": dropped})


def connect(address: str, timeout: float = 10.0) -> socket.socket:
    """A connected socket to a capture server's `unix:PATH` or `tcp:HOST:PORT` address."""
    kind, _, where = address.partition(":")
    if kind == "unix":
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        sock.settimeout(timeout)
        try:
            sock.connect("\0" + where[1:] if where.startswith("@") else where)
        except OSError:
            sock.close()
            raise
        return sock
    if kind == "tcp":
        host, _, port = where.rpartition(":")
        return socket.create_connection((host.strip("[]"), int(port)), timeout=timeout)
    raise ValueError(f"address {address!r}: expected unix:PATH or tcp:HOST:PORT")
