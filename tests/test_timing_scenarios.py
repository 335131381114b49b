"""Timing on the workload scenarios (docs/timing.md): every workload instance gets a GPU start and
end (or a stated reason why not), in order on its queue, inside the CPU-side window of its
submission; relative costs come out right; reused command buffers give one timing per
submission; query pools stay bounded; nothing confuses the validation layer below vkscope."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterator
from pathlib import Path

import pytest

from harness import protocol
from harness.driver import driver, skip_unless
from harness.env import layer_env, run
from harness.timeline import Receiver
from harness.timing import (
    NOT_SERIALIZED,
    REASONS,
    SUBMIT_DONE,
    TIMING_FIELDS,
    Runner,
    Timed,
    clock,
    increments_ratio,
    instances,
    make_runner,
    query_pools,
    scenario_ran,
    submit_done,
)

pytestmark = pytest.mark.vulkan

MODES = tuple(protocol.DEFINITION["enums"]["serialization"]["values"])


@pytest.fixture
def timed(layer_dir: Path, workload: Path) -> Iterator[Runner]:
    receivers: list[Receiver] = []
    yield make_runner(layer_dir, workload, receivers)
    for r in receivers:
        r.close()


def test_device_says_which_clock(timed: Runner) -> None:
    res, capture = timed("--scenario", "buffer_transfer", timing="queue")
    scenario_ran(res, "buffer_transfer")
    # lavapipe has VK_EXT_calibrated_timestamps: times are on CLOCK_MONOTONIC.
    c = clock(capture)
    assert c["domain"] == "clock_monotonic"
    assert isinstance(c["max_deviation_ns"], int)


def test_timing_read_detect_copies_on_a_cpu_device_only(timed: Runner, tmp_path: Path) -> None:
    # On a CPU device (lavapipe) reading a pool in place waits for the device's own threads, so
    # `detect` copies; on a GPU it reads one-time recordings in place. The layer says which.
    log = tmp_path / "layer.log"
    res, _ = timed("--scenario", "compute", "--frames", "1", timing="queue", log_level="info",
                   log_file=str(log))  # fmt: skip
    scenario_ran(res, "compute")
    lines = [line for line in log.read_text().splitlines() if "timing: device" in line]
    assert lines, log.read_text()
    way = "copied out" if driver().cpu_device else "read in place"
    assert all(f"one-time recordings' timestamps {way}" in line for line in lines), lines


def test_pools_read_in_place_are_reset_on_the_host(timed: Runner, tmp_path: Path) -> None:
    # A one-time recording's pools go back reset on the host (hostQueryReset, part of Vulkan
    # 1.2), so that the next one-time recording to take them resets nothing in its command
    # buffer. The layer says so for timing and for pipeline statistics.
    skip_unless("vulkan_1_2")
    log = tmp_path / "layer.log"
    res, _ = timed("--scenario", "compute", "--frames", "3", timing="queue", timing_read="in_place",
                   counters="pipeline_statistics", counters_read="in_place", log_level="info",
                   log_file=str(log))  # fmt: skip
    scenario_ran(res, "compute")
    text = log.read_text()
    for instrument in ("timing: device", "pipeline statistics: device"):
        lines = [line for line in text.splitlines() if instrument in line]
        assert lines, text
        assert all("read in place, their pools reset on the host" in line for line in lines), lines


@pytest.mark.solo
def test_compute_dispatches_measure_one_four_sixteen(timed: Runner) -> None:
    res, capture = timed("--scenario", "compute", "--frames", "8", timing="queue")
    scenario_ran(res, "compute")
    per_submit: dict[int, dict[int, int]] = defaultdict(dict)
    for t in instances(capture):
        groups = t.fields.get("groups")
        if t.fields["api"] == "vkCmdDispatch" and groups in ([16, 1, 1], [64, 1, 1], [256, 1, 1]):
            assert t.ok, t.fields
            assert t.fields["serialization"] == "queue"
            per_submit[t.submit.sequence or 0][groups[0]] = t.duration
    assert len(per_submit) == 8
    assert all(d.keys() == {16, 64, 256} and min(d.values()) > 0 for d in per_submit.values())
    if not driver().lavapipe:
        # A GPU runs these few groups side by side, so their times do not follow the group count
        # (an H100 takes about the same for all three); bench/device's accuracy check compares
        # times with the work of each group there instead.
        return
    # lavapipe runs the GPU's work on the CPU, so a dispatch's time moves with the machine. The
    # frames after the first (which compiles the pipeline) each give the ratio of the increments,
    # 192 groups (256 - 64) against 48 (64 - 16), which must be four.
    later = [{g: float(c) for g, c in per_submit[seq].items()} for seq in sorted(per_submit)[1:]]
    assert increments_ratio(later) == pytest.approx(4, rel=0.1), per_submit


def check_instances(items: list[Timed], done: dict[int, int], slack_ns: int, mode: str) -> None:
    """Every instance timed or explained; times ordered on each queue and inside the CPU-side
    window of the submission (SUBMIT cpu_ns .. SUBMIT_DONE cpu_ns)."""
    last: dict[int, Timed] = {}
    for t in items:
        assert t.fields.keys() >= TIMING_FIELDS, t.fields
        if not t.ok:
            assert t.fields["timing"] in ("untimed", "ambiguous"), t.fields
            assert t.fields["timing_reason"] in REASONS, t.fields
            assert t.fields["gpu_begin_ns"] is None and t.fields["gpu_end_ns"] is None
            continue
        assert t.begin <= t.end, t.fields
        sequence = t.submit.sequence or 0
        assert t.submit.payload["cpu_ns"] - slack_ns <= t.begin, (t.fields, t.submit.payload)
        assert t.end <= done[sequence] + slack_ns, (t.fields, done[sequence])
        queue = t.submit.payload["queue"]
        if queue in last:
            before = last[queue]
            # Serialized, a workload starts after the one before it ended; with `none` the
            # starts are still in submission order.
            if mode == "none":
                assert before.begin <= t.begin, (before.fields, t.fields)
            else:
                assert before.end <= t.begin, (before.fields, t.fields)
        last[queue] = t


# How the timestamps reach the readback thread (docs/timing.md). The scenarios record with
# ONE_TIME_SUBMIT where a real application would: their query pools are read in place (forced
# here: on a CPU device `detect` copies them), or copied out by a layer command buffer (forced);
# recorded without it, they may run again and are always copied. Every way must time the same
# workloads alike.
READS: dict[str, tuple[list[str], dict[str, str]]] = {
    "in place": ([], {"timing_read": "in_place"}),
    "copy": ([], {"timing_read": "copy"}),
    "reusable recordings": (["--no-one-time-submit"], {}),
}


@pytest.mark.parametrize("reads", READS)
@pytest.mark.parametrize("mode", MODES)
def test_every_workload_of_every_scenario_is_timed(timed: Runner, mode: str, reads: str) -> None:
    extra, settings = READS[reads]
    res, capture = timed("--all", "--frames", "2", *extra, timing=mode, **settings)
    assert res.returncode == 0, res.stdout + res.stderr
    items = list(instances(capture))
    assert len(items) > 50
    done = submit_done(capture)
    # Every submitted command buffer's completion was seen.
    assert {t.submit.sequence for t in items} <= done.keys()
    c = clock(capture)
    slack = int(c["max_deviation_ns"] or 0)
    check_instances(items, done, slack, mode)
    # Only the secondary that indirect_draw executes twice needs an excuse.
    explained = {(t.fields["timing"], t.fields["timing_reason"]) for t in items if not t.ok}
    assert explained == {("ambiguous", "secondary executed several times")}
    for t in items:
        if not t.ok:
            continue
        if t.fields.get("timing_reason") == NOT_SERIALIZED:
            # Left out of the cross-queue chain, still serialized within its queue.
            assert (mode, t.fields["serialization"]) == ("full", "queue")
        else:
            assert t.fields["serialization"] == mode
            assert "timing_reason" not in t.fields


def test_a_reused_command_buffer_is_timed_at_each_submission(timed: Runner) -> None:
    # Recorded once, submitted three times a frame, each time waited for.
    res, capture = timed("--scenario", "reusable", "--frames", "2", timing="queue")
    scenario_ran(res, "reusable")
    done = submit_done(capture)
    dispatches = [t for t in instances(capture) if t.fields["type"] == "dispatch"]
    assert len(dispatches) == 6
    assert len({t.tag for t in dispatches}) == 1  # one recorded workload
    assert len({t.submit.sequence for t in dispatches}) == 6  # six instances
    assert all(t.ok for t in dispatches), [t.fields for t in dispatches]
    # Distinct and each inside its own submission's window: the submissions do not overlap, so
    # each value is that submission's own, not a neighbour's.
    assert len({t.begin for t in dispatches}) == 6
    for t in dispatches:
        assert t.submit.payload["cpu_ns"] <= t.begin <= t.end <= done[t.submit.sequence or 0]


def test_secondaries_and_split_render_passes(timed: Runner) -> None:
    res, capture = timed(
        "--scenario", "secondary", "--scenario", "dynamic_rendering", "--scenario", "multiview",
        timing="queue",
    )  # fmt: skip
    assert res.returncode == 0, res.stdout + res.stderr
    items = list(instances(capture))
    assert items and all(t.ok for t in items), [t.fields for t in items if not t.ok]
    # The render pass split over three command buffers is one instance, timed from its first
    # begin to its final end, and long enough to hold its draws.
    split = [t for t in items if t.fields.get("split")]
    assert len(split) == 1
    assert split[0].duration > 0
    # A dispatch in a secondary executed once is timed like any other.
    assert any(t.fields["type"] == "dispatch" for t in items)


def test_a_secondary_executed_twice_is_flagged(timed: Runner) -> None:
    res, capture = timed("--scenario", "indirect_draw", "--frames", "2", timing="queue")
    scenario_ran(res, "indirect_draw")
    items = list(instances(capture))
    twice = [t for t in items if t.fields["api"] == "vkCmdDispatchIndirect"]
    # Both executions are listed; they are one instance, whose queries the second execution
    # overwrote before anyone could read the first: no time rather than a wrong one.
    assert len(twice) == 4
    for t in twice:
        assert t.fields["timing"] == "ambiguous"
        assert t.fields["timing_reason"] == "secondary executed several times"
        assert t.fields["gpu_begin_ns"] is None
    assert all(t.ok for t in items if t not in twice)


@pytest.mark.solo
def test_query_pools_stay_bounded_over_a_thousand_frames(timed: Runner) -> None:
    # Read in place on every device: the pools that wait for their read are what could pile up
    # (`detect` copies on a CPU device, and no pool waits there).
    scenarios = ("--scenario", "buffer_transfer", "--scenario", "reusable")
    res, short = timed(*scenarios, "--frames", "10", timing="queue", timing_read="in_place")
    assert res.returncode == 0, res.stderr
    res, long = timed(*scenarios, "--frames", "1000", timing="queue", timing_read="in_place")
    assert res.returncode == 0, res.stderr
    # Pools of one-run recordings wait for their read before they are reused, so how many are
    # held at once follows how far the readback thread is behind, which varies from run to run
    # (on a two-core CI machine, 5 in the short run and 30 in the long one): bounded by that
    # backlog, not by the run's length, where a pool per frame would be a thousand. Solo: with
    # other tests keeping both cores busy, the readback thread waited for a core long enough
    # that the long run held up to 47 pools, which measures the machine's load, not the layer.
    assert 1 <= query_pools(long) <= max(4 * query_pools(short), 1000 // 20)
    # ... and every one of those frames was timed.
    assert len(long.of(SUBMIT_DONE)) >= 1000


def test_full_serialization_with_wait_before_signal_across_two_queues(timed: Runner) -> None:
    res, capture = timed("--scenario", "multi_queue", "--frames", "3", timing="full")
    scenario_ran(res, "multi_queue")  # skips with "needs a second queue" on lavapipe
    items = list(instances(capture))
    queues = {t.submit.payload["queue"] for t in items}
    assert len(queues) == 2
    assert all(t.ok for t in items), [t.fields for t in items if not t.ok]
    # The consumer waits for a value its producer is submitted after: left out of the chain (or
    # it would deadlock), and it says so; the producer is fully serialized.
    consumer = [t for t in items if t.fields.get("timing_reason") == NOT_SERIALIZED]
    producer = [t for t in items if t.fields["serialization"] == "full"]
    assert consumer and producer
    assert {t.submit.payload["queue"] for t in consumer} != {
        t.submit.payload["queue"] for t in producer
    }


@pytest.mark.parametrize("mode", MODES)
def test_validation_below_vkscope_sees_nothing_wrong(
    layer_dir: Path, workload: Path, mode: str
) -> None:
    # `--validation above` puts vkscope above the validation layer (the application's layer
    # order), so everything vkscope injects is validated, synchronization included. Read in place
    # on every device, so that both ways are validated on a CPU device too: the scenarios' one-time
    # recordings are read in place, the reusable ones copied out.
    env = layer_env(layer_dir, enable=False, timing=mode, timing_read="in_place")
    res = run([workload, "--all", "--frames", "2", "--validation", "above"], env)
    assert res.returncode == 0, res.stdout + res.stderr
    assert "validation messages: 0" in res.stdout + res.stderr
