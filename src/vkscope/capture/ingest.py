"""Turns decoded messages into the rows of the next commit: the ingest hot path.

WORKLOAD and SUBMIT handlers only append tuples to lists (a SUBMIT's instances are built with
zip, in C), so that the store can hand each list to a single executemany. IDs are assigned here,
in arrival order, which is what makes instance id order the submission order.
"""

from __future__ import annotations

import gc
import sqlite3
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from itertools import repeat
from typing import Any, Final

import msgspec

from . import messages as m
from . import schema
from .annexes import AnnexMerger
from .completions import Completions
from .timing_fields import only_timing
from .wire import OVERSIZE, UNKNOWN_TYPE, Diagnostic, Message
from .workload_rows import WORKLOAD_SQL, WorkloadRows

_SUBMIT: Final = (
    "id, process, submit_id, device, queue, frame, cpu_ns, api, batch, first_instance, "
    "instance_count"
)
_INSTANCE: Final = "id, process, submit_row, submit_id, tag_id, ordinal, label_stack_id"
SQL: Final = {
    **WORKLOAD_SQL,
    "labels": "INSERT OR REPLACE INTO label_stacks VALUES (?,?,?,?,?)",
    "devices": "INSERT OR REPLACE INTO devices VALUES (?,?,?,?,?,?,?,?,?,?,?)",
    "queues": "INSERT OR REPLACE INTO queues VALUES (?,?,?,?,?,?,?)",
    "frames": "INSERT INTO frames VALUES (NULL,?,?,?,?,?,?,?)",
    # Columns filled later are left out rather than bound to None: binding costs per value.
    "submits": f"INSERT INTO submits ({_SUBMIT}) VALUES (?,?,?,?,?,?,?,?,?,?,?)",
    "instances": f"INSERT INTO workload_instances ({_INSTANCE}) VALUES (?,?,?,?,?,?,?)",
    "annexed": f"INSERT INTO workload_instances ({_INSTANCE}, annex) VALUES (?,?,?,?,?,?,?,?)",
    "timed": "INSERT INTO workload_instances VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?)",
    "annexes": "INSERT INTO annexes VALUES (NULL,?,?,?,?)",
    "logs": "INSERT INTO logs VALUES (NULL,?,?,?)",
    "diagnostics": "INSERT INTO diagnostics VALUES (NULL,?,?,?,?,?,?)",
}


class GcPause:
    """Holds off the cyclic garbage collector from the first message of a batch to its commit.

    Each decoded message and row is a new container that counts toward the collector's next
    pass, and a pass in the middle of a batch scans the rows waiting for the commit to find
    nothing (rows of plain values never form cycles): 5-10% of the ingest time. Paused until the
    commit has let go of the rows, the collector then finds little to scan. Pauses last one
    commit interval at most; if someone else turned the collector off, it is left alone.
    """

    def __init__(self) -> None:
        self._holding = False

    def hold(self) -> None:
        if not self._holding and gc.isenabled():
            gc.disable()
            self._holding = True

    def release(self) -> None:
        if self._holding:
            gc.enable()
            self._holding = False


def utc_now() -> str:
    return datetime.now(UTC).isoformat(timespec="milliseconds")


@dataclass(slots=True)
class Connection:
    """What the store knows about one connection (one process of the application)."""

    id: int
    peer: str
    connected_utc: str
    process: int = 0  # the id its rows are filed under: its own, or that of the one it continues
    state: str = schema.OPEN
    closed_utc: str | None = None
    bytes: int = 0
    messages: int = 0
    bad: int = 0
    skipped: int = 0
    dropped: int = 0
    diagnostics: int = 0
    hello: m.Hello | None = None


