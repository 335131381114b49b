"""A capture made by the real layer (`vkscope run -o` around the workload program) exports to a
trace holding every workload instance on its queue's track, at its times, under its labels,
with its metadata as arguments."""

from __future__ import annotations

from pathlib import Path

import pytest
from support.perfetto import MONOTONIC, ReadTrace

from harness.env import base_env, run, vkscope_cli
from vkscope.capture import open_capture
from vkscope.export import UNTIMED_DURATION_NS, export_perfetto

pytestmark = pytest.mark.vulkan

SEP = " · "


def test_layer_capture_exports_every_workload(workload: Path, tmp_path: Path) -> None:
    cap = tmp_path / "all.vkscope"
    cmd: list[str | Path] = [vkscope_cli(), "run", "-o", cap, "--", workload]
    cmd += ["--all", "--frames", "2", "--quiet"]
    res = run(cmd, base_env(), cwd=tmp_path)
    assert res.returncode == 0, res.stderr
    out = tmp_path / "all.pftrace"
    summary = export_perfetto(cap, out)
    trace = ReadTrace(out)

    with open_capture(cap) as capture:
        instances = list(capture.workloads())
        queues = capture.queues()
        devices = {d.id: d for d in capture.devices()}
        pid = capture.meta.pid
    assert len(instances) > 50 and {w.type for w in instances} >= {"renderpass", "dispatch"}
    assert any(w.labels for w in instances)  # the labels scenario
    assert summary.workloads == len(instances) == summary.timed + summary.untimed

    # One track per queue, named by device and queue family.
    queue_tracks: dict[tuple[int | None, int | None], set[int]] = {}
    for q in queues:
        name = f"{devices[q.device].name}{SEP}queue {q.id}{SEP}family {q.family} "
        name += f"[{'|'.join(q.flags)}]"
        (track,) = trace.track_named(name)
        queue_tracks[(q.device, q.id)] = trace.lane_group(track)
    assert summary.queue_tracks == len(queues)

    slices = {s.args["instance_row"]: s for s in trace.slices() if "instance_row" in s.args}
    assert len(slices) == len(instances)
    for w in instances:
        s = slices[w.id]
        assert s.track in queue_tracks[(w.device, w.queue)]
        assert s.name == (f"{w.type}{SEP}{w.label_path}" if w.labels else w.type)
        assert [a.name for a in s.ancestors()] == list(w.labels)
        assert s.args["instance"] == f"{w.submit_id}.{w.tag_id}"
        for key, value in w.metadata.items():
            assert s.args[key] == value, (w.id, key)
        begin = w.gpu_begin_ns if w.gpu_begin_ns is not None else w.metadata.get("gpu_begin_ns")
        end = w.gpu_end_ns if w.gpu_end_ns is not None else w.metadata.get("gpu_end_ns")
        event = s.begin_event
        assert event is not None
        if isinstance(begin, int) and isinstance(end, int):
            assert event.raw_ts == begin and s.end - s.begin == max(end - begin, 0)
            assert s.args["gpu_ns"] == s.end - s.begin
        else:
            assert s.end - s.begin == UNTIMED_DURATION_NS and s.args["placeholder_ns"] > 0
            assert s.args["timing"] in ("untimed", "ambiguous")
            if event.clock == MONOTONIC and w.submit_cpu_ns is not None:
                assert s.begin >= w.submit_cpu_ns

    # The application's process, with its submits on its own track.
    (process,) = [t for t in trace.tracks.values() if t.pid is not None]
    assert process.pid == pid and process.process_name
    (submits,) = [t for t in trace.children(process.uuid) if t.name == "vkscope submits"]
    submit_events = [e for e in trace.events if e.track == submits.uuid and "submit" in e.args]
    assert len(submit_events) == summary.submits > 0
