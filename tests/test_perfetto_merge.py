"""`export_perfetto(..., merge=device.pftrace)`: a device trace in the format docs/perfetto.md
describes (GPU render stage events as the Arm driver writes them, debug labels in an extra_data
entry named `Labels`), built here with the Perfetto protos, comes out intact with the capture's
metadata attached to its tagged events, followed by the capture's own tracks."""

from __future__ import annotations

import gzip
import zlib
from pathlib import Path
from typing import Any

import pytest
from perfetto.protos.perfetto.trace import (  # type: ignore[import-untyped,unused-ignore]
    perfetto_trace_pb2 as pb,
)
from support.captures import capture_from
from support.perfetto import ReadTrace, game_stream

from vkscope.export import PerfettoExportError, export_perfetto

BOOTTIME = pb.BUILTIN_CLOCK_BOOTTIME
MONOTONIC = pb.BUILTIN_CLOCK_MONOTONIC
GPU_SEQUENCE = 7
BOOT_AHEAD = 3_000_000_000  # BOOTTIME runs this far ahead of MONOTONIC (time spent suspended)


class DeviceTrace:
    """A device trace as traced and the Arm GPU driver write it."""

    def __init__(self) -> None:
        self.trace = pb.Trace()
        self.events: list[Any] = []  # the render stage packets, in order
        snap = self._packet(1).clock_snapshot
        for clock, ts in ((BOOTTIME, 10_000 + BOOT_AHEAD), (MONOTONIC, 10_000)):
            c = snap.clocks.add()
            c.clock_id, c.timestamp = clock, ts
        snap.primary_trace_clock = BOOTTIME
        proc = self._packet(2).process_tree.processes.add()
        proc.pid, proc.cmdline[:] = 4321, ["com.example.game"]
        specs = self._packet(GPU_SEQUENCE, flags=pb.TracePacket.SEQ_INCREMENTAL_STATE_CLEARED)
        for iid, name in ((1, "fragment"), (2, "non-fragment"), (3, "compute")):
            spec = specs.interned_data.gpu_specifications.add()
            spec.iid, spec.name = iid, name
        ctx = specs.interned_data.graphics_contexts.add()
        ctx.iid, ctx.pid, ctx.api = 1, 4321, pb.InternedGraphicsContext.VULKAN
        app = self._packet(3, ts=1_000_000 + BOOT_AHEAD)
        app.track_event.type, app.track_event.name = pb.TrackEvent.TYPE_INSTANT, "app event"

    def _packet(self, sequence: int, ts: int | None = None, flags: int = 0) -> Any:
        p = self.trace.packet.add()
        p.trusted_packet_sequence_id = sequence
        if flags:
            p.sequence_flags = flags
        if ts is not None:
            p.timestamp = ts
        return p

    def stage(self, ts: int, duration: int, *, labels: str | None = None, name: str | None = None,
              stage: int = 1, extra: tuple[tuple[str, str], ...] = ()) -> Any:  # fmt: skip
        p = self._packet(GPU_SEQUENCE, ts=ts + BOOT_AHEAD,
                         flags=pb.TracePacket.SEQ_NEEDS_INCREMENTAL_STATE)  # fmt: skip
        e = p.gpu_render_stage_event
        e.event_id, e.duration = len(self.events) + 1, duration
        e.hw_queue_iid, e.stage_iid, e.context = stage, stage, 1
        e.submission_id = 40 + len(self.events)
        e.render_target_handle, e.command_buffer_handle = 0xABC, 0xDEF
        if labels is not None:
            d = e.extra_data.add()
            d.name, d.value = "Labels", labels
        for k, v in extra:
            d = e.extra_data.add()
            d.name, d.value = k, v
        if name is not None:
            e.name = name
        self.events.append(p)
        return p

    def write(self, path: Path) -> Path:
        path.write_bytes(self.trace.SerializeToString())
        return path


def extra(p: Any) -> dict[str, str]:
    return {d.name: d.value for d in p.gpu_render_stage_event.extra_data}


def without_vkscope(p: Any) -> bytes:
    q = pb.TracePacket()
    q.CopyFrom(p)
    kept = [(d.name, d.value) for d in q.gpu_render_stage_event.extra_data
            if not d.name.startswith("vkscope.")]  # fmt: skip
    del q.gpu_render_stage_event.extra_data[:]
    for name, value in kept:
        d = q.gpu_render_stage_event.extra_data.add()
        d.name, d.value = name, value
    data: bytes = q.SerializeToString()
    return data


@pytest.fixture
def capture(tmp_path: Path) -> Path:
    return capture_from(tmp_path, [game_stream()])


