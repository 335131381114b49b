"""The timeline on every workload scenario: exactly the expected workloads, in order, with their
types, sizes, label stacks and draw counts; and the scenario still verifies its own results.

Each test runs vkscope-workload under the layer with the timeline on and a Unix socket receiver as
the host (test_timeline_support.Receiver), then decodes what the layer sent.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from subprocess import CompletedProcess
from typing import Any

import pytest

from harness.driver import driver
from harness.env import layer_env, run
from harness.timeline import (
    DEVICE,
    FRAME,
    GOODBYE,
    HELLO,
    SUBMIT,
    WORKLOAD,
    Capture,
    Receiver,
)
from vkscope.protocol_gen import QUEUE_FLAG

pytestmark = pytest.mark.vulkan

R8G8B8A8_UNORM = 37
DEPTH_FORMATS = (124, 126)  # D16_UNORM or D32_SFLOAT, as the workload picks
LOAD_CLEAR, LOAD_DONT_CARE = 1, 2
STORE_STORE, STORE_DONT_CARE = 0, 1
DRAWS = 8  # vkscope-workload's default --draws
PIXELS = 64 * 64

Runner = Callable[..., tuple[CompletedProcess[str], Capture]]


@pytest.fixture
def timeline(layer_dir: Path, workload: Path) -> Iterator[Runner]:
    receivers: list[Receiver] = []

    def run_workload(*args: str, **settings: str) -> tuple[CompletedProcess[str], Capture]:
        receiver = Receiver()
        receivers.append(receiver)
        env = layer_env(layer_dir, timeline="true", host=receiver.address, **settings)
        res = run([workload, *args], env)
        return res, receiver.finish()

    yield run_workload
    for r in receivers:
        r.close()


def scenario(timeline: Runner, name: str, *args: str, **settings: str) -> Capture:
    res, capture = timeline("--scenario", name, *args, **settings)
    assert res.returncode == 0, res.stdout + res.stderr
    assert f"PASS {name}" in res.stdout
    if name != "labels":
        assert all(stack == [] for _, _, _, stack in capture.submitted()), "no label anywhere"
    return capture


def summary(capture: Capture) -> list[tuple[str, str, Any]]:
    """(type, api, size) of every submitted workload instance in submission order."""
    out = []
    for _, _, w, _ in capture.submitted():
        size: Any = None
        if w["type"] == "renderpass":
            size = w["draws"]
        elif w["type"] == "dispatch":
            size = w["groups"]
        elif w["type"] == "buffer_transfer":
            size = (w["kind"], w["bytes"])
        elif w["type"] == "image_transfer":
            size = (w["kind"], w["pixels"])
        out.append((w["type"], w["api"], size))
    return out


def color(load: int, store: int = STORE_STORE, index: int = 0) -> dict[str, Any]:
    return {
        "index": index,
        "kind": "color",
        "format": R8G8B8A8_UNORM,
        "samples": 1,
        "load": load,
        "store": store,
        "stencil_load": LOAD_DONT_CARE,
        "stencil_store": STORE_DONT_CARE,
        "resolve": False,
    }


def test_connection_starts_with_hello_and_device_and_ends_with_goodbye(timeline: Runner) -> None:
    capture = scenario(timeline, "buffer_transfer")
    (conn,) = capture.connections
    assert conn[0].type == HELLO
    assert conn[0].payload["protocol"] == 1
    assert conn[0].payload["process"] == "vkscope-workload"
    assert conn[1].type == DEVICE
    device = conn[1].payload
    # What the driver says without vkscope: the workload program's first queue is on the first
    # family with graphics and compute; it adds one of another family where there is one.
    families = {f["index"]: f for f in driver().queue_families}
    main = next(f for f in driver().queue_families if f["flags"] & 0x3 == 0x3)
    queues = device["queues"]
    assert [q["id"] for q in queues] == list(range(len(queues)))
    assert (queues[0]["family"], queues[0]["index"]) == (main["index"], 0)
    for q in queues:
        family = families[q["family"]]
        assert q["flags"] == [name for bit, name in QUEUE_FLAG if family["flags"] & bit], q
        assert q["timestamp_valid_bits"] == family["timestamp_valid_bits"], q
    if driver().lavapipe:
        assert queues == [
            {"id": 0, "family": 0, "index": 0, "flags": ["graphics", "compute", "transfer"],
             "timestamp_valid_bits": 64}
        ]  # fmt: skip
    assert device["timestamp_period_ns"] > 0
    if driver().lavapipe:
        assert device["timestamp_period_ns"] == 1
    # The device's own version (1.4 on newer drivers); the probe caps what it reports at 1.3.
    major, minor, _ = (int(x) for x in device["api_version"].split("."))
    assert (major, minor) >= tuple(int(x) for x in driver().api_version.split("."))
    assert conn[-1].type == GOODBYE
    assert conn[-1].payload == {"dropped": 0}
    # Every workload is described before the first SUBMIT that names it.
    described: set[int] = set()
    for m in conn:
        if m.type == WORKLOAD:
            described.add(m.tag)
        if m.type == SUBMIT:
            assert {tag for tag, _ in m.payload["workloads"]} <= described


def test_renderpass(timeline: Runner) -> None:
    capture = scenario(timeline, "renderpass")
    assert summary(capture) == [
        ("renderpass", "vkCmdBeginRenderPass", DRAWS),
        ("image_transfer", "vkCmdCopyImageToBuffer", ("image_to_buffer", PIXELS)),
        ("renderpass", "vkCmdBeginRenderPass2", DRAWS + 1),
        ("image_transfer", "vkCmdCopyImageToBuffer", ("image_to_buffer", PIXELS)),
        ("image_transfer", "vkCmdCopyImageToBuffer", ("image_to_buffer", PIXELS)),
    ]
    single, _, multi, _, _ = [w for _, _, w, _ in capture.submitted()]
    for w in (single, multi):
        assert (w["width"], w["height"], w["layers"], w["view_mask"]) == (64, 64, 1, 0)
        assert w["split"] is False
    assert single["subpasses"] == 1
    assert single["attachments"] == [color(LOAD_CLEAR)]
    assert multi["subpasses"] == 2
    depth = multi["attachments"][2]
    assert multi["attachments"][:2] == [color(LOAD_CLEAR), color(LOAD_DONT_CARE, index=1)]
    assert depth["format"] in DEPTH_FORMATS
    assert (depth["kind"], depth["load"], depth["store"], depth["index"]) == (
        "depth_stencil",
        LOAD_CLEAR,
        STORE_DONT_CARE,
        2,
    )
    (submit,) = capture.submits
    assert submit.payload["s_label"] is None, "one-time, nothing split or indirect"


def test_dynamic_rendering_split_over_three_command_buffers_is_one_workload(
    timeline: Runner,
) -> None:
    capture = scenario(timeline, "dynamic_rendering")
    assert summary(capture) == [
        ("renderpass", "vkCmdBeginRendering", DRAWS),
        ("image_transfer", "vkCmdCopyImageToBuffer", ("image_to_buffer", PIXELS)),
        ("renderpass", "vkCmdBeginRendering", DRAWS),
        ("image_transfer", "vkCmdCopyImageToBuffer", ("image_to_buffer", PIXELS)),
    ]
    whole, a, b, c = capture.submits
    split_tag = a.payload["workloads"][0][0]
    split = capture.workloads[split_tag]
    # Recorded, the split pass has no total: the annex of the instance gives it.
    assert (split["draws"], split["split"]) == (None, True)
    assert capture.annexes(a.sequence or 0, split_tag) == {"draws": DRAWS}
    assert b.payload["workloads"] == [], "a resumed part is no workload of its own"
    assert capture.workloads[whole.payload["workloads"][0][0]]["split"] is False
    attachment = {**color(LOAD_CLEAR), "stencil_load": None, "stencil_store": None}
    assert split["attachments"] == [attachment]
    # The three parts run inside one s<submitID> label: the one of the part that began it.
    assert whole.payload["s_label"] is None
    assert {m.payload["s_label"] for m in (a, b, c)} == {a.sequence}
    assert len({m.sequence for m in capture.submits}) == 4


def test_secondary_executed_twice_counts_its_draws_twice(timeline: Runner) -> None:
    capture = scenario(timeline, "secondary")
    assert summary(capture) == [
        ("renderpass", "vkCmdBeginRenderPass", 2 * DRAWS),
        ("image_transfer", "vkCmdCopyImageToBuffer", ("image_to_buffer", PIXELS)),
        ("dispatch", "vkCmdDispatch", [4, 1, 1]),
        ("buffer_transfer", "vkCmdCopyBuffer", ("copy", 1024)),
    ]
    dispatch = [w for _, _, w, _ in capture.submitted()][2]
    assert (dispatch["local_size"], dispatch["invocations"]) == ([64, 1, 1], 256)


def test_multiview(timeline: Runner) -> None:
    capture = scenario(timeline, "multiview")
    assert summary(capture) == [
        ("renderpass", "vkCmdBeginRenderPass", DRAWS),
        ("image_transfer", "vkCmdCopyImageToBuffer", ("image_to_buffer", 2 * PIXELS)),
    ]
    rp = next(capture.submitted())[2]
    assert (rp["view_mask"], rp["layers"], rp["subpasses"]) == (0b11, 1, 1)


def test_compute_sizes_including_indirect_from_the_gpu(timeline: Runner) -> None:
    capture = scenario(timeline, "compute")
    elements = (16 + 64 + 256 + 16 + 16) * 64
    assert summary(capture) == [
        ("buffer_transfer", "vkCmdFillBuffer", ("fill", elements * 4)),
        ("dispatch", "vkCmdDispatch", [16, 1, 1]),
        ("dispatch", "vkCmdDispatch", [64, 1, 1]),
        ("dispatch", "vkCmdDispatch", [256, 1, 1]),
        ("dispatch", "vkCmdDispatchIndirect", [8, 2, 1]),
        ("dispatch", "vkCmdDispatchBase", [12, 1, 1]),
        ("buffer_transfer", "vkCmdCopyBuffer", ("copy", elements * 4)),
    ]
    dispatches = [(s, t, w) for s, t, w, _ in capture.submitted() if w["type"] == "dispatch"]
    # Local size from a specialization constant (the first three) and from a literal.
    for _, _, w in dispatches:
        assert w["local_size"] == [64, 1, 1]
    assert [w["invocations"] for _, _, w in dispatches] == [1024, 4096, 16384, 1024, 768]
    submit, tag, _ = dispatches[3]
    recorded = capture.workloads[tag]
    assert (recorded["groups"], recorded["invocations"]) == (None, None)
    assert capture.annexes(submit.sequence or 0, tag) == {"groups": [8, 2, 1], "invocations": 1024}
    assert dispatches[4][2]["base"] == [4, 0, 0]
    assert submit.payload["s_label"] == submit.sequence, "indirect: named per submission"


def test_buffer_transfer_bytes(timeline: Runner) -> None:
    capture = scenario(timeline, "buffer_transfer")
    size = 64 * 1024
    assert summary(capture) == [
        ("buffer_transfer", "vkCmdFillBuffer", ("fill", 16384)),
        ("buffer_transfer", "vkCmdFillBuffer", ("fill", size - 16384)),  # VK_WHOLE_SIZE
        ("buffer_transfer", "vkCmdFillBuffer", ("fill", size)),
        ("buffer_transfer", "vkCmdUpdateBuffer", ("update", 1024)),
        ("buffer_transfer", "vkCmdUpdateBuffer", ("update", 4)),
        ("buffer_transfer", "vkCmdCopyBuffer", ("copy", 8192 + 4096 + 1024 + 12)),
        ("buffer_transfer", "vkCmdCopyBuffer", ("copy", size)),
        ("buffer_transfer", "vkCmdCopyBuffer", ("copy", size)),
    ]


def test_image_transfer_pixels(timeline: Runner) -> None:
    capture = scenario(timeline, "image_transfer")
    downloads = [("image_transfer", "vkCmdCopyImageToBuffer", ("image_to_buffer", PIXELS))] * 5
    assert summary(capture) == [
        ("image_transfer", "vkCmdCopyBufferToImage", ("buffer_to_image", PIXELS)),
        ("image_transfer", "vkCmdClearColorImage", ("clear_color", PIXELS)),
        ("image_transfer", "vkCmdClearColorImage", ("clear_color", PIXELS)),
        ("image_transfer", "vkCmdClearColorImage", ("clear_color", PIXELS)),
        ("image_transfer", "vkCmdClearDepthStencilImage", ("clear_depth_stencil", PIXELS)),
        ("image_transfer", "vkCmdCopyImage", ("copy", 32 * 16)),
        ("image_transfer", "vkCmdBlitImage", ("blit", 32 * 64)),
        ("image_transfer", "vkCmdResolveImage", ("resolve", PIXELS)),
        *downloads,
    ]


def test_label_stacks_belong_to_the_queue(timeline: Runner) -> None:
    capture = scenario(timeline, "labels")
    stacks = [(w["api"], stack) for _, _, w, stack in capture.submitted()]
    frame = ["labels.queue", "labels.frame"]
    assert stacks == [
        ("vkCmdFillBuffer", [*frame, "labels.transfers"]),
        ("vkCmdUpdateBuffer", [*frame, "labels.transfers"]),
        ("vkCmdDispatch", [*frame, "labels.compute", "labels.compute.dispatch"]),
        # Begun in the first command buffer of the submission, ended in the second.
        ("vkCmdCopyBuffer", [*frame, "labels.cross"]),
    ]


def test_reused_command_buffer_has_a_submit_id_per_submission(timeline: Runner) -> None:
    capture = scenario(timeline, "reusable", "--frames", "2")
    init, *reuses = capture.submits
    assert len(reuses) == 6
    tags = {tuple(tag for tag, _ in m.payload["workloads"]) for m in reuses}
    assert len(tags) == 1, "the same recorded workloads every time"
    ids = [m.sequence for m in reuses]
    assert len(set(ids)) == 6 and init.sequence not in ids
    # Not one-time: each submission runs inside its own s<submitID> label.
    assert [m.payload["s_label"] for m in reuses] == ids
    assert init.payload["s_label"] is None
    dispatch_tag = next(iter(tags))[0]
    assert sum(1 for m in capture.of(WORKLOAD) if m.tag == dispatch_tag) == 1


def test_multi_submit(timeline: Runner) -> None:
    capture = scenario(timeline, "multi_submit")
    assert [m.payload["api"] for m in capture.submits] == ["vkQueueSubmit"] * 3 + ["vkQueueSubmit2"]
    assert summary(capture) == [
        ("buffer_transfer", "vkCmdFillBuffer", ("fill", 1024)),
        ("buffer_transfer", "vkCmdFillBuffer", ("fill", 1024)),
        ("dispatch", "vkCmdDispatch", [4, 1, 1]),
        ("buffer_transfer", "vkCmdUpdateBuffer", ("update", 1024)),
        ("buffer_transfer", "vkCmdCopyBuffer", ("copy", 3072)),
    ]


def test_threads_record_at_once(timeline: Runner) -> None:
    capture = scenario(timeline, "threads", "--threads", "2")
    per_thread = [
        ("renderpass", "vkCmdBeginRenderPass", DRAWS),
        ("image_transfer", "vkCmdCopyImageToBuffer", ("image_to_buffer", PIXELS)),
        ("dispatch", "vkCmdDispatch", [4, 1, 1]),
        ("buffer_transfer", "vkCmdCopyBuffer", ("copy", 1024)),
    ]
    assert summary(capture) == per_thread * 2
    assert len({m.sequence for m in capture.submits}) == 2
    tags = [t for _, t, _, _ in capture.submitted()]
    assert len(set(tags)) == len(tags)


def test_frames_every_n_submissions(timeline: Runner) -> None:
    capture = scenario(timeline, "multi_submit", "--frames", "2", frame_submits="4")
    assert [m.payload["frame"] for m in capture.submits] == [0] * 4 + [1] * 4
    frames = capture.of(FRAME)
    assert [(m.tag, m.payload["reason"]) for m in frames] == [
        (0, "submit_count"),
        (1, "submit_count"),
    ]
    assert all(m.payload["queue"] == 0 and m.payload["cpu_ns"] > 0 for m in frames)


def test_cycles_reconnect_and_keep_ids_unique(timeline: Runner) -> None:
    res, capture = timeline("--scenario", "compute", "--cycles", "3")
    assert res.returncode == 0, res.stderr
    assert len(capture.connections) == 3
    for conn in capture.connections:
        assert conn[0].type == HELLO and conn[-1].type == GOODBYE
    tags = [m.tag for m in capture.of(WORKLOAD)]
    assert len(set(tags)) == len(tags) == 21
    devices = [m.tag for m in capture.of(DEVICE)]
    assert len(set(devices)) == 3


@pytest.mark.window_system
def test_present_ends_frames(layer_dir: Path) -> None:
    receiver = Receiver()
    try:
        env = layer_env(layer_dir, timeline="true", host=receiver.address)
        res = run(["xvfb-run", "-a", "vkcube", "--c", "5"], env)
        capture = receiver.finish()
    finally:
        receiver.close()
    assert res.returncode == 0, res.stdout + res.stderr
    frames = capture.of(FRAME)
    assert [(m.tag, m.payload["reason"]) for m in frames] == [(i, "present") for i in range(5)]
    drawing = [m for m in capture.submits if m.payload["workloads"]]
    assert [m.payload["frame"] for m in drawing] == list(range(5))
    ((cube, *_),) = {tuple(t for t, _ in m.payload["workloads"]) for m in drawing}
    assert (capture.workloads[cube]["type"], capture.workloads[cube]["draws"]) == ("renderpass", 1)
    # vkcube records its command buffers once and submits them every frame.
    assert [m.payload["s_label"] for m in drawing] == [m.sequence for m in drawing]
