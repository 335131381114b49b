"""Helpers for the Perfetto tests: real captures made by the real capture server, and a reader
that takes a written trace apart again with the Perfetto protos (interning, clocks and slice
nesting resolved the way the trace processor does)."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from perfetto.protos.perfetto.trace import (  # type: ignore[import-untyped,unused-ignore]
    perfetto_trace_pb2 as pb,
)

from vkscope import protocol as m
from vkscope.capture.write.client import Stream

MONOTONIC = pb.BUILTIN_CLOCK_MONOTONIC
BEGIN, END = pb.TrackEvent.TYPE_SLICE_BEGIN, pb.TrackEvent.TYPE_SLICE_END
INSTANT, COUNTER = pb.TrackEvent.TYPE_INSTANT, pb.TrackEvent.TYPE_COUNTER
CLEARED = pb.TracePacket.SEQ_INCREMENTAL_STATE_CLEARED


# -- captures ----------------------------------------------------------------------------------


def device_message(
    s: Stream,
    device: int = 1,
    name: str = "Test GPU",
    queues: int = 1,
    clock: str | None = "clock_monotonic",
) -> None:
    """A DEVICE message with the timing `clock` object (docs/protocol.md, Timing)."""
    qs = [
        {"id": q, "family": q, "index": 0, "flags": ["graphics", "compute", "transfer"][: 3 - q],
         "timestamp_valid_bits": 64}
        for q in range(queues)
    ]  # fmt: skip
    body: dict[str, Any] = {
        "name": name, "vendor_id": 0x13B5, "device_id": 1, "driver_name": "test",
        "driver_info": "1.0", "api_version": "1.3.230", "timestamp_period_ns": 1.0, "queues": qs,
    }  # fmt: skip
    if clock is not None:
        body["clock"] = {"domain": clock, "max_deviation_ns": 50}
    s.add(m.DEVICE, device, body)


def timed(
    s: Stream, submit: int, tag: int, begin: int | None, end: int | None, **extra: Any
) -> None:
    """The timing annex of instance `submit.tag` (gpu_begin_ns/gpu_end_ns and status)."""
    status = "ok" if begin is not None else "untimed"
    s.annex(submit, tag, gpu_begin_ns=begin, gpu_end_ns=end, serialization="queue",
            timing=status, **extra)  # fmt: skip


ATTACHMENTS = [
    {"index": 0, "kind": "color", "format": 37, "samples": 1, "load": 1, "store": 0,
     "resolve": False},
    {"index": 1, "kind": "depth_stencil", "format": 126, "samples": 1, "load": 1, "store": 1,
     "resolve": False},
]  # fmt: skip

# (submit, tag) -> (gpu begin, gpu end), for the two frames of game_stream()
GPU_TIMES = {
    (1, 10): (1_100_000, 1_300_000),
    (1, 11): (1_300_000, 1_350_000),
    (1, 12): (1_350_000, 1_360_000),
    (2, 13): (1_150_000, 1_250_000),
    (3, 10): (17_100_000, 17_250_000),
    (3, 11): (17_250_000, 17_300_000),
    (3, 12): (17_300_000, 17_320_000),
    (4, 13): (17_120_000, 17_200_000),
}
LABELS = {1: ["Frame", "Shadows"], 2: ["Frame", "Lighting", "Tiles"], 3: ["Frame"], 0: []}


def game_stream(*, timing: bool = True, clock: str | None = "clock_monotonic") -> Stream:
    """Two frames on two queues: a render pass and a dispatch under nested labels, a copy under
    the frame label only, a trace_rays with no label on the second queue."""
    s = Stream()
    s.hello(process="game", pid=4321)
    device_message(s, 1, "Mali-G720", queues=2, clock=clock)
    for stack, labels in LABELS.items():
        if stack:
            s.labels(stack, labels)
    s.workload(10, "renderpass", api="vkCmdBeginRenderPass2", width=1920, height=1080, layers=1,
               draws=12, attachments=ATTACHMENTS, split=False)  # fmt: skip
    s.workload(11, "dispatch", api="vkCmdDispatchIndirect", groups=None, base=[0, 0, 0],
               local_size=[8, 8, 1], invocations=None)  # fmt: skip
    s.workload(12, "buffer_transfer", api="vkCmdCopyBuffer", kind="copy", bytes=2**64 - 1)
    s.workload(13, "trace_rays", api="vkCmdTraceRaysKHR", width=640, height=480, depth=1)
    for frame, base in ((0, 1_000_000), (1, 17_000_000)):
        first = s.submit([(10, 1), (11, 2), (12, 3)], frame=frame, queue=0, cpu_ns=base)
        second = s.submit([(13, 0)], frame=frame, queue=1, cpu_ns=base + 20_000)
        s.annex(first, 11, groups=[4, 4, 1], invocations=1024)
        if timing:
            for submit, tag in ((first, 10), (first, 11), (first, 12), (second, 13)):
                timed(s, submit, tag, *GPU_TIMES[(submit, tag)])
        s.frame(frame, queue=0, cpu_ns=base + 16_000_000)
    s.goodbye()
    return s


# -- reading a trace back ------------------------------------------------------------------------


def annotation_value(ann: Any) -> Any:
    if len(ann.dict_entries):
        return {e.name: annotation_value(e) for e in ann.dict_entries}
    if len(ann.array_values):
        return [annotation_value(a) for a in ann.array_values]
    which = ann.WhichOneof("value")
    if which == "legacy_json_value":
        return json.loads(ann.legacy_json_value)
    return getattr(ann, which) if which else None


@dataclass
class Track:
    uuid: int
    name: str
    parent: int | None
    pid: int | None
    process_name: str | None
    description: str
    counter: bool
    rank: int | None


@dataclass
class Event:
    index: int  # position in the file
    sequence: int
    ts: int  # on CLOCK_MONOTONIC, converted like the trace processor does
    raw_ts: int
    clock: int
    type: int
    track: int
    name: str | None
    args: dict[str, Any]
    flows: list[int]
    terminating_flows: list[int]
    value: float | None


@dataclass
class Slice:
    track: int
    name: str | None
    begin: int
    end: int
    args: dict[str, Any]
    parent: Slice | None = None
    children: list[Slice] = field(default_factory=list)
    begin_event: Event | None = None

    @property
    def depth(self) -> int:
        return 0 if self.parent is None else self.parent.depth + 1

    def ancestors(self) -> list[Slice]:
        out: list[Slice] = []
        p = self.parent
        while p is not None:
            out.insert(0, p)
            p = p.parent
        return out


class ReadTrace:
    def __init__(self, path: Path) -> None:
        data = path.read_bytes()
        self.trace = pb.Trace.FromString(data)
        self.packets = list(self.trace.packet)
        self.tracks: dict[int, Track] = {}
        self.events: list[Event] = []
        self.snapshots: list[Any] = []
        self.render_stage: list[Any] = []
        self.primary_clock: int | None = None
        names: dict[int, dict[int, str]] = {}
        arg_names: dict[int, dict[int, str]] = {}
        offsets: dict[tuple[int, int], int] = {}  # (sequence, clock) -> add to reach MONOTONIC
        for index, p in enumerate(self.packets):
            seq = p.trusted_packet_sequence_id
            if p.sequence_flags & CLEARED:
                names[seq], arg_names[seq] = {}, {}
            if p.HasField("interned_data"):
                for e in p.interned_data.event_names:
                    names.setdefault(seq, {})[e.iid] = e.name
                for e in p.interned_data.debug_annotation_names:
                    arg_names.setdefault(seq, {})[e.iid] = e.name
            if p.HasField("clock_snapshot"):
                self.snapshots.append(p.clock_snapshot)
                if p.clock_snapshot.primary_trace_clock:
                    self.primary_clock = p.clock_snapshot.primary_trace_clock
                readings = {c.clock_id: c.timestamp for c in p.clock_snapshot.clocks}
                if MONOTONIC in readings:
                    for clock_id, reading in readings.items():  # clocks 64+ are per sequence
                        offsets[(seq if clock_id >= 64 else 0, clock_id)] = (
                            readings[MONOTONIC] - reading
                        )
            if p.HasField("track_descriptor"):
                d = p.track_descriptor
                self.tracks[d.uuid] = Track(
                    d.uuid, d.name, d.parent_uuid if d.HasField("parent_uuid") else None,
                    d.process.pid if d.HasField("process") else None,
                    d.process.process_name if d.HasField("process") else None,
                    d.description, d.HasField("counter"),
                    d.sibling_order_rank if d.HasField("sibling_order_rank") else None,
                )  # fmt: skip
            if p.HasField("gpu_render_stage_event"):
                self.render_stage.append(p)
            if p.HasField("track_event"):
                e = p.track_event
                name = names[seq][e.name_iid] if e.name_iid else (e.name or None)
                args = {}
                for a in e.debug_annotations:
                    key = arg_names[seq][a.name_iid] if a.name_iid else a.name
                    args[key] = annotation_value(a)
                clock = p.timestamp_clock_id or pb.BUILTIN_CLOCK_BOOTTIME  # the default
                key = (seq if clock >= 64 else 0, clock)
                ts = p.timestamp + (0 if clock == MONOTONIC else offsets.get(key, 0))
                value = None
                if e.HasField("counter_value"):
                    value = float(e.counter_value)
                elif e.HasField("double_counter_value"):
                    value = e.double_counter_value
                self.events.append(Event(
                    index, seq, ts, p.timestamp, clock, e.type, e.track_uuid, name, args,
                    list(e.flow_ids), list(e.terminating_flow_ids), value,
                ))  # fmt: skip

    def track_named(self, name: str) -> list[Track]:
        return [t for t in self.tracks.values() if t.name == name]

    def children(self, uuid: int) -> list[Track]:
        return [t for t in self.tracks.values() if t.parent == uuid]

    def slices(self) -> list[Slice]:
        """Every slice, nested per track as the trace processor nests them: events sorted by
        time, keeping file order for equal times; an END closes the innermost open slice."""
        out: list[Slice] = []
        by_track: dict[int, list[Event]] = {}
        for e in self.events:
            if e.type in (BEGIN, END, INSTANT):
                by_track.setdefault(e.track, []).append(e)
        for track, events in by_track.items():
            stack: list[Slice] = []
            for e in sorted(events, key=lambda e: (e.ts, e.index)):
                if e.type == END:
                    assert stack, f"END without BEGIN on track {track} at {e.ts}"
                    s = stack.pop()
                    s.end = e.ts
                    s.args.update(e.args)
                    continue
                s = Slice(track, e.name, e.ts, e.ts, dict(e.args), stack[-1] if stack else None,
                          begin_event=e)  # fmt: skip
                if s.parent is not None:
                    s.parent.children.append(s)
                out.append(s)
                if e.type == BEGIN:
                    stack.append(s)
            assert not stack, f"slices left open on track {track}: {[s.name for s in stack]}"
        return out

    def lane_group(self, track: Track) -> set[int]:
        """A track and its same-named siblings (overflow lanes the UI shows as one track)."""
        return {t.uuid for t in self.tracks.values()
                if t.parent == track.parent and t.name == track.name}  # fmt: skip