def standard_device_trace() -> DeviceTrace:
    dt = DeviceTrace()
    # Render pass 1.10 runs as a non-fragment and a fragment event, both under its tag; tag 10
    # is submitted twice (frames 0 and 1), so its events carry the s<submitID> label too.
    dt.stage(1_100_000, 90_000, labels="s1|Frame|Shadows|t10", stage=2)
    dt.stage(1_150_000, 150_000, labels="s1|Frame|Shadows|t10", stage=1)
    dt.stage(17_100_000, 150_000, labels="s3|Frame|Shadows|t10", stage=1)
    dt.stage(1_300_000, 50_000, labels="t11", stage=3)  # tag only: two instances
    dt.stage(1_150_000, 100_000, name="t13", stage=3)  # the tag in the event's name
    dt.stage(1_400_000, 10_000, labels="t999")  # no such workload
    dt.stage(1_500_000, 10_000, labels="Frame|Blit")  # not ours
    dt.stage(1_600_000, 10_000)  # no labels at all
    return dt


def test_tagged_render_stage_events_get_the_capture_metadata(tmp_path: Path, capture: Path) -> None:
    dt = standard_device_trace()
    device = dt.write(tmp_path / "device.pftrace")
    summary = export_perfetto(capture, tmp_path / "merged.pftrace", merge=device)
    m = summary.merge
    assert m is not None and m.path == device
    assert (m.packets, m.render_stage_events, m.tagged) == (len(dt.trace.packet), 8, 6)
    assert (m.annotated, m.ambiguous, m.unmatched, m.clock_snapshots) == (5, 2, 1, 1)

    out = ReadTrace(tmp_path / "merged.pftrace")
    stages = out.render_stage
    assert len(stages) == 8
    first, second, third, by_tag, by_name, unknown, foreign, bare = stages

    for p, instance, frame in ((first, "1.10", 0), (second, "1.10", 0), (third, "3.10", 1)):
        x = extra(p)
        assert x["vkscope.instance"] == instance and x["vkscope.frame"] == str(frame)
        assert x["vkscope.type"] == "renderpass" and x["vkscope.label_path"] == "Frame/Shadows"
        assert (x["vkscope.width"], x["vkscope.height"], x["vkscope.draws"]) == ("1920", "1080",
                                                                                 "12")  # fmt: skip
        assert x["vkscope.api"] == "vkCmdBeginRenderPass2" and x["vkscope.split"] == "false"
        assert x["vkscope.attachments"].startswith('[{"index":0,"kind":"color"')
        assert x["vkscope.match"].startswith("submit label s")
        assert x["Labels"].endswith("t10")  # the driver's own entries stay
    assert extra(first)["vkscope.submit"] == "1" and extra(third)["vkscope.submit"] == "3"

    # Tag 11 was submitted in both frames and its events carry no s label: only what both
    # instances share is attached, and the match says so.
    x = extra(by_tag)
    assert x["vkscope.type"] == "dispatch" and x["vkscope.groups"] == "[4,4,1]"
    assert x["vkscope.label_path"] == "Frame/Lighting/Tiles" and x["vkscope.instances"] == "2"
    assert "vkscope.instance" not in x and "vkscope.frame" not in x
    assert x["vkscope.match"].startswith("ambiguous")

    # Tag 13 too is in both frames; its tag was in the event's name.
    x = extra(by_name)
    assert x["vkscope.type"] == "trace_rays" and x["vkscope.width"] == "640"
    assert x["vkscope.instances"] == "2" and "vkscope.submit" not in x

    # Everything else, and every other packet, is exactly as it was in the device trace.
    original = list(dt.trace.packet)
    for before, after in zip(original, out.packets, strict=False):
        if before.HasField("gpu_render_stage_event") and "vkscope.type" in extra(after):
            assert without_vkscope(after) == before.SerializeToString()
        else:
            assert after.SerializeToString() == before.SerializeToString()
    for p in (unknown, foreign, bare):
        assert not any(k.startswith("vkscope.") for k in extra(p))


def test_merged_trace_keeps_the_device_clocks_and_adds_our_tracks(
    tmp_path: Path, capture: Path
) -> None:
    device = standard_device_trace().write(tmp_path / "device.pftrace")
    summary = export_perfetto(capture, tmp_path / "merged.pftrace", merge=device)
    out = ReadTrace(tmp_path / "merged.pftrace")
    ours = out.packets[summary.merge.packets :]  # type: ignore[union-attr]
    assert ours and summary.workloads == 8
    # Our packets are on a sequence of their own, after the device trace's.
    sequences = {p.trusted_packet_sequence_id for p in ours}
    assert sequences == {GPU_SEQUENCE + 1}
    # The device trace's snapshot chooses the trace clock; ours sets none (nothing needs one).
    assert [s.primary_trace_clock for s in out.snapshots] == [BOOTTIME]
    # Our GPU tracks and the process's CPU tracks are there, on CLOCK_MONOTONIC.
    assert {p.timestamp_clock_id for p in ours if p.HasField("timestamp")} == {MONOTONIC}
    workloads = [s for s in out.slices() if "instance" in s.args]
    assert len(workloads) == 8
    assert any(t.pid == 4321 for t in out.tracks.values())


