"""Captures for the report's summary: frames of the same few labelled workloads, with GPU times
(and counters) chosen per frame, streamed to the capture store in pieces so that a capture of
150,000 frames is built without its stream in memory."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

from vkscope import protocol as m
from vkscope.capture import store_instance_columns
from vkscope.capture.write.client import Stream
from vkscope.capture.write.store import CaptureStore, ingest_stream

# (tagID, type, label stack): what each frame submits on queue 0, in order.
PASSES = ((1, "renderpass", 1), (2, "dispatch", 2), (3, "dispatch", 2), (4, "buffer_transfer", 3))
STACKS = {1: ["frame", "shadows"], 2: ["frame", "post"], 3: ["upload"]}
T0 = 10**12

Cost = Callable[[int, int], int | None]  # (frame, tag) -> GPU time in ns (None: untimed)


def steady_cost(frame: int, tag: int) -> int | None:
    return tag * 1000 + frame % 7


Pass = tuple[int, str, int]


def _chunks(
    frames: int, cost: Cost, counters: bool, compiled: set[int], passes: tuple[Pass, ...]
) -> Iterator[bytes]:
    s = Stream()
    s.hello(process="scene")
    s.device(1, "Scene GPU", clock="clock_monotonic", max_deviation_ns=100)
    for stack, labels in STACKS.items():
        s.labels(stack, labels)
    if counters:
        s.add(m.COUNTERS, 1, {"family": 0, "source": "pipeline_statistics",
                              "counters": [{"name": "fragment_shader_invocations"}]})  # fmt: skip
    for tag, kind, _ in passes:
        s.workload(tag, kind, api="vkCmd")
    clock = T0
    for frame in range(frames):
        sid = s.submit([(tag, stack) for tag, _, stack in passes], frame=frame, cpu_ns=clock)
        for tag, _, _ in passes:
            ns = cost(frame, tag)
            fields = {}
            if counters:
                fields["counters"] = {"fragment_shader_invocations": tag * 10 + frame % 3}
            if ns is None:
                s.annex(sid, tag, gpu_begin_ns=None, gpu_end_ns=None, serialization="queue",
                        timing="untimed", timing_reason="queue family has no timestamps",
                        **fields)  # fmt: skip
            else:
                s.annex(sid, tag, gpu_begin_ns=clock, gpu_end_ns=clock + ns,
                        serialization="queue", timing="ok", **fields)  # fmt: skip
                clock += ns + 100
        s.submit_done(sid, clock + 1000)
        s.frame(frame, cpu_ns=clock, captured=True)
        if frame % 2000 == 1999:
            yield s.data()
            s.frames.clear()
    s.goodbye()
    yield s.data()


def build(
    path: Path,
    frames: int,
    cost: Cost = steady_cost,
    *,
    counters: bool = False,
    compiled: set[int] | None = None,
    passes: tuple[Pass, ...] = PASSES,
    stored: bool = False,
) -> Path:
    """A finished capture of `frames` frames of `passes` at `cost`; with its instance columns
    stored, as the capture server stores them, where `stored`."""
    store = CaptureStore(path, finishing=store_instance_columns if stored else None)
    ingest_stream(store, "scene", _chunks(frames, cost, counters, compiled or set(), passes))
    store.finalize()
    return path
