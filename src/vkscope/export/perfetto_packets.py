"""Perfetto trace packets as vkscope writes them: a batching sink and one packet sequence.

Every packet is a `TracePacket` of the Perfetto protos (the `perfetto` package from PyPI), built
in a `TraceProtoBuilder` and written out in batches, so a trace of any size is produced with
bounded memory. Event names and argument names are interned on the sequence (Perfetto's own
scheme for repeated strings), up to a limit past which they are written inline.
"""

from __future__ import annotations

import hashlib
from collections.abc import Hashable, Iterable, Mapping
from typing import Any, BinaryIO, Final

try:
    from perfetto.protos.perfetto.trace import (  # type: ignore[import-untyped,unused-ignore]
        perfetto_trace_pb2 as pb,
    )
    from perfetto.trace_builder.proto_builder import (  # type: ignore[import-untyped,unused-ignore]
        TraceProtoBuilder,
    )
except ImportError as exc:  # pragma: no cover - depends on the environment
    raise ImportError(
        "Perfetto export needs the 'perfetto' package and its 'protobuf' dependency "
        "(pip install 'perfetto>=0.56' 'protobuf>=6.31.1')"
    ) from exc

__all__ = ["Annotation", "Packet", "PacketSink", "Sequence", "fill_annotation", "pb", "stable_id"]

Packet = Any  # perfetto.protos TracePacket; the package ships no type information mypy reads
Annotation = Any  # perfetto.protos DebugAnnotation

MONOTONIC: Final[int] = pb.BUILTIN_CLOCK_MONOTONIC
BOOTTIME: Final[int] = pb.BUILTIN_CLOCK_BOOTTIME
FIRST_SEQUENCE_CLOCK: Final = 64  # clock ids 64..127 are scoped to one packet sequence

SLICE_BEGIN: Final[int] = pb.TrackEvent.TYPE_SLICE_BEGIN
SLICE_END: Final[int] = pb.TrackEvent.TYPE_SLICE_END
INSTANT: Final[int] = pb.TrackEvent.TYPE_INSTANT
COUNTER: Final[int] = pb.TrackEvent.TYPE_COUNTER

_CLEARED: Final[int] = pb.TracePacket.SEQ_INCREMENTAL_STATE_CLEARED
_NEEDS_STATE: Final[int] = pb.TracePacket.SEQ_NEEDS_INCREMENTAL_STATE
_EXPLICIT: Final[int] = pb.TrackDescriptor.EXPLICIT

_I64: Final = 2**63
_U64: Final = 2**64
INTERN_LIMIT: Final = 200_000  # distinct interned strings per kind; later ones go inline
SHARED_ARGS_LIMIT: Final = 16_384  # encoded argument sets kept for reuse


def stable_id(*parts: object) -> int:
    """A 63-bit id derived from `parts` (track uuids, flow ids): the same input, the same id."""
    digest = hashlib.blake2b(repr(parts).encode(), digest_size=8, person=b"vkscope").digest()
    return (int.from_bytes(digest, "little") >> 1) or 1


def fill_annotation(ann: Annotation, value: Any) -> None:
    """Sets a DebugAnnotation's value from a JSON-like Python value, nesting dicts and lists."""
    if value is None:
        ann.legacy_json_value = "null"
    elif isinstance(value, bool):
        ann.bool_value = value
    elif isinstance(value, int):
        if -_I64 <= value < _I64:
            ann.int_value = value
        elif 0 <= value < _U64:
            ann.uint_value = value
        else:
            ann.string_value = str(value)
    elif isinstance(value, float):
        ann.double_value = value
    elif isinstance(value, str):
        ann.string_value = value
    elif isinstance(value, Mapping):
        if not value:
            ann.legacy_json_value = "{}"
        for key, item in value.items():
            entry = ann.dict_entries.add()
            entry.name = str(key)
            fill_annotation(entry, item)
    elif isinstance(value, list | tuple):
        if not value:
            ann.legacy_json_value = "[]"
        for item in value:
            fill_annotation(ann.array_values.add(), item)
    else:
        ann.string_value = str(value)


class PacketSink:
    """Collects packets in a TraceProtoBuilder and writes them to `out` in batches.

    A packet handed out by new() must be filled before the next call to new(), add() or raw():
    those may write the batch it is in.
    """

    def __init__(self, out: BinaryIO, batch: int = 2048) -> None:
        self._out = out
        self._batch = batch
        self._builder = TraceProtoBuilder()
        self._pending = 0
        self.packets = 0

    def new(self) -> Packet:
        if self._pending >= self._batch:
            self.flush()
        self._pending += 1
        self.packets += 1
        return self._builder.add_packet()

    def add(self, packet: Packet) -> None:
        """Appends a packet built elsewhere (a copy of it)."""
        self.new().CopyFrom(packet)

    def raw(self, data: bytes) -> None:
        """Writes bytes that already are serialized Trace content (whole packets), unchanged."""
        self.flush()
        self._out.write(data)
        self.packets += 1

    def flush(self) -> None:
        if self._pending:
            self._out.write(self._builder.serialize())
            self._builder = TraceProtoBuilder()
            self._pending = 0