def test_device_trace_without_clock_snapshots(tmp_path: Path, capture: Path) -> None:
    dt = DeviceTrace()
    del dt.trace.packet[0]  # its clock snapshot
    dt.stage(1_150_000, 100_000, name="t12")
    summary = export_perfetto(
        capture, tmp_path / "m.pftrace", merge=dt.write(tmp_path / "d.pftrace")
    )
    assert summary.merge is not None and summary.merge.clock_snapshots == 0
    assert summary.merge.annotated == summary.merge.ambiguous == 1  # t12 is in two frames
    out = ReadTrace(tmp_path / "m.pftrace")
    (snapshot,) = out.snapshots  # ours: MONOTONIC and BOOTTIME taken as the same clock
    readings = {c.clock_id: c.timestamp for c in snapshot.clocks}
    assert readings[MONOTONIC] == readings[BOOTTIME]
    assert any("no clock snapshots" in n for n in summary.notes)


def test_compressed_and_gzipped_device_traces(tmp_path: Path, capture: Path) -> None:
    dt = DeviceTrace()
    dt.stage(1_100_000, 90_000, labels="s1|t10")
    inner = pb.Trace()
    inner.packet.append(dt.events.pop())
    del dt.trace.packet[-1]
    wrapper = dt.trace.packet.add()
    wrapper.trusted_packet_sequence_id = 1
    wrapper.compressed_packets = zlib.compress(inner.SerializeToString())
    raw = dt.trace.SerializeToString()
    gz = tmp_path / "device.pftrace.gz"
    gz.write_bytes(gzip.compress(raw))
    summary = export_perfetto(capture, tmp_path / "m.pftrace", merge=gz)
    assert summary.merge is not None and summary.merge.annotated == 1
    (stage,) = ReadTrace(tmp_path / "m.pftrace").render_stage
    assert extra(stage)["vkscope.instance"] == "1.10"


def test_merging_twice_replaces_our_entries(tmp_path: Path, capture: Path) -> None:
    dt = DeviceTrace()
    dt.stage(1_100_000, 90_000, labels="s3|t10", extra=(("vkscope.instance", "stale"),
                                                       ("vkscope.old", "x")))  # fmt: skip
    export_perfetto(capture, tmp_path / "m.pftrace", merge=dt.write(tmp_path / "d.pftrace"))
    (stage,) = ReadTrace(tmp_path / "m.pftrace").render_stage
    x = extra(stage)
    assert x["vkscope.instance"] == "3.10" and "vkscope.old" not in x
    assert [d.name for d in stage.gpu_render_stage_event.extra_data].count("vkscope.instance") == 1


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (b"not a trace at all, just words\n" * 10, "not a Perfetto trace"),
        (b'{"traceEvents": []}', "not a Perfetto trace"),
        (b"", None),
    ],
)
def test_bad_device_traces(
    tmp_path: Path, capture: Path, content: bytes, message: str | None
) -> None:
    bad = tmp_path / "bad.pftrace"
    bad.write_bytes(content)
    out = tmp_path / "m.pftrace"
    if message is None:  # an empty file is an empty trace: nothing to merge, still a trace
        summary = export_perfetto(capture, out, merge=bad)
        assert summary.merge is not None and summary.merge.packets == 0
        return
    with pytest.raises(PerfettoExportError, match=message):
        export_perfetto(capture, out, merge=bad)
    assert not out.exists()


def test_truncated_device_trace_and_overwriting_it(tmp_path: Path, capture: Path) -> None:
    data = standard_device_trace().trace.SerializeToString()
    cut = tmp_path / "cut.pftrace"
    cut.write_bytes(data[: len(data) - 7])
    with pytest.raises(PerfettoExportError, match="truncated"):
        export_perfetto(capture, tmp_path / "m.pftrace", merge=cut)
    whole = tmp_path / "whole.pftrace"
    whole.write_bytes(data)
    with pytest.raises(PerfettoExportError, match="overwrite"):
        export_perfetto(capture, whole, merge=whole)
    assert whole.read_bytes() == data
    with pytest.raises(PerfettoExportError, match="cannot read"):
        export_perfetto(capture, tmp_path / "m.pftrace", merge=tmp_path / "missing.pftrace")
