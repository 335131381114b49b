"""The layer stream the HTML timeline's tests share: frames of workloads on two queues, with
nested labels, attachments, GPU times (or none), and integers past what JavaScript holds."""

from __future__ import annotations

from typing import Any

from vkscope import protocol as m
from vkscope.capture.write.client import Stream

BASE_NS = 5_000_000_000_000  # GPU clock at the first workload, like a real CLOCK_MONOTONIC
FRAME_NS = 16_000_000
BIG = 2**60 + 1  # past what a JavaScript number holds exactly

LABELS = {
    1: ["frame"],
    2: ["frame", "shadows"],
    3: ["frame", "shadows", "cascade 0"],
    4: ["frame", "shadows", "cascade 1"],
    5: ["frame", "lighting"],
    6: ["frame", "post </script><b>x</b>"],
    7: ["upload"],
}


def _attachment(index: int, kind: str, fmt: int) -> dict[str, Any]:
    return {"index": index, "kind": kind, "format": fmt, "samples": 1, "load": 1, "store": 0,
            "stencil_load": 2, "stencil_store": 1, "resolve": False}  # fmt: skip


def _describe(s: Stream) -> None:
    """The WORKLOAD messages: one or more of every type, and one of a type from the future."""
    color, depth = _attachment(0, "color", 37), _attachment(1, "depth_stencil", 126)
    rp = {"layers": 1, "subpasses": 1, "view_mask": 0, "split": False}
    s.workload(10, "renderpass", api="vkCmdBeginRenderPass2", width=1920, height=1080, draws=12,
               attachments=[color, depth], **rp)  # fmt: skip
    s.workload(11, "renderpass", api="vkCmdBeginRendering", width=2048, height=2048, draws=40,
               attachments=[depth], **rp)  # fmt: skip
    s.workload(12, "renderpass", api="vkCmdBeginRendering", width=2048, height=2048, draws=31,
               attachments=[depth], **rp)  # fmt: skip
    s.workload(13, "renderpass", api="vkCmdBeginRenderPass", width=1920, height=1080, draws=1,
               attachments=[color], **rp)  # fmt: skip
    s.workload(20, "dispatch", api="vkCmdDispatch", groups=[8, 8, 1], base=[0, 0, 0],
               local_size=[8, 8, 1], invocations=4096)  # fmt: skip
    s.workload(21, "dispatch", api="vkCmdDispatchIndirect", groups=None, base=[0, 0, 0],
               local_size=[64, 1, 1], invocations=None)  # fmt: skip
    s.workload(22, "trace_rays", api="vkCmdTraceRaysKHR", width=1920, height=1080, depth=1)
    s.workload(30, "buffer_transfer", api="vkCmdCopyBuffer", kind="copy", bytes=65536)
    s.workload(31, "image_transfer", api="vkCmdBlitImage2", kind="blit", pixels=2073600)
    s.workload(32, "acceleration_structure", api="vkCmdBuildAccelerationStructuresKHR",
               kind="build", count=3)  # fmt: skip
    s.workload(40, "mesh_magic", api="vkCmdFutureEXT", factor=7, big=BIG,
               nested={"a": [1, 2], "b": None})  # fmt: skip


# Per frame: (queue, [(tagID, label stack)] per submit). Each tag once per submit.
SUBMITS = [
    (0, [(11, 3), (12, 4), (20, 5)]),
    (0, [(10, 5), (22, 5), (13, 6)]),
    (1, [(30, 7), (31, 7), (21, 2), (32, 0), (40, 1)]),
]


def duration_ns(tag: int, frame: int, ordinal: int) -> int:
    return ((tag * 37 + frame * 11 + ordinal * 5) % 90) * 10_000 + 50_000