class Sequence:
    """One trusted packet sequence: track descriptors, events and the interning state."""

    def __init__(self, sink: PacketSink, sequence_id: int) -> None:
        self.sink = sink
        self.id = sequence_id
        self._first = True
        self._names: dict[str, int] = {}
        self._arg_names: dict[str, int] = {}
        self._shared: dict[Hashable, tuple[Mapping[str, Any], bytes]] = {}

    def packet(self, ts: int | None = None, clock: int = MONOTONIC) -> Packet:
        p = self.sink.new()
        p.trusted_packet_sequence_id = self.id
        if self._first:
            p.sequence_flags = _CLEARED
            self._first = False
        else:
            p.sequence_flags = _NEEDS_STATE
        if ts is not None:
            p.timestamp = max(ts, 0)
            p.timestamp_clock_id = clock
        return p

    def clock_snapshot(self, clocks: Iterable[tuple[int, int]], primary: int | None = None) -> None:
        """A ClockSnapshot: (clock id, reading) pairs taken at the same instant."""
        snapshot = self.packet().clock_snapshot
        for clock_id, reading in clocks:
            c = snapshot.clocks.add()
            c.clock_id = clock_id
            c.timestamp = max(reading, 0)
        if primary is not None:
            snapshot.primary_trace_clock = primary

    def track(
        self,
        uuid: int,
        name: str,
        parent: int | None = None,
        *,
        description: str | None = None,
        pid: int | None = None,
        process_name: str | None = None,
        rank: int | None = None,
        explicit_child_order: bool = False,
        counter_unit: str | None = None,
    ) -> None:
        desc = self.packet().track_descriptor
        desc.uuid = uuid
        if pid is not None:
            desc.process.pid = pid
            if process_name:
                desc.process.process_name = process_name
        else:
            desc.name = name
        if parent is not None:
            desc.parent_uuid = parent
        if description:
            desc.description = description
        if rank is not None:
            desc.sibling_order_rank = rank
        if explicit_child_order:
            desc.child_ordering = _EXPLICIT
        if counter_unit is not None:
            desc.counter.SetInParent()
            if counter_unit:
                desc.counter.unit_name = counter_unit

    def event(
        self,
        track: int,
        ts: int,
        kind: int,
        *,
        clock: int = MONOTONIC,
        name: str | None = None,
        args: Mapping[str, Any] | None = None,
        shared_args: tuple[Hashable, Mapping[str, Any]] | None = None,
        flows: Iterable[int] = (),
        terminating_flows: Iterable[int] = (),
    ) -> None:
        """One TrackEvent. `shared_args` (a key, and arguments that many events with that key
        have) come first and are encoded once per key as long as they stay the same; `args`
        follow."""
        p = self.packet(ts, clock)
        e = p.track_event
        e.type = kind
        e.track_uuid = track
        if name is not None:
            iid = self._intern(self._names, name, p, "event_names")
            if iid:
                e.name_iid = iid
            else:
                e.name = name
        if shared_args is not None:
            key, shared = shared_args
            hit = self._shared.get(key)
            if hit is None or hit[0] != shared:
                # Encoded here, into a detached event, so that the names it interns are defined
                # in this packet, the first to use them.
                detached = pb.TrackEvent()
                self._annotate(p, detached, shared)
                if len(self._shared) >= SHARED_ARGS_LIMIT:
                    self._shared.clear()
                hit = self._shared[key] = (shared, detached.SerializeToString())
            e.MergeFromString(hit[1])
        if args:
            self._annotate(p, e, args)
        e.flow_ids.extend(flows)
        e.terminating_flow_ids.extend(terminating_flows)

    def _annotate(self, p: Packet, e: Any, args: Mapping[str, Any]) -> None:
        intern, names = self._intern, self._arg_names
        for key, value in args.items():
            ann = e.debug_annotations.add()
            iid = intern(names, key, p, "debug_annotation_names")
            if iid:
                ann.name_iid = iid
            else:
                ann.name = key
            kind = type(value)
            if kind is str:
                ann.string_value = value
            elif kind is int and -_I64 <= value < _I64:
                ann.int_value = value
            else:
                fill_annotation(ann, value)

    def counter(self, track: int, ts: int, value: float | int, *, clock: int = MONOTONIC) -> None:
        e = self.packet(ts, clock).track_event
        e.type = COUNTER
        e.track_uuid = track
        if isinstance(value, int) and -_I64 <= value < _I64:
            e.counter_value = value
        else:
            e.double_counter_value = float(value)

    @staticmethod
    def _intern(table: dict[str, int], text: str, p: Packet, kind: str) -> int:
        """The interned id of `text`, adding its definition to packet `p` the first time; 0 when
        the table is full (the caller writes the string inline)."""
        iid = table.get(text)
        if iid is not None:
            return iid
        if len(table) >= INTERN_LIMIT:
            return 0
        iid = len(table) + 1
        table[text] = iid
        entry = getattr(p.interned_data, kind).add()
        entry.iid = iid
        entry.name = text
        return iid
