"""The timeline on workloads whose sizes live in buffers: indirect draws and an indirect-count
draw inside one render pass, an indirect dispatch in a secondary executed twice, and (where the
device has it) ray tracing with an indirect trace and acceleration structure builds and copies.

What the layer must send follows docs/timeline.md ("Indirect parameters", "A secondary with an
indirect workload executed twice") and docs/protocol.md: a count the GPU reads is null when
recorded and arrives as an ANNEX of the instance once the submission has completed.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from subprocess import CompletedProcess
from typing import Any

import pytest

from harness.driver import driver_lacks, skip_unless, verdicts
from harness.env import layer_env, run
from harness.timeline import SUBMIT, WORKLOAD, Capture, Message, Receiver

pytestmark = pytest.mark.vulkan

PIXELS = 64 * 64
# indirect_draw: vkCmdDrawIndirect with drawCount 2, vkCmdDrawIndexedIndirect with drawCount 1,
# and vkCmdDrawIndirectCount with maxDrawCount 8 whose count buffer a compute shader sets to 3.
DRAW_INDIRECT, DRAW_INDEXED_INDIRECT, COUNTED, MAX_COUNTED = 2, 1, 3, 8
ADD_ELEMENTS = 4 * 64  # the indirect dispatch: 4 groups of add.comp's 64 invocations
# ray_tracing: one uint per element of the 64x32 launch and of the 16x8 indirect launch.
RAY_BYTES = (64 * 32 + 16 * 8) * 4
RT_SKIP = "SKIP ray_tracing: needs VK_KHR_ray_tracing_pipeline"

Runner = Callable[..., tuple[CompletedProcess[str], Capture]]


@pytest.fixture
def timeline(layer_dir: Path, workload: Path) -> Iterator[Runner]:
    receivers: list[Receiver] = []

    def run_workload(*args: str) -> tuple[CompletedProcess[str], Capture]:
        receiver = Receiver()
        receivers.append(receiver)
        env = layer_env(layer_dir, timeline="true", host=receiver.address)
        res = run([workload, *args], env)
        return res, receiver.finish()

    yield run_workload
    for r in receivers:
        r.close()


def sizes(capture: Capture) -> list[tuple[str, str, Any]]:
    """(type, api, size) of every submitted workload instance, annexes merged, in order."""
    out: list[tuple[str, str, Any]] = []
    for _, _, w, _ in capture.submitted():
        size: Any = None
        if w["type"] == "renderpass":
            size = w["draws"]
        elif w["type"] == "dispatch":
            size = w["groups"]
        elif w["type"] == "trace_rays":
            size = (w["width"], w["height"], w["depth"])
        elif w["type"] == "acceleration_structure":
            size = (w["kind"], w["count"])
        elif w["type"] == "buffer_transfer":
            size = (w["kind"], w["bytes"])
        elif w["type"] == "image_transfer":
            size = (w["kind"], w["pixels"])
        out.append((w["type"], w["api"], size))
    return out


def only(capture: Capture, api: str) -> list[tuple[Message, int]]:
    """(SUBMIT, tag) of every submitted instance of workloads that `api` began."""
    return [(s, t) for s, t, w, _ in capture.submitted() if w["api"] == api]


def indirect_draw(timeline: Runner, frames: int = 1) -> Capture:
    res, capture = timeline("--scenario", "indirect_draw", "--frames", str(frames))
    assert res.returncode == 0, res.stdout + res.stderr
    assert "PASS indirect_draw" in res.stdout, "the scenario checks its image and buffer itself"
    return capture


def test_indirect_count_draws_arrive_in_an_annex(timeline: Runner) -> None:
    capture = indirect_draw(timeline)
    # The render pass's total is the annexed one: 2 + 1 draws known when recorded, and the 3 the
    # GPU read from the count buffer (not maxDrawCount's 8).
    assert sizes(capture) == [
        ("dispatch", "vkCmdDispatch", [1, 1, 1]),  # writes the count and the counted commands
        ("renderpass", "vkCmdBeginRenderPass", DRAW_INDIRECT + DRAW_INDEXED_INDIRECT + COUNTED),
        ("image_transfer", "vkCmdCopyImageToBuffer", ("image_to_buffer", PIXELS)),
        ("buffer_transfer", "vkCmdFillBuffer", ("fill", ADD_ELEMENTS * 4)),
        ("dispatch", "vkCmdDispatchIndirect", None),
        ("dispatch", "vkCmdDispatchIndirect", None),
        ("buffer_transfer", "vkCmdCopyBuffer", ("copy", ADD_ELEMENTS * 4)),
    ]
    ((submit, tag),) = only(capture, "vkCmdBeginRenderPass")
    recorded = capture.workloads[tag]
    # Unknown at record time: null, never the partial 3 the recording could count.
    assert (recorded["draws"], recorded["split"]) == (None, False)
    assert submit.sequence is not None
    assert capture.annexes(submit.sequence, tag) == {"draws": 6}
    # Indirect workloads have per-submission data: the command buffer gets its own s label.
    assert submit.payload["s_label"] == submit.sequence


def test_each_submission_has_its_own_count_annex(timeline: Runner) -> None:
    capture = indirect_draw(timeline, frames=2)
    passes = only(capture, "vkCmdBeginRenderPass")
    assert len(passes) == 2
    assert len({s.sequence for s, _ in passes}) == 2
    assert len({t for _, t in passes}) == 2, "re-recorded every frame"
    for submit, tag in passes:
        assert submit.sequence is not None
        assert capture.annexes(submit.sequence, tag) == {"draws": 6}
    recorded = [m.payload for m in capture.of(WORKLOAD) if m.payload["type"] == "renderpass"]
    assert [w["draws"] for w in recorded] == [None, None]


def test_secondary_with_an_indirect_dispatch_executed_twice_is_ambiguous(
    timeline: Runner,
) -> None:
    capture = indirect_draw(timeline)
    dispatches = only(capture, "vkCmdDispatchIndirect")
    # Both executions are listed in the one SUBMIT, as the same instance.
    assert len(dispatches) == 2
    (submit_a, tag_a), (submit_b, tag_b) = dispatches
    assert submit_a is submit_b and tag_a == tag_b
    assert [t for t, _ in submit_a.payload["workloads"]].count(tag_a) == 2
    assert len(capture.of(SUBMIT)) == 1
    recorded = capture.workloads[tag_a]
    assert (recorded["groups"], recorded["invocations"]) == (None, None)
    assert (recorded["local_size"], recorded["base"]) == ([64, 1, 1], [0, 0, 0])
    # The secondary's one parameter slot was written twice before anyone could read it: the layer
    # reports neither value, but says why.
    assert submit_a.sequence is not None
    assert capture.annexes(submit_a.sequence, tag_a) == {
        "groups": None,
        "invocations": None,
        "indirect_ambiguous": True,
    }


def test_ray_tracing_skips_exactly_when_the_driver_lacks_it(timeline: Runner) -> None:
    res, capture = timeline("--scenario", "ray_tracing")
    assert res.returncode == 0, res.stdout + res.stderr
    lacking = driver_lacks("ray_tracing")
    # Passed where the driver has ray tracing, skipped where it lacks it (probed without vkscope).
    assert verdicts(res.stdout, ["ray_tracing"]) == ({"ray_tracing": lacking} if lacking else {})
    if lacking:
        if "VK_KHR_ray_tracing_pipeline" in lacking:
            assert RT_SKIP in res.stdout.splitlines()
        assert capture.submits == [], "a skipped scenario submits nothing"
    else:
        assert capture.submits


def test_ray_tracing_workloads(timeline: Runner) -> None:
    skip_unless("ray_tracing")
    res, capture = timeline("--scenario", "ray_tracing", "--frames", "2")
    assert res.returncode == 0, res.stdout + res.stderr
    assert "PASS ray_tracing" in res.stdout, "the scenario checks every ray's result itself"
    per_frame = [
        ("buffer_transfer", "vkCmdFillBuffer", ("fill", RAY_BYTES)),
        ("acceleration_structure", "vkCmdBuildAccelerationStructuresKHR", ("build", 1)),
        ("acceleration_structure", "vkCmdBuildAccelerationStructuresKHR", ("build", 1)),
        ("acceleration_structure", "vkCmdCopyAccelerationStructureKHR", ("copy", 1)),
        ("trace_rays", "vkCmdTraceRaysKHR", (64, 32, 1)),
        ("trace_rays", "vkCmdTraceRaysIndirectKHR", (16, 8, 1)),
        ("buffer_transfer", "vkCmdCopyBuffer", ("copy", RAY_BYTES)),
    ]
    assert sizes(capture) == per_frame * 2
    traces = only(capture, "vkCmdTraceRaysIndirectKHR")
    assert len({s.sequence for s, _ in traces}) == 2
    for submit, tag in traces:
        recorded = capture.workloads[tag]
        assert (recorded["width"], recorded["height"], recorded["depth"]) == (None, None, None)
        # The parameters are found through the device address the application queried.
        assert submit.sequence is not None
        assert capture.annexes(submit.sequence, tag) == {"width": 16, "height": 8, "depth": 1}
        assert submit.payload["s_label"] == submit.sequence
    for submit, tag in only(capture, "vkCmdTraceRaysKHR"):
        assert submit.sequence is not None
        assert capture.annexes(submit.sequence, tag) == {}, "known when recorded"
