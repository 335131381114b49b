"""`--merge device.pftrace`: a device's own Perfetto trace, kept intact, with the capture's
metadata attached to its GPU render stage events (docs/perfetto.md, "Merging").

The device trace is read twice, packet by packet, never whole: the first pass finds which
`t<tagID>` (and `s<submitID>`) labels its render stage events carry; one pass over the capture
then keeps what it knows about those workloads only; the second pass copies every packet to the
output byte for byte, except the tagged render stage events, which are rewritten with
`vkscope.*` entries added to their `extra_data`.
"""

from __future__ import annotations

import gzip
import io
import re
import zlib
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, BinaryIO, Final, cast

import msgspec

from ..capture import Capture, WorkloadInstance
from .perfetto_model import MergeSummary, PerfettoExportError, instance_fields
from .perfetto_packets import Packet, PacketSink, pb

# extra_data entries whose value holds the debug labels (compared case-insensitively); the Arm
# driver writes `Labels`.
LABEL_ENTRY_NAMES: Final = ("labels", "label", "debug_label", "debug_labels")
# What separates labels when an entry holds a whole label stack.
LABEL_SEPARATORS: Final = re.compile(r"[|/;,>\t\r\n]+")
_TAG: Final = re.compile(r"t(\d+)")
_SUBMIT: Final = re.compile(r"s(\d+)")
PREFIX: Final = "vkscope."
# Command buffers sharing an `s` label are submitted together: the workload of an event under
# `s<N>` is looked for in submits N to N + SUBMIT_LABEL_WINDOW - 1 (a capture does not keep
# SUBMIT's s_label).
SUBMIT_LABEL_WINDOW: Final = 64

_PACKET_FIELD: Final = 1  # Trace.packet
MAX_FIELD_BYTES: Final = 256 * 1024 * 1024  # no real packet comes near; garbage may claim more
_encode = msgspec.json.encode


def labels_of(event: Any) -> tuple[int | None, int | None]:
    """(tagID, submitID) from a GpuRenderStageEvent's labels: the innermost `t<N>` and `s<N>`
    labels in its label entries, then its name; None where there is none."""
    texts = [
        d.value
        for d in event.extra_data
        if d.name.lower() in LABEL_ENTRY_NAMES and not d.name.startswith(PREFIX)
    ]
    if event.HasField("name"):
        texts.append(event.name)
    tag = submit = None
    for text in texts:
        for token in LABEL_SEPARATORS.split(text):
            token = token.strip()
            if m := _TAG.fullmatch(token):
                tag = int(m[1])
            elif m := _SUBMIT.fullmatch(token):
                submit = int(m[1])
    return tag, submit


def _text(value: Any) -> str:
    return value if isinstance(value, str) else _encode(value).decode()


# -- reading a trace file packet by packet ----------------------------------------------------


def _open(path: Path) -> BinaryIO:
    """The trace file, decompressed on the fly when it is gzipped (`.pftrace.gz`)."""
    try:
        f: BinaryIO = path.open("rb")
        if f.read(2) != b"\x1f\x8b":
            f.seek(0)
            return f
        f.close()
        return cast(BinaryIO, gzip.open(path, "rb"))
    except OSError as exc:
        raise PerfettoExportError(f"{path}: cannot read: {exc.strerror or exc}") from None


def _varint(f: BinaryIO, into: bytearray) -> int | None:
    """Reads one varint, appending its bytes to `into`; None at the end of the file."""
    value = shift = 0
    while True:
        b = f.read(1)
        if not b:
            if shift:
                raise EOFError
            return None
        into += b
        value |= (b[0] & 0x7F) << shift
        if not b[0] & 0x80:
            return value
        shift += 7
        if shift > 63:
            raise ValueError("varint too long")


