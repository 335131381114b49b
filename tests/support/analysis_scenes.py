"""The scene the analysis tests share: timed frames on two queues, in `queue` or `none`
serialization, as a layer stream (support/captures.py makes a capture of it)."""

from __future__ import annotations

from vkscope.capture.write.client import Stream

T0 = 5_000_000_000


def scene(mode: str = "queue", frames: int = 4) -> Stream:
    """Four timed frames on two queues, and a fifth frame the layer did not capture.

    Per timed frame (t = its start), `queue`: queue 0 runs the render pass [t, t+400], the
    bloom dispatch [t+500, t+700] and the copy [t+700, t+800]: sum 700, span 800, one 100 ns
    gap. Queue 1 runs the indirect bloom dispatch [t+100, t+400] and an untimed blit. The frame's
    GPU time is 1000. `none`: the same work overlapping: [t, t+450], [t+400, t+700],
    [t+650, t+760]: sum 860, busy and span 760, 100 ns counted twice.
    """
    s = Stream()
    s.hello(process="scene", pid=42)
    s.device(1, "Scene GPU", queues=2, clock="clock_monotonic", max_deviation_ns=100)
    s.labels(1, ["frame", "shadows"])
    s.labels(2, ["frame", "post", "bloom"])
    s.labels(3, ["frame"])
    s.workload(1, "renderpass", width=1920, height=1080, layers=1, draws=12, attachments=[])
    s.workload(2, "dispatch", groups=[8, 4, 1], local_size=[64, 1, 1], invocations=2048)
    s.workload(3, "buffer_transfer", kind="copy", bytes=4096)
    s.workload(4, "image_transfer", kind="blit", pixels=100)
    s.workload(5, "dispatch", groups=None, local_size=[8, 8, 1], invocations=None)
    times = {
        "queue": [(0, 400), (500, 700), (700, 800)],
        "none": [(0, 450), (400, 700), (650, 760)],
    }[mode]
    for f in range(frames):
        t = T0 + f * 1_000_000
        a = s.submit([(1, 1), (2, 2), (3, 3)], frame=f, queue=0, cpu_ns=t)
        b = s.submit([(5, 2), (4, 0)], frame=f, queue=1, cpu_ns=t)
        for tag, (begin, end) in zip((1, 2, 3), times, strict=True):
            s.timing(a, tag, t + begin, t + end, serialization=mode)
        s.annex(b, 5, groups=[16, 16, 1], invocations=16384)
        s.timing(b, 5, t + 100, t + 400, serialization=mode)
        s.timing(b, 4, None, None, serialization=mode, status="untimed",
                 reason="queue family has no timestamps")  # fmt: skip
        s.submit_done(a, t + 900)
        s.submit_done(b, t + 900)
        s.frame(f, cpu_ns=t + 1000, captured=True)
    c = s.submit([(1, 1)], frame=frames, queue=0)
    s.timing(c, 1, None, None, serialization=mode, status="untimed",
             reason="recorded outside a captured frame")  # fmt: skip
    s.frame(frames, captured=False)
    s.goodbye()
    return s
