"""A capture scene for the timer's floor (docs/timing.md): one queue whose frames hold a dispatch
within the floor's reach and one far past it, with the DEVICE message's `timer_floor`. Shared by
tests/test_timer_floor.py and the HTML page's browser test."""

from __future__ import annotations

from vkscope.capture.write.client import Stream

FRAME_NS = 1_000_000
# Ticks of 1 ns: back to back 8-12 ns; empty workloads 100 ns at the median, 300 ns at most.
FLOOR = {"family": 0, "back_to_back": [8] * 15 + [10] * 16 + [12],
         "empty": [90] * 15 + [100] * 16 + [300]}  # fmt: skip
TINY_NS, BIG_NS = 250, 50_000  # within 4x the 100 ns floor, and far past it


def floor_stream(
    frames: int = 6, *, compiled: dict[int, int] | None = None, floor: bool = True
) -> Stream:
    """One queue, a frame of a tiny dispatch then a big one; `compiled`: frame -> pipelines
    the application created in it."""
    s = Stream()
    s.hello(process="game", pid=4242)
    s.device(1, clock="clock_monotonic", max_deviation_ns=10,
             timer_floor=[FLOOR] if floor else None)  # fmt: skip
    s.labels(1, ["Frame"])
    tag = 100
    for f in range(frames):
        tags = [tag + 1, tag + 2]
        tag += 2
        s.workload(tags[0], "dispatch", api="vkCmdDispatch")
        s.workload(tags[1], "dispatch", api="vkCmdDispatch")
        begin = f * FRAME_NS
        submit = s.submit([(t, 1) for t in tags], frame=f, cpu_ns=begin)
        s.timing(submit, tags[0], begin + 1_000, begin + 1_000 + TINY_NS)
        s.timing(submit, tags[1], begin + 2_000, begin + 2_000 + BIG_NS)
        s.frame(f, cpu_ns=begin + FRAME_NS - 1, pipelines=(compiled or {}).get(f, 0),
                shader_modules=0)  # fmt: skip
    s.goodbye()
    return s


# A second device whose family 0 has ten times the floor (median 1,000 ns: near up to 4,000 ns).
HIGH_FLOOR = {"family": 0, "back_to_back": [8] * 32, "empty": [900] * 15 + [1000] * 16 + [1200]}
BETWEEN_NS = 2_000  # past 4x the first device's floor, within 4x the second's


def two_device_floor_stream(frames: int = 6) -> Stream:
    """Two devices in one process, family 0 on each with its own floor; one dispatch of
    BETWEEN_NS a frame, on the low-floor device in even frames and on the high-floor one in odd
    frames: one identity whose instances ran on both."""
    s = Stream()
    s.hello(process="game", pid=4242)
    s.device(1, clock="clock_monotonic", max_deviation_ns=10, timer_floor=[FLOOR])
    s.device(2, clock="clock_monotonic", max_deviation_ns=10, timer_floor=[HIGH_FLOOR])
    tag = 100
    for f in range(frames):
        device = 1 + f % 2
        tag += 1
        s.workload(tag, "dispatch", device=device, api="vkCmdDispatch")
        begin = f * FRAME_NS
        submit = s.submit([(tag, 1)], frame=f, device=device, cpu_ns=begin)
        s.timing(submit, tag, begin + 1_000, begin + 1_000 + BETWEEN_NS)
        s.frame(f, device=device, cpu_ns=begin + FRAME_NS - 1, pipelines=0, shader_modules=0)
    s.goodbye()
    return s