def _frames(f: BinaryIO, path: Path) -> Iterator[tuple[bytes, bytes | None]]:
    """The top-level fields of a Trace: (their bytes as they are in the file, the packet's
    payload when it is a packet)."""
    offset = 0
    try:
        while True:
            head = bytearray()
            key = _varint(f, head)
            if key is None:
                return
            wire, number = key & 7, key >> 3
            if wire == 2:
                length = _varint(f, head)
                if length is None:
                    raise EOFError
                if length > MAX_FIELD_BYTES:
                    raise ValueError(f"field {number} claims {length} bytes")
                body = f.read(length)
                if len(body) < length:
                    raise EOFError
                yield bytes(head) + body, body if number == _PACKET_FIELD else None
                offset += len(head) + length
                continue
            size = {0: 0, 1: 8, 5: 4}.get(wire)
            if size is None or number == 0:
                raise ValueError(f"wire type {wire} of field {number}")
            if wire == 0:
                _varint(f, head)
            else:
                head += f.read(size)
            yield bytes(head), None
            offset += len(head)
    except EOFError:
        raise PerfettoExportError(f"{path}: truncated Perfetto trace (at byte {offset})") from None
    except (ValueError, OSError, zlib.error) as exc:
        raise PerfettoExportError(
            f"{path}: not a Perfetto trace (at byte {offset}: {exc})"
        ) from None


def _parse(body: bytes, path: Path) -> Packet:
    try:
        return pb.TracePacket.FromString(body)
    except Exception as exc:  # protobuf's DecodeError, whichever implementation raised it
        raise PerfettoExportError(f"{path}: not a Perfetto trace: {exc}") from None


def _packets(path: Path) -> Iterator[tuple[bytes, Packet | None]]:
    """Every packet of the trace at `path` (compressed packets unpacked), with its raw bytes;
    other top-level fields come with None."""
    with _open(path) as f:
        for raw, body in _frames(f, path):
            if body is None:
                yield raw, None
                continue
            packet = _parse(body, path)
            if packet.HasField("compressed_packets"):
                try:
                    inner = zlib.decompress(packet.compressed_packets)
                except zlib.error as exc:
                    raise PerfettoExportError(f"{path}: bad compressed packets: {exc}") from None
                yield from _inner_packets(inner, path)
            else:
                yield raw, packet


def _inner_packets(data: bytes, path: Path) -> Iterator[tuple[bytes, Packet | None]]:
    for raw, body in _frames(io.BytesIO(data), path):
        yield raw, None if body is None else _parse(body, path)


# -- what the capture knows about the tags the trace names ------------------------------------


@dataclass(slots=True)
class _ByTag:
    """Instances of one recorded workload (one tag, one process)."""

    count: int = 0
    first: dict[str, str] = field(default_factory=dict)
    common: dict[str, str] = field(default_factory=dict)

    def add(self, fields: dict[str, str]) -> None:
        self.count += 1
        if self.count == 1:
            self.first = fields
            self.common = dict(fields)
        else:
            self.common = {k: v for k, v in self.common.items() if fields.get(k) == v}


@dataclass(slots=True)
class _Wanted:
    tags: set[int] = field(default_factory=set)
    submits: dict[int, set[int]] = field(default_factory=dict)  # tag -> s<N> labels seen


@dataclass(slots=True)
class _Known:
    by_tag: dict[int, dict[int, _ByTag]] = field(default_factory=dict)  # tag -> process -> ...
    # (tag, s label) -> (submitID, fields) of the closest instance at or after the label
    by_submit: dict[tuple[int, int], tuple[int, dict[str, str]]] = field(default_factory=dict)


def _fields(w: WorkloadInstance) -> dict[str, str]:
    return {PREFIX + k: _text(v) for k, v in instance_fields(w).items()}


def _learn(capture: Capture, wanted: _Wanted) -> _Known:
    known = _Known()
    for w in capture.workloads():
        tag = w.tag_id
        if tag not in wanted.tags:
            continue
        fields = _fields(w)
        known.by_tag.setdefault(tag, {}).setdefault(w.process, _ByTag()).add(fields)
        labels = wanted.submits.get(tag)
        if not labels:
            continue
        for label in labels:
            if not label <= w.submit_id < label + SUBMIT_LABEL_WINDOW:
                continue
            best = known.by_submit.get((tag, label))
            if best is None or w.submit_id < best[0]:
                known.by_submit[(tag, label)] = (w.submit_id, fields)
    return known