class Rows:
    """Rows not yet committed, and the counters a progress display shows."""

    def __init__(
        self, db: sqlite3.Connection, connections: list[Connection], max_diagnostics: int
    ) -> None:
        self.connections = connections  # the store's, shared
        self.max_diagnostics = max_diagnostics
        self.lists: dict[str, list[Any]] = {name: [] for name in SQL}
        self.workloads = WorkloadRows(self.lists)
        self.annexes = AnnexMerger(db, self.lists["instances"], connections, self.note)
        self.completions = Completions(self.note)
        # Committed rows; with the lengths of the pending lists, the live counters.
        self.counts = dict.fromkeys(("workloads", "instances", "submits", "frames"), 0)
        self.uncommitted = 0
        self._next_instance = 1
        self._next_submit = 1
        self._handlers: dict[int, Callable[[Connection, Message], None]] = {
            m.HELLO: self._hello,
            m.DEVICE: self._device,
            m.WORKLOAD: self.workloads.add,
            m.LABELS: self._labels,
            m.FRAME: self._frame,
            m.DROPPED: self._dropped,
            m.LOG: self._log,
            m.GOODBYE: self._goodbye,
            m.SUBMIT: self._submit,
            m.ANNEX: self._annex,
            m.SUBMIT_DONE: self._submit_done,
        }

    def _pending(self, name: str) -> int:
        return self.workloads.pending() if name == "workloads" else len(self.lists[name])

    def count(self, name: str) -> int:
        return self.counts[name] + self._pending(name)

    def committing(self) -> None:
        for name in self.counts:
            self.counts[name] += self._pending(name)

    def ingest(self, conn: Connection, items: Sequence[Message | Diagnostic]) -> None:
        handlers = self._handlers
        diagnostics = 0
        for item in items:
            if type(item) is Message:
                try:
                    handlers[item.type](conn, item)
                except Exception as exc:  # a host bug must cost one message, not the capture
                    diagnostics += 1
                    self._internal_error(conn, item, exc)
            else:
                diagnostics += 1
                self._decoder_diagnostic(conn, item)  # type: ignore[arg-type]
        conn.messages += len(items) - diagnostics
        self.uncommitted += len(items)

    def _internal_error(self, conn: Connection, msg: Message, exc: Exception) -> None:
        conn.bad += 1
        reason = f"{m.type_name(msg.type)} message not stored: {type(exc).__name__}: {exc}"
        self.note(conn, "internal_error", reason, msg.offset, msg.type)

    def _decoder_diagnostic(self, conn: Connection, diag: Diagnostic) -> None:
        if diag.kind == UNKNOWN_TYPE:
            conn.skipped += 1
        else:
            conn.bad += 1
        if diag.kind == OVERSIZE:
            conn.state = schema.OUT_OF_STEP
        self.note(conn, diag.kind, diag.reason, diag.offset, diag.type, diag.excerpt)

    def note(
        self,
        conn: Connection | None,
        kind: str,
        reason: str,
        offset: int | None = None,
        message_type: int | None = None,
        excerpt: bytes = b"",
    ) -> None:
        """Records a diagnostic; past the per-connection cap only the count grows."""
        if conn is not None:
            conn.diagnostics += 1
            if conn.diagnostics > self.max_diagnostics:
                return  # the store's final checks say how many were left out
        row = (conn.id if conn else None, offset, kind, message_type, reason, excerpt.hex())
        self.lists["diagnostics"].append(row)
        self.uncommitted += 1

    def _hello(self, conn: Connection, msg: Message) -> None:
        hello: m.Hello = msg.payload
        conn.hello = hello
        # The layer reconnects after losing the host and greets again; its IDs carry on from
        # the earlier connection, so its rows are filed under that connection's process id.
        earlier = [
            c for c in self.connections
            if c is not conn and c.closed_utc is not None and c.hello is not None
            and (c.hello.pid, c.hello.process) == (hello.pid, hello.process)
        ]  # fmt: skip
        if earlier and msg.offset == 0:
            conn.process = earlier[-1].process
        if hello.protocol != m.PROTOCOL_VERSION:
            reason = (
                f"layer speaks protocol {hello.protocol}; this vkscope reads protocol "
                f"{m.PROTOCOL_VERSION} and decodes what it can"
            )
            self.note(conn, "protocol", reason, msg.offset, m.HELLO)

    def _device(self, conn: Connection, msg: Message) -> None:
        d: m.Device = msg.payload
        driver = (d.driver_name, d.driver_info, d.api_version, d.timestamp_period_ns)
        clock = (d.clock.domain, d.clock.max_deviation_ns) if d.clock else (None, None)
        self.lists["devices"].append(
            (conn.process, msg.tag, d.name, d.vendor_id, d.device_id, *driver, *clock)
        )
        encode = msgspec.json.encode
        self.lists["queues"].extend(
            (
                conn.process,
                msg.tag,
                q.id,
                q.family,
                q.index,
                encode(q.flags).decode(),
                q.timestamp_valid_bits,
            )
            for q in d.queues
        )

    def _labels(self, conn: Connection, msg: Message) -> None:
        lab: m.Labels = msg.payload
        path = msgspec.json.encode(lab.labels).decode()
        self.lists["labels"].append((conn.process, lab.device, msg.tag, path, "/".join(lab.labels)))

    def _frame(self, conn: Connection, msg: Message) -> None:
        f: m.Frame = msg.payload
        row = (conn.process, f.device, msg.tag, f.queue, f.cpu_ns, f.reason, f.captured)
        self.lists["frames"].append(row)

    def _dropped(self, conn: Connection, msg: Message) -> None:
        conn.dropped = msg.payload.dropped

    def _goodbye(self, conn: Connection, msg: Message) -> None:
        conn.dropped = msg.payload.dropped
        if conn.state == schema.OPEN:
            conn.state = schema.GOODBYE

    def _log(self, conn: Connection, msg: Message) -> None:
        log: m.Log = msg.payload
        self.lists["logs"].append((conn.process, log.level, log.message))

    def _submit(self, conn: Connection, msg: Message) -> None:
        s: m.Submit = msg.payload
        seq: int = msg.sequence  # type: ignore[assignment]  # SUBMIT is a sequenced type
        n = len(s.workloads)
        first = self._next_instance
        row = self._next_submit
        self._next_instance = first + n
        self._next_submit = row + 1
        where = (s.device, s.queue, s.frame, s.cpu_ns, s.api, s.batch)
        self.lists["submits"].append((row, conn.process, seq, *where, first, n))
        instances = self.lists["instances"]
        start = len(instances)
        if n:
            tags, labels = zip(*s.workloads, strict=True)
            ids = range(first, first + n)
            same = repeat(conn.process), repeat(row), repeat(seq)
            instances.extend(zip(ids, *same, tags, range(n), labels, strict=False))
        self.annexes.submitted(conn.process, seq, start, n)

    def _annex(self, conn: Connection, msg: Message) -> None:
        seq: int = msg.sequence  # type: ignore[assignment]  # ANNEX is a sequenced type
        if not only_timing(msg.payload):  # those say nothing their instance's columns do not
            text = msg.raw.decode("utf-8", "replace")
            self.lists["annexes"].append((conn.process, seq, msg.tag, text))
        self.annexes.arrived(conn, seq, msg.tag, msg.payload, msg.offset)

    def _submit_done(self, conn: Connection, msg: Message) -> None:
        seq: int = msg.sequence  # type: ignore[assignment]  # SUBMIT_DONE is a sequenced type
        self.completions.arrived(conn, seq, msg.payload.cpu_ns, msg.offset)
