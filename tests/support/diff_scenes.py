"""Captures for the `vkscope diff` tests, made the real way: a layer stream of workloads that run
once in every frame (W), sent to a CaptureServer, and the diff run on them."""

from __future__ import annotations

import io
import json
import random
import time
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from rich.console import Console

from vkscope import protocol as m
from vkscope.capture import CaptureServer
from vkscope.capture.write.client import Stream, connect
from vkscope.diff import run_diff

US = 1_000  # ns


@dataclass
class W:
    """A workload that runs once in every frame; `ns(frame)` is its GPU time (None: untimed)."""

    type: str
    labels: Sequence[str]
    ns: Callable[[int], int | None]
    queue: int = 0
    fields: dict[str, Any] = field(default_factory=dict)
    counters: Callable[[int], dict[str, float]] | None = None  # its counters in each frame


def steady(us: float) -> Callable[[int], int | None]:
    return lambda _frame: int(us * US)


def jitter(us: float, pct: float, seed: int) -> Callable[[int], int | None]:
    """`us` give or take up to `pct` percent, different in every frame."""
    rng = random.Random(seed)
    table = [int(us * US * (1 + rng.uniform(-pct, pct) / 100)) for _ in range(1000)]
    return lambda frame: table[frame]


def layer_stream(
    workloads: Sequence[W],
    frames: int,
    *,
    rerecord: bool = False,
    queues: int = 1,
    pid: int = 4242,
) -> bytes:
    """What a layer with timing on sends for `frames` frames of these workloads.

    rerecord: a new tagID in every frame (command buffers recorded again each frame) rather
    than the same tags resubmitted.
    """
    s = Stream()
    s.hello(process="game", pid=pid)
    qs = [
        {"id": q, "family": q, "index": 0, "flags": ["graphics", "compute", "transfer"],
         "timestamp_valid_bits": 64}
        for q in range(queues)
    ]  # fmt: skip
    s.add(m.DEVICE, 1, {"name": "Test GPU", "queues": qs, "timestamp_period_ns": 1.0,
                        "clock": {"domain": "clock_monotonic", "max_deviation_ns": 0}})  # fmt: skip
    stacks: dict[tuple[str, ...], int] = {(): 0}
    for w in workloads:
        key = tuple(w.labels)
        if key not in stacks:
            stacks[key] = len(stacks)
            s.labels(stacks[key], list(key))
    tag = 0
    gpu = 1_000_000
    for frame in range(frames):
        if frame == 0 or rerecord:
            tags = []
            for w in workloads:
                tag += 1
                s.workload(tag, w.type, **w.fields)
                tags.append(tag)
        for queue in range(queues):
            mine = [(t, w) for t, w in zip(tags, workloads, strict=True) if w.queue == queue]
            if not mine:
                continue
            submit = s.submit([(t, stacks[tuple(w.labels)]) for t, w in mine], frame=frame,
                              queue=queue, cpu_ns=gpu)  # fmt: skip
            for t, w in mine:
                ns = w.ns(frame)
                if ns is None:
                    s.annex(submit, t, gpu_begin_ns=None, gpu_end_ns=None, timing="untimed",
                            timing_reason="recorded outside a captured frame")  # fmt: skip
                else:
                    s.annex(submit, t, gpu_begin_ns=gpu, gpu_end_ns=gpu + ns, timing="ok",
                            serialization="queue")  # fmt: skip
                    gpu += ns + 500
                if w.counters is not None:
                    s.annex(submit, t, counters=w.counters(frame))
        s.add(m.FRAME, frame, {"device": 1, "queue": 0, "cpu_ns": gpu, "reason": "present",
                               "captured": True})  # fmt: skip
    s.goodbye()
    return s.data()


def served(path: Path, *streams: bytes) -> Path:
    """A capture written by a real CaptureServer from these connections' bytes."""
    address = f"unix:@vkscope-diff-test-{uuid.uuid4().hex}"
    with CaptureServer(path, [address]) as server:
        for data in streams:
            with connect(address) as sock:
                sock.sendall(data)
        deadline = time.monotonic() + 20
        while True:
            c = server.counters()
            if c.connections >= len(streams) and c.open_connections == 0:
                break
            assert time.monotonic() < deadline, f"capture server never caught up: {c}"
            time.sleep(0.01)
        summary = server.stop()
    assert summary.status == "complete" or not streams, summary
    return path


def capture(path: Path, workloads: Sequence[W], frames: int = 9, **options: Any) -> Path:
    return served(path, layer_stream(workloads, frames, **options))


def diff(base: Path, new: Path, **options: Any) -> tuple[int, str, str]:
    """(exit code, what was printed, what went to stderr); a wide console unless told. The
    scenes have no warm-up: every frame counts unless `warmup` says otherwise."""
    out, err = io.StringIO(), io.StringIO()
    width = options.pop("width", 160)
    options.setdefault("warmup", 0)
    console = Console(file=out, width=width, color_system=None, force_terminal=False)
    code = run_diff(base, new, console=console, stderr=err, **options)
    return code, out.getvalue(), err.getvalue()


def diff_json(base: Path, new: Path, **options: Any) -> tuple[int, dict[str, Any]]:
    code, text, err = diff(base, new, fmt="json", **options)
    assert not err, err
    doc: dict[str, Any] = json.loads(text)
    return code, doc


def by_name(entries: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    return {f"{e['type']} {'/'.join(e['labels'])} #{e['ordinal']}": e for e in entries}


# A frame of a small renderer: passes under labels, two dispatches in one scope.
def scene(**override: Callable[[int], int | None]) -> list[W]:
    ns = {"shadow": steady(400), "gbuffer": steady(900), "cull": steady(120),
          "blur0": steady(200), "blur1": steady(300), "copy": steady(50)} | override  # fmt: skip
    return [
        W("renderpass", ["frame", "shadows"], ns["shadow"], fields={"width": 2048, "height": 2048}),
        W("dispatch", ["frame", "cull"], ns["cull"], fields={"groups": [64, 1, 1]}),
        W("renderpass", ["frame", "gbuffer"], ns["gbuffer"], fields={"width": 1920}),
        W("dispatch", ["frame", "post", "blur"], ns["blur0"], fields={"groups": [30, 17, 1]}),
        W("dispatch", ["frame", "post", "blur"], ns["blur1"], fields={"groups": [15, 9, 1]}),
        W("buffer_transfer", [], ns["copy"], fields={"kind": "copy", "bytes": 65536}),
    ]


# -- the tests ------------------------------------------------------------------------------------