def _match(known: _Known, tag: int, submit: int | None) -> tuple[dict[str, str], str] | None:
    """The fields to attach for a tagged event, and how they were found."""
    if submit is not None:
        hit = known.by_submit.get((tag, submit))
        if hit is not None:
            return hit[1], f"submit label s{submit} and tag t{tag}"
    per_process = known.by_tag.get(tag)
    if not per_process:
        return None
    if len(per_process) == 1:
        only = next(iter(per_process.values()))
        if only.count == 1:
            return only.first, f"tag t{tag}: its only instance"
        common, count = only.common, only.count
    else:
        count = sum(b.count for b in per_process.values())
        groups = list(per_process.values())
        common = {k: v for k, v in groups[0].common.items()
                  if all(g.common.get(k) == v for g in groups[1:])}  # fmt: skip
    fields = dict(common)
    fields[PREFIX + "instances"] = str(count)
    return fields, f"ambiguous: tag t{tag} has {count} instances; fields common to all of them"


# -- the merge --------------------------------------------------------------------------------


@dataclass(slots=True)
class _Tally:
    packets: int = 0
    render_stage_events: int = 0
    tagged: int = 0
    annotated: int = 0
    ambiguous: int = 0
    unmatched: int = 0
    clock_snapshots: int = 0


def _survey(path: Path) -> tuple[_Wanted, int, int]:
    """First pass: the tags to look up, the highest packet sequence id, the clock snapshots."""
    wanted = _Wanted()
    max_sequence = snapshots = 0
    for _, packet in _packets(path):
        if packet is None:
            continue
        max_sequence = max(max_sequence, packet.trusted_packet_sequence_id)
        if packet.HasField("clock_snapshot"):
            snapshots += 1
        if packet.HasField("gpu_render_stage_event"):
            tag, submit = labels_of(packet.gpu_render_stage_event)
            if tag is not None:
                wanted.tags.add(tag)
                if submit is not None:
                    wanted.submits.setdefault(tag, set()).add(submit)
    return wanted, max_sequence, snapshots


def _annotate(event: Any, fields: dict[str, str], how: str) -> None:
    kept = [(d.name, d.value) for d in event.extra_data if not d.name.startswith(PREFIX)]
    del event.extra_data[:]
    for name, value in [*kept, *fields.items(), (PREFIX + "match", how)]:
        entry = event.extra_data.add()
        entry.name = name
        entry.value = value


def merge_device_trace(path: Path, capture: Capture, sink: PacketSink) -> tuple[MergeSummary, int]:
    """Writes the device trace at `path` into `sink`, its tagged render stage events annotated.

    Returns what was done, and a packet sequence id the trace does not use.
    """
    wanted, max_sequence, snapshots = _survey(path)
    known = _learn(capture, wanted) if wanted.tags else _Known()
    t = _Tally(clock_snapshots=snapshots)
    for raw, packet in _packets(path):
        t.packets += 1
        if packet is None or not packet.HasField("gpu_render_stage_event"):
            sink.raw(raw)
            continue
        t.render_stage_events += 1
        event = packet.gpu_render_stage_event
        tag, submit = labels_of(event)
        if tag is None:
            sink.raw(raw)
            continue
        t.tagged += 1
        found = _match(known, tag, submit)
        if found is None:
            t.unmatched += 1
            sink.raw(raw)
            continue
        fields, how = found
        t.annotated += 1
        t.ambiguous += how.startswith("ambiguous")
        _annotate(event, fields, how)
        sink.add(packet)
    summary = MergeSummary(
        path=path, packets=t.packets, render_stage_events=t.render_stage_events,
        tagged=t.tagged, annotated=t.annotated, ambiguous=t.ambiguous, unmatched=t.unmatched,
        clock_snapshots=t.clock_snapshots,
    )  # fmt: skip
    return summary, max_sequence + 1
