"""Turns what a connection sends into the rows of the next commit: the ingest hot path.

WORKLOAD, SUBMIT, SUBMIT_DONE, ANNEX and FRAME messages, nearly all of a busy stream, are kept
for the journal (journal.py) as the decoder hands them over: WORKLOADs as runs of raw frames, a
FRAME as its frame, an ANNEX as its payload's bytes, a SUBMIT as its submit row and the list its
payload decoded to, a SUBMIT_DONE as its time. The rest become table rows. IDs are
assigned here, in arrival order, which is what makes instance id order the submission order.
"""

from __future__ import annotations

import gc
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any, Final

import msgspec

from ... import protocol as m
from ...protocol import header_bytes, split_run
from .. import schema
from . import journal
from .timer_floor import floor_rows
from .wire import (
    INVALID_PAYLOAD,
    OVERSIZE,
    UNKNOWN_TYPE,
    Diagnostic,
    Frames,
    Message,
)

SQL: Final = {
    "labels": "INSERT OR REPLACE INTO label_stacks VALUES (?,?,?,?,?)",
    "devices": "INSERT OR REPLACE INTO devices VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?)",
    "queues": "INSERT OR REPLACE INTO queues VALUES (?,?,?,?,?,?,?)",
    "timer_floors": "INSERT OR REPLACE INTO timer_floors VALUES (?,?,?,?,?,?,?,?,?,?,?,?)",
    "device_counters": "INSERT INTO device_counters VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?)",
    "command_buffer_counters": "INSERT INTO command_buffer_counters VALUES (?,?,?,?,?)",
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
    greeted: bool = False  # a HELLO came first, or a message before it was diagnosed
    refused_at: int | None = None  # stream offset of a HELLO this host refused
    # Waiting for the next commit's journal rows (journal.py).
    workloads: list[journal.RunEntry] = field(default_factory=list)
    workload_count: int = 0  # WORKLOAD frames in `workloads`
    submit_rows: list[journal.SubmitRow] = field(default_factory=list)
    completions: list[journal.Completion] = field(default_factory=list)
    submits: list[journal.SubmitEntry] = field(default_factory=list)
    submit_offsets: list[int] = field(default_factory=list)  # stream offset of each of `submits`
    annexes: list[journal.AnnexEntry] = field(default_factory=list)
    frame_ends: list[journal.RunEntry] = field(default_factory=list)  # FRAMEs


def _frame(message_type: int, tag: int, payload: bytes) -> bytes:
    """An unsequenced frame, as the journal keeps it (a run of one)."""
    return header_bytes(message_type, None, tag, len(payload)) + payload


class Rows:
    """Rows and journal entries not yet committed, and the counters a progress display shows."""

    def __init__(self, connections: list[Connection], max_diagnostics: int) -> None:
        self.connections = connections  # the store's, shared
        self.max_diagnostics = max_diagnostics
        self.lists: dict[str, list[Any]] = {name: [] for name in SQL}
        # Everything received so far (committed or not), for the live counters.
        self.totals = dict.fromkeys(("workloads", "instances", "submits", "frames"), 0)
        self.uncommitted = 0
        self.pending_instances = 0  # listed by the SUBMITs of the batch: they weigh on memory
        self._next_instance = 1
        self._next_submit = 1
        self._devices: set[tuple[int, int]] = set()  # (process, device) announced by DEVICE
        self._unannounced: set[tuple[int, int]] = set()  # named by a SUBMIT, diagnosed once
        # DEVICEs taken since the capture server last looked: it tells the GPU sampler.
        self.announced: list[tuple[Connection, int, m.Device]] = []
        self._journaling: dict[int, Connection] = {}  # connections with journal entries waiting
        self._handlers: dict[int, Callable[[Connection, Message], None]] = {
            m.HELLO: self._hello,
            m.DEVICE: self._device,
            m.COUNTERS: self._counters,
            m.WORKLOAD: self._workload,
            m.LABELS: self._labels,
            m.FRAME: self._frame,
            m.DROPPED: self._dropped,
            m.LOG: self._log,
            m.GOODBYE: self._goodbye,
            m.SUBMIT: self._submit,
            m.ANNEX: self._annex,
            m.SUBMIT_DONE: self._submit_done,
            m.COMMAND_BUFFER_COUNTERS: self._command_buffer_counters,
        }

    def count(self, name: str) -> int:
        return self.totals[name]

    # -- taking messages in ----------------------------------------------------------------------

    def ingest(self, conn: Connection, items: Sequence[Message | Diagnostic]) -> None:
        """Takes decoded messages and diagnostics, in stream order."""
        if conn.refused_at is not None:
            return
        if not conn.greeted:
            self._check_greeting(conn, items, None)
        self._take(conn, items, None)

    def ingest_frames(self, conn: Connection, frames: Frames) -> None:
        """Takes what Decoder.feed_frames made of a piece of the stream."""
        if conn.refused_at is not None:
            return
        items, workloads, annexes = frames.items, frames.workloads, frames.annexes
        frame_ends = frames.frame_ends
        if not conn.greeted:
            hot = [(w[0], m.WORKLOAD) for w in workloads[:1]]
            hot += [(a[2], m.ANNEX) for a in annexes[:1]]
            hot += [(f[0], m.FRAME) for f in frame_ends[:1]]
            self._check_greeting(conn, items, min(hot) if hot else None)
        if annexes:
            # Where each ANNEX came among the SUBMITs: the last submit row before it.
            before: list[int] = []
            self._take(conn, items, before)
            annexes = [(a[0], a[1], a[2], a[3], before[a[4]]) for a in annexes]
        else:
            self._take(conn, items, None)
        count = frames.workload_count
        if conn.refused_at is not None:  # refused in this very piece: keep what came before
            cut = conn.refused_at
            kept = [split_run(*w, m.WORKLOAD) for w in workloads if w[0] < cut]
            count = sum(map(len, kept))
            workloads = [
                (w[0][1], b"".join(_frame(m.WORKLOAD, t, p) for t, _, p in w)) for w in kept if w
            ]
            annexes = [a for a in annexes if a[2] < cut]
            frame_ends = [f for f in frame_ends if f[0] < cut]
        if workloads or annexes or frame_ends:
            conn.workloads += workloads
            conn.workload_count += count
            conn.annexes += annexes
            conn.frame_ends += frame_ends
            self._journaling[conn.id] = conn
            taken = count + len(annexes) + len(frame_ends)
            conn.messages += taken
            self.uncommitted += taken
            self.totals["workloads"] += count
            self.totals["frames"] += len(frame_ends)

    def _take(
        self, conn: Connection, items: Sequence[Message | Diagnostic], before: list[int] | None
    ) -> None:
        handlers = self._handlers
        diagnostics = taken = 0
        for item in items:
            if before is not None:
                before.append(self._next_submit - 1)
            taken += 1
            if type(item) is Message:
                try:
                    handlers[item.type](conn, item)
                except Exception as exc:  # a host bug must cost one message, not the capture
                    diagnostics += 1
                    self._internal_error(conn, item, exc)
                if conn.refused_at is not None:  # this HELLO: not taken, nor anything after
                    diagnostics += 1
                    break
            else:
                diagnostics += 1
                self._decoder_diagnostic(conn, item)  # type: ignore[arg-type]
        if before is not None:  # one more than items (for an ANNEX after the last of them)
            before += [self._next_submit - 1] * (len(items) + 1 - len(before))
        conn.messages += taken - diagnostics
        self.uncommitted += taken

    def _check_greeting(
        self,
        conn: Connection,
        items: Sequence[Message | Diagnostic],
        first_hot: tuple[int, int] | None,
    ) -> None:
        """A layer greets first: a message before any HELLO is diagnosed, once a connection.

        `first_hot` is the (offset, type) of the first WORKLOAD or ANNEX, which are not items.
        """
        first = next((i for i in items if type(i) is Message), None)
        if first is None and first_hot is None:
            return  # nothing decoded yet
        conn.greeted = True
        if first is not None and (first_hot is None or first.offset < first_hot[0]):
            if first.type == m.HELLO:
                return
            offset, mtype = first.offset, first.type
        else:
            offset, mtype = first_hot  # type: ignore[misc]
        reason = (
            f"{m.type_name(mtype)} before any HELLO: a vkscope layer greets the host first, so "
            "this peer may not be one; what it sends is stored all the same"
        )
        self.note(conn, "before_hello", reason, offset, mtype)

    def take_journal(self) -> list[tuple[int, int, str, int, bytes]]:
        """The journal rows of everything waiting, taken out of the connections (journal.py).

        Per connection, SUBMITs go before ANNEXes: an annex that came before its SUBMIT in the
        same batch is still placed by the submit row it came after. Submit rows go before
        completions, which update them.
        """
        rows = []
        for conn in self._journaling.values():
            # First: it drops the submit row of a SUBMIT the journal cannot hold.
            submits = self._encoded_submits(conn) if conn.submits else None
            instances = sum(len(s[3]) for s in conn.submits)
            for kind, rows_of in (
                (journal.SUBMIT_ROWS, conn.submit_rows),
                (journal.COMPLETIONS, conn.completions),
            ):
                if rows_of:
                    data = journal.encode_rows(rows_of)
                    rows.append((conn.id, conn.process, kind, len(rows_of), data))
                    rows_of.clear()
            if submits is not None:
                rows.append((conn.id, conn.process, journal.SUBMITS, instances, submits))
                conn.submits.clear()
                conn.submit_offsets.clear()
            for kind, entries, count in (
                (journal.WORKLOADS, conn.workloads, conn.workload_count),
                (journal.ANNEXES, conn.annexes, len(conn.annexes)),
                (journal.FRAMES, conn.frame_ends, len(conn.frame_ends)),
            ):
                if entries:
                    rows.append((conn.id, conn.process, kind, count, journal.encode(entries)))
                    entries.clear()
            conn.workload_count = 0
        self._journaling.clear()
        self.pending_instances = 0
        return rows

    def _encoded_submits(self, conn: Connection) -> bytes:
        """The connection's waiting SUBMITs, encoded for the journal.

        msgspec decodes JSON integers of any size, and msgpack encodes those of i64 and u64,
        which is what an ID may be (schema.to_sql_int). So the encoder checks every tagID and
        label stack id for nothing; checking them one by one as each SUBMIT arrives cost more
        than decoding it. Only when the encoder refuses is each SUBMIT checked, and one that
        lists an ID past 64 bits is dropped with its submit row, as if refused on arrival.
        """
        try:
            return journal.encode(conn.submits)
        except OverflowError:
            pass
        kept, dropped = [], set()
        for entry, offset in zip(conn.submits, conn.submit_offsets, strict=True):
            try:
                journal.encode([entry])
            except OverflowError:
                dropped.add(entry[0])
                conn.bad += 1
                conn.messages -= 1
                self.totals["submits"] -= 1
                self.totals["instances"] -= len(entry[3])
                reason = "SUBMIT lists a tagID or label stack id past 64 bits"
                self.note(conn, INVALID_PAYLOAD, reason, offset, m.SUBMIT)
            else:
                kept.append(entry)
        conn.submit_rows[:] = [row for row in conn.submit_rows if row[0] not in dropped]
        conn.submits[:] = kept
        return journal.encode(kept)

    # -- diagnostics -----------------------------------------------------------------------------

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
        if hello.protocol != m.PROTOCOL_VERSION:
            # Its messages may mean something else than this host would read them as: nothing
            # more is taken from this connection, and the capture says why.
            newer = "update vkscope" if hello.protocol > m.PROTOCOL_VERSION else "update the layer"
            reason = (
                f"layer speaks protocol {hello.protocol}, this vkscope reads protocol "
                f"{m.PROTOCOL_VERSION} only: the connection was refused and the rest of what it "
                f"sent ignored ({newer} so that both speak the same version)"
            )
            self.note(conn, "protocol", reason, msg.offset, m.HELLO)
            conn.state = schema.REFUSED
            conn.refused_at = msg.offset
            return
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

    def _device(self, conn: Connection, msg: Message) -> None:
        d: m.Device = msg.payload
        self._devices.add((conn.process, msg.tag))
        driver = (d.driver_name, d.driver_info, d.api_version, d.timestamp_period_ns)
        clock = (d.clock.domain, d.clock.max_deviation_ns) if d.clock else (None, None)
        identity = (conn.process, msg.tag, d.name, d.vendor_id, d.device_id)
        self.lists["devices"].append((*identity, *driver, *clock, d.pci, d.budget))
        self.lists["timer_floors"].extend(
            floor_rows(conn.process, msg.tag, d.timestamp_period_ns, d.timer_floor or ())
        )
        self.announced.append((conn, msg.tag, d))
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

    def _counters(self, conn: Connection, msg: Message) -> None:
        c: m.Counters = msg.payload
        rows = self.lists["device_counters"]
        head = (conn.process, msg.tag, c.family, c.source)
        if not c.counters:  # the family collects none: one row says why
            rows.append((*head, None, None, None, c.reason, None, None, None, None, None))
        rows.extend(
            (
                *head, k.name, k.unit, k.description, c.reason, k.storage, k.scope, k.uuid,
                k.pass_index,
                None if k.concurrently_impacted is None else int(k.concurrently_impacted),
            )
            for k in c.counters
        )  # fmt: skip

    def _workload(self, conn: Connection, msg: Message) -> None:
        conn.workloads.append((msg.offset, _frame(m.WORKLOAD, msg.tag, msg.raw)))
        conn.workload_count += 1
        self._journaling[conn.id] = conn
        self.totals["workloads"] += 1

    def _labels(self, conn: Connection, msg: Message) -> None:
        lab: m.Labels = msg.payload
        path = msgspec.json.encode(lab.labels).decode()
        self.lists["labels"].append((conn.process, lab.device, msg.tag, path, "/".join(lab.labels)))

    def _frame(self, conn: Connection, msg: Message) -> None:
        conn.frame_ends.append((msg.offset, _frame(m.FRAME, msg.tag, msg.raw)))
        self._journaling[conn.id] = conn
        self.totals["frames"] += 1

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
        listed = s.workloads
        n = len(listed)
        first = self._next_instance
        row = self._next_submit
        self._next_instance = first + n
        self._next_submit = row + 1
        where = (s.device, s.queue, s.frame, s.cpu_ns, s.api, s.batch)
        conn.submit_rows.append((row, conn.process, seq, *where, first, n))
        self._journaling[conn.id] = conn
        self.totals["submits"] += 1
        if n:
            conn.submits.append((row, first, seq, listed))
            conn.submit_offsets.append(msg.offset)
            self.totals["instances"] += n
            self.pending_instances += n
        device = (conn.process, s.device)
        if device not in self._devices and device not in self._unannounced:
            self._unannounced.add(device)
            reason = (
                f"SUBMIT {seq} names device {s.device}, which no DEVICE message announced: "
                "its workloads are stored, without the device's name, queues or clock"
            )
            self.note(conn, "unknown_device", reason, msg.offset, m.SUBMIT)

    def _annex(self, conn: Connection, msg: Message) -> None:
        seq: int = msg.sequence  # type: ignore[assignment]  # ANNEX is a sequenced type
        conn.annexes.append((seq, msg.tag, msg.offset, msg.raw, self._next_submit - 1))
        self._journaling[conn.id] = conn

    def _submit_done(self, conn: Connection, msg: Message) -> None:
        seq: int = msg.sequence  # type: ignore[assignment]  # SUBMIT_DONE is a sequenced type
        conn.completions.append((seq, msg.payload.cpu_ns, msg.offset))
        self._journaling[conn.id] = conn

    def _command_buffer_counters(self, conn: Connection, msg: Message) -> None:
        seq: int = msg.sequence  # type: ignore[assignment]  # a sequenced type
        c: m.CommandBufferCounters = msg.payload
        # The values as sent (integers stay integers), from the payload's own text.
        raw = msgspec.json.decode(msg.raw).get("counters") if c.counters is not None else None
        values = None if raw is None else msgspec.json.encode(raw).decode()
        row = (conn.process, seq, c.counters_pass, values, c.counters_reason)
        self.lists["command_buffer_counters"].append(row)
