"""`export_perfetto` on real captures (protocol frames through the real capture server), read
back with the Perfetto protos: every workload on its queue's track at its GPU times, label
slices around it, every field as an argument, the CPU side on the process's tracks."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from support.captures import capture_from
from support.perfetto import (
    ATTACHMENTS,
    BEGIN,
    GPU_TIMES,
    INSTANT,
    MONOTONIC,
    ReadTrace,
    Slice,
    device_message,
    game_stream,
    timed,
)

from vkscope.capture import CaptureNotFoundError, NotSQLiteError, open_capture
from vkscope.capture.write.client import Stream
from vkscope.export import UNTIMED_DURATION_NS, export_perfetto
from vkscope.outputs import OutputError

SEP = " · "


def export(capture: Path, tmp: Path, name: str = "trace.pftrace", **kw: Any) -> ReadTrace:
    out = tmp / name
    summary = export_perfetto(capture, out, **kw)
    assert summary.path == out and out.stat().st_size > 0
    return ReadTrace(out)


def workload_slices(trace: ReadTrace) -> list[Slice]:
    return [s for s in trace.slices() if "instance" in s.args]


def test_every_workload_on_its_queue_at_its_gpu_times(tmp_path: Path) -> None:
    cap = capture_from(tmp_path, [game_stream()])
    summary = export_perfetto(cap, tmp_path / "t.pftrace")
    trace = ReadTrace(tmp_path / "t.pftrace")
    assert summary.workloads == summary.timed == 8 and summary.untimed == 0
    assert summary.queue_tracks == 2 and summary.overflow_tracks == 0

    # Every packet with a time is on CLOCK_MONOTONIC, which is the trace's clock.
    assert trace.primary_clock == MONOTONIC
    assert {p.timestamp_clock_id for p in trace.packets if p.HasField("timestamp")} == {MONOTONIC}

    # One GPU track per device, one track per queue under it, named by device and family/flags.
    (gpu,) = [t for t in trace.tracks.values() if t.name.startswith("GPU 1: Mali-G720")]
    queues = {t.rank: t for t in trace.children(gpu.uuid)}
    assert queues[0].name == f"Mali-G720{SEP}queue 0{SEP}family 0 [graphics|compute|transfer]"
    assert queues[1].name == f"Mali-G720{SEP}queue 1{SEP}family 1 [graphics|compute]"
    assert "CLOCK_MONOTONIC" in gpu.description

    slices = workload_slices(trace)
    with open_capture(cap) as capture:
        instances = list(capture.workloads())
    assert len(slices) == len(instances) == len(GPU_TIMES)
    by_instance = {s.args["instance"]: s for s in slices}
    for w in instances:
        s = by_instance[f"{w.submit_id}.{w.tag_id}"]
        assert (s.begin, s.end) == GPU_TIMES[(w.submit_id, w.tag_id)]
        assert s.track in trace.lane_group(queues[w.queue])
        path = "/".join(w.labels)
        assert s.name == (f"{w.type}{SEP}{path}" if path else w.type)
        assert s.args["gpu_begin_ns"] == s.begin and s.args["gpu_end_ns"] == s.end
        assert s.args["gpu_ns"] == s.end - s.begin and s.args["timing"] == "ok"
        assert (s.args["tag"], s.args["submit"], s.args["frame"]) == (w.tag_id, w.submit_id,
                                                                      w.frame)  # fmt: skip
        assert s.args["label_path"] == path and s.args["queue"] == w.queue
        assert s.args["submit_cpu_ns"] == w.submit_cpu_ns
        # Nested label slices above it: its label stack, outermost first.
        assert [a.name for a in s.ancestors()] == list(w.labels)
        for ancestor in s.ancestors():
            assert ancestor.begin <= s.begin and s.end <= ancestor.end


def test_metadata_fields_are_arguments(tmp_path: Path) -> None:
    cap = capture_from(tmp_path, [game_stream()])
    slices = {s.args["instance"]: s for s in workload_slices(export(cap, tmp_path))}
    rp = slices["1.10"].args
    assert (rp["type"], rp["api"], rp["width"], rp["height"], rp["draws"], rp["layers"]) == (
        "renderpass", "vkCmdBeginRenderPass2", 1920, 1080, 12, 1)  # fmt: skip
    assert rp["attachments"] == ATTACHMENTS and rp["split"] is False
    dispatch = slices["1.11"].args  # the annex's groups over the WORKLOAD's null
    assert dispatch["groups"] == [4, 4, 1] and dispatch["invocations"] == 1024
    assert dispatch["local_size"] == [8, 8, 1] and dispatch["base"] == [0, 0, 0]
    assert dispatch["serialization"] == "queue"
    assert slices["1.12"].args["bytes"] == 2**64 - 1  # past int64: a uint annotation
    assert slices["1.12"].args["kind"] == "copy"
    assert slices["2.13"].args["depth"] == 1 and slices["2.13"].name == "trace_rays"


def test_label_slices_span_their_workloads(tmp_path: Path) -> None:
    cap = capture_from(tmp_path, [game_stream()])
    trace = export(cap, tmp_path)
    slices = trace.slices()
    frames = [s for s in slices if s.name == "Frame" and s.parent is None]
    assert len(frames) == 2  # one per captured frame, not one across both
    for frame in frames:
        kids = sorted(frame.children, key=lambda s: s.begin)
        assert [k.name for k in kids] == ["Shadows", "Lighting", f"buffer_transfer{SEP}Frame"]
        assert frame.begin == kids[0].begin and frame.end == kids[-1].end
        assert frame.args["label_path"] == "Frame" and frame.args["workloads"] == 3
        (tiles,) = kids[1].children
        assert tiles.name == "Tiles" and tiles.args["label_path"] == "Frame/Lighting/Tiles"
        (dispatch,) = tiles.children
        assert dispatch.name == f"dispatch{SEP}Frame/Lighting/Tiles"
        assert (tiles.begin, tiles.end) == (dispatch.begin, dispatch.end)
    unlabelled = [s for s in slices if s.name == "trace_rays"]
    assert len(unlabelled) == 2 and all(s.parent is None for s in unlabelled)


def test_cpu_side_submits_presents_frames_and_flows(tmp_path: Path) -> None:
    cap = capture_from(tmp_path, [game_stream()])
    trace = export(cap, tmp_path)
    (process,) = [t for t in trace.tracks.values() if t.pid is not None]
    assert (process.pid, process.process_name) == (4321, "game")
    submits_track, frames_track = (trace.track_named(n)[0] for n in ("vkscope submits", "frames"))
    assert submits_track.parent == frames_track.parent == process.uuid

    submits = [
        e for e in trace.events if e.track == submits_track.uuid and e.name != "vkQueuePresentKHR"
    ]
    assert [(e.type, e.ts, e.args["submit"], e.args["queue"]) for e in submits] == [
        (INSTANT, 1_000_000, 1, 0), (INSTANT, 1_020_000, 2, 1),
        (INSTANT, 17_000_000, 3, 0), (INSTANT, 17_020_000, 4, 1),
    ]  # fmt: skip
    assert all(e.name == "vkQueueSubmit2" and e.args["workloads"] in (1, 3) for e in submits)
    presents = [e for e in trace.events if e.name == "vkQueuePresentKHR"]
    assert [(e.ts, e.args["frame"]) for e in presents] == [(17_000_000, 0), (33_000_000, 1)]

    # Each submit's flow ends at the first workload it submitted.
    starts = {
        e.args["instance"]: e for e in trace.events if e.type == BEGIN and "instance" in e.args
    }
    for e in submits:
        (flow,) = e.flows
        first = "1.10" if e.args["submit"] in (1, 3) else "2.13"
        first = f"{e.args['submit']}.{first.split('.')[1]}"
        assert starts[first].terminating_flows == [flow]
    assert not starts["1.11"].terminating_flows

    frames = [s for s in trace.slices() if s.track == frames_track.uuid]
    assert [(s.name, s.begin, s.end, s.args["reason"]) for s in frames] == [
        ("frame 0", 1_000_000, 17_000_000, "present"),  # from its first submit
        ("frame 1", 17_000_000, 33_000_000, "present"),  # from the previous frame's end
    ]


def test_untimed_workloads_at_their_submit_time(tmp_path: Path) -> None:
    cap = capture_from(tmp_path, [game_stream(timing=False, clock=None)])
    summary = export_perfetto(cap, tmp_path / "t.pftrace")
    assert summary.untimed == 8 and summary.timed == 0 and summary.overflow_tracks == 0
    slices = {s.args["instance"]: s for s in workload_slices(ReadTrace(tmp_path / "t.pftrace"))}
    # Back to back from the submit's CPU time, in submission order, each a placeholder long.
    d = UNTIMED_DURATION_NS
    expected = {"1.10": 1_000_000, "1.11": 1_000_000 + d, "1.12": 1_000_000 + 2 * d,
                "2.13": 1_020_000, "3.10": 17_000_000, "4.13": 17_020_000}  # fmt: skip
    for instance, begin in expected.items():
        s = slices[instance]
        assert (s.begin, s.end) == (begin, begin + d)
        assert s.args["timing"] == "untimed" and s.args["placeholder_ns"] == d
        assert "gpu_begin_ns" not in s.args
    assert [a.name for a in slices["1.11"].ancestors()] == ["Frame", "Lighting", "Tiles"]


def test_an_untimed_reason_from_the_layer_is_kept(tmp_path: Path) -> None:
    s = Stream()
    s.hello()
    device_message(s)
    s.workload(1, "dispatch", api="vkCmdDispatch", groups=[1, 1, 1], invocations=64)
    s.workload(2, "dispatch", api="vkCmdDispatch", groups=[2, 1, 1], invocations=128)
    s.submit([(1, 0), (2, 0)], cpu_ns=5_000, submit_id=1)
    timed(s, 1, 1, 6_000, 9_000)
    s.annex(1, 2, gpu_begin_ns=None, gpu_end_ns=None, timing="ambiguous",
            timing_reason="secondary executed several times")  # fmt: skip
    s.goodbye()
    slices = {
        w.args["instance"]: w
        for w in workload_slices(export(capture_from(tmp_path, [s]), tmp_path))
    }
    assert (slices["1.1"].begin, slices["1.1"].end) == (6_000, 9_000)
    ambiguous = slices["1.2"]
    assert ambiguous.args["timing"] == "ambiguous"
    assert ambiguous.args["timing_reason"] == "secondary executed several times"
    # After the previous workload of its queue, which ends after the submit's CPU time.
    assert (ambiguous.begin, ambiguous.end) == (9_000, 9_000 + UNTIMED_DURATION_NS)


def test_device_clock_gets_its_own_aligned_clock(tmp_path: Path) -> None:
    s = Stream()
    s.hello(process="app", pid=77)
    device_message(s, 1, "Discrete GPU", clock="device")
    s.workload(1, "dispatch", api="vkCmdDispatch", groups=[1, 1, 1], invocations=1)
    s.workload(2, "dispatch", api="vkCmdDispatch", groups=[2, 1, 1], invocations=2)
    # GPU ticks near 5 s, CPU near 1000 s: only differences within the device mean anything.
    s.submit([(1, 0)], cpu_ns=1_000_000_000_000, submit_id=1)
    s.submit([(2, 0)], cpu_ns=1_000_000_400_000, submit_id=2)
    timed(s, 1, 1, 5_000_300_000, 5_000_350_000)
    timed(s, 2, 2, 5_000_500_000, 5_000_900_000)
    s.goodbye()
    cap = capture_from(tmp_path, [s])
    summary = export_perfetto(cap, tmp_path / "t.pftrace")
    trace = ReadTrace(tmp_path / "t.pftrace")
    (note,) = summary.clocks.values()
    assert "device's own clock" in note
    slices = sorted(workload_slices(trace), key=lambda s: s.begin)
    assert {s.begin_event.clock for s in slices} == {64}  # type: ignore[union-attr]
    # The raw device times are kept; the snapshot shifts them as little as it can so that none
    # starts before its submit: the second one then starts exactly at its submit.
    raw = [(s.begin_event.raw_ts) for s in slices]  # type: ignore[union-attr]
    assert raw == [5_000_300_000, 5_000_500_000]
    assert [s.begin for s in slices] == [1_000_000_200_000, 1_000_000_400_000]
    assert [s.end - s.begin for s in slices] == [50_000, 400_000]
    assert all(s.begin >= s.args["submit_cpu_ns"] for s in slices)
    assert trace.primary_clock == MONOTONIC


def test_overlapping_workloads_share_one_visual_track(tmp_path: Path) -> None:
    s = Stream()
    s.hello()
    device_message(s)
    s.labels(1, ["Async"])
    for tag in (1, 2, 3):
        s.workload(tag, "dispatch", api="vkCmdDispatch", groups=[tag, 1, 1], invocations=tag)
    s.submit([(1, 1), (2, 1), (3, 0)], cpu_ns=100, submit_id=1)
    timed(s, 1, 1, 1_000, 5_000)
    timed(s, 1, 2, 2_000, 3_000)  # inside the first one's time: runs alongside it
    timed(s, 1, 3, 5_000, 6_000)
    s.goodbye()
    cap = capture_from(tmp_path, [s])
    summary = export_perfetto(cap, tmp_path / "t.pftrace")
    assert summary.overflow_tracks == 1
    trace = ReadTrace(tmp_path / "t.pftrace")
    slices = {w.args["instance"]: w for w in workload_slices(trace)}
    first, second = slices["1.1"], slices["1.2"]
    assert first.track != second.track
    lanes = trace.lane_group(trace.tracks[first.track])
    assert second.track in lanes and slices["1.3"].track in lanes and len(lanes) == 2
    assert {trace.tracks[u].rank for u in lanes} == {0}
    assert (second.begin, second.end) == (2_000, 3_000)
    for w in (first, second):  # each lane has its own label slice around its workload
        assert [a.name for a in w.ancestors()] == ["Async"]
    assert slices["1.3"].parent is None and slices["1.3"].track == first.track


def test_processes_and_devices_each_get_tracks(tmp_path: Path) -> None:
    streams = []
    for pid, name in ((100, "first"), (200, "second")):
        s = Stream()
        s.hello(process=name, pid=pid)
        device_message(s, 1, f"{name} GPU")
        s.workload(1, "buffer_transfer", api="vkCmdFillBuffer", kind="fill", bytes=pid)
        s.submit([(1, 0)], cpu_ns=pid * 1000, submit_id=1)
        timed(s, 1, 1, pid * 1000 + 10, pid * 1000 + 20)
        s.goodbye()
        streams.append(s)
    trace = export(capture_from(tmp_path, streams), tmp_path)
    processes = {t.pid: t for t in trace.tracks.values() if t.pid is not None}
    assert {p: t.process_name for p, t in processes.items()} == {100: "first", 200: "second"}
    gpus = sorted(t.name for t in trace.tracks.values() if t.name.startswith("GPU "))
    assert gpus == [f"GPU 1: first GPU{SEP}first (100)", f"GPU 1: second GPU{SEP}second (200)"]
    slices = workload_slices(trace)
    assert sorted((s.args["bytes"], s.begin) for s in slices) == [(100, 100_010), (200, 200_010)]


def test_a_capture_without_workloads_still_opens(tmp_path: Path) -> None:
    s = Stream()
    s.hello(process="idle", pid=9)
    device_message(s, 1, "Idle GPU", queues=3)
    s.goodbye()
    summary = export_perfetto(capture_from(tmp_path, [s]), tmp_path / "t.pftrace")
    assert summary.workloads == 0 and summary.queue_tracks == 3
    trace = ReadTrace(tmp_path / "t.pftrace")
    assert [t.process_name for t in trace.tracks.values() if t.pid == 9] == ["idle"]
    assert not trace.slices()


def test_bad_inputs_raise_specific_errors(tmp_path: Path) -> None:
    with pytest.raises(CaptureNotFoundError):
        export_perfetto(tmp_path / "missing.vkscope", tmp_path / "t.pftrace")
    text = tmp_path / "notes.vkscope"
    text.write_text("not a capture\n" * 20)
    with pytest.raises(NotSQLiteError):
        export_perfetto(text, tmp_path / "t.pftrace")
    cap = capture_from(tmp_path, [game_stream()])
    with pytest.raises(OutputError, match=r"the folder .*no-such-dir does not exist"):
        export_perfetto(cap, tmp_path / "no-such-dir" / "t.pftrace")
    assert not list(tmp_path.glob(".*.partial"))


def test_workload_counters_are_arguments_and_counter_tracks_per_queue(tmp_path: Path) -> None:
    s = game_stream()
    goodbye = s.frames.pop()  # what follows goes before it
    s.add(
        protocol_code("COUNTERS"),
        1,
        {"family": 0, "source": "pipeline_statistics",
         "counters": [{"name": "fragment_shader_invocations"}]},
    )  # fmt: skip
    # The render pass of each frame counted; the dispatch says why it has no values.
    s.annex(1, 10, counters={"fragment_shader_invocations": 5000})
    s.annex(3, 10, counters={"fragment_shader_invocations": 7000})
    s.annex(1, 11, counters=None, counters_reason="application_query_active")
    s.frames.append(goodbye)
    cap = capture_from(tmp_path, [s])
    summary = export_perfetto(cap, tmp_path / "t.pftrace")
    trace = ReadTrace(tmp_path / "t.pftrace")
    slices = {sl.args["instance"]: sl for sl in workload_slices(trace)}
    assert slices["1.10"].args["counters"] == {"fragment_shader_invocations": 5000}
    assert slices["1.11"].args["counters_reason"] == "application_query_active"
    assert summary.counter_tracks == 1 and summary.counter_samples == 4
    (track,) = [t for t in trace.tracks.values() if t.counter]
    assert track.name == f"fragment_shader_invocations{SEP}queue 0"
    samples = [(e.ts, e.value) for e in trace.events if e.track == track.uuid]
    assert samples == [
        (GPU_TIMES[(1, 10)][0], 5000), (GPU_TIMES[(1, 10)][1], 0),
        (GPU_TIMES[(3, 10)][0], 7000), (GPU_TIMES[(3, 10)][1], 0),
    ]  # fmt: skip


def protocol_code(name: str) -> int:
    from vkscope import protocol as m

    return int(getattr(m, name))