def timeline_stream(frames: int = 3, *, timed: bool = True, untimed_frame: int = 1) -> Stream:
    """A capture's worth of protocol frames: two queues, nested labels, GPU times in annexes
    (one instance left untimed, as the layer reports it) unless `timed` is false."""
    s = Stream()
    s.hello(process="html-test", pid=4242)
    device(s, 1, "Test GPU", "clock_monotonic" if timed else None)
    for stack, labels in LABELS.items():
        s.labels(stack, labels)
    _describe(s)
    for frame in range(frames):
        cursor = [BASE_NS + frame * FRAME_NS, BASE_NS + frame * FRAME_NS + 100_000]
        for n, (queue, listed) in enumerate(SUBMITS):
            cpu = 1_000_000_000 + frame * FRAME_NS + n * 1000
            submit = s.submit(listed, frame=frame, queue=queue, cpu_ns=cpu)
            for ordinal, (tag, _) in enumerate(listed):
                fields: dict[str, Any] = {}
                if tag == 21:
                    fields |= {"groups": [4, 2, 1], "invocations": 512}
                if timed and tag == 40 and frame == untimed_frame:
                    fields |= {"timing": "untimed", "serialization": "none",
                               "timing_reason": "recorded outside a captured frame",
                               "gpu_begin_ns": None, "gpu_end_ns": None}  # fmt: skip
                elif timed:
                    begin = cursor[queue] + 5_000
                    end = begin + duration_ns(tag, frame, ordinal)
                    cursor[queue] = end
                    fields |= {"gpu_begin_ns": begin, "gpu_end_ns": end, "timing": "ok",
                               "serialization": "queue"}  # fmt: skip
                if fields:
                    s.annex(submit, tag, **fields)
            if timed:
                s.add(m.SUBMIT_DONE, 0, {"cpu_ns": cpu + 3_000_000}, submit)
        ended = {"device": 1, "queue": 0, "cpu_ns": 1_000_000_000 + (frame + 1) * FRAME_NS,
                 "reason": "present"}  # fmt: skip
        if timed:  # the layer says which frames it captured when it times
            ended["captured"] = True
        s.add(m.FRAME, frame, ended)
    s.goodbye()
    return s


def device(s: Stream, device_id: int, name: str, clock: str | None, queues: int = 2) -> None:
    """A DEVICE message; with `clock`, the clock domain the layer reports when it times."""
    qs = [{"id": q, "family": q, "index": 0, "flags": ["graphics", "compute", "transfer"],
           "timestamp_valid_bits": 64} for q in range(queues)]  # fmt: skip
    body: dict[str, Any] = {"name": name, "vendor_id": 0x10DE, "device_id": 0x2684,
                            "driver_name": "test", "driver_info": "1.0", "api_version": "1.3.230",
                            "timestamp_period_ns": 1.0, "queues": qs}  # fmt: skip
    if clock is not None:
        body["clock"] = {"domain": clock, "max_deviation_ns": 1500}
    s.add(m.DEVICE, device_id, body)


def identity_entry(data: dict[str, Any], ix: int) -> dict[str, Any]:
    """Identity `ix` of a page's data, read from its columns as the page reads it: `queue`, `l`,
    `type`, `ordinal`, `frames` and `gpu` ([count, min, p50, p90, p99, max]; None untimed)."""
    table = data["identities"]
    queue, labels, type_ = table["scopes"][table["scope"][ix]]
    g = table["gpu"]
    stats = ("count", "min", "p50", "p90", "p99", "max")
    return {
        "queue": queue, "l": labels, "type": type_, "ordinal": table["ordinal"][ix],
        "frames": table["frames"][ix],
        "gpu": [g[k][ix] for k in stats] if g["count"][ix] else None,
    }  # fmt: skip


def coverage_entry(budget: dict[str, Any], ix: int) -> list[Any] | None:
    """Identity `ix`'s [frames, measured, median GPU ns, reason] of a page's `budget`."""
    c = budget["coverage"]
    if c["frames"][ix] is None:
        return None
    return [c["frames"][ix], c["measured"][ix], c["median"][ix], c["reason"][ix]]
