#!/usr/bin/env python3
"""The checks no CI run reaches, on a machine with a real GPU: every scenario under the layer in
every timing mode with the validation layer below reporting nothing, the `full` chain across two
queues with a wait-before-signal, a ray-tracing capture, the timer's floor (floor_check.py), timer
accuracy against the application's own timestamps, frame time per mode, the cost of short frames
(`vkscope run` included), recording cost per call, the host's GPU sampler through NVML
(gpu_state_check.py), and the GPU tests of pytest.

Each check is named (CHECKS below, in the order they run), writes its part of the results file
as soon as it ends, and fails loudly: a FAILED line, its reasons in the JSON, exit status 1. A
check that needs what the driver lacks (probed without the layer: harness/driver.py) says
"not available on this device" with what the probe saw. A new check is one function and one line
in CHECKS; its part of docs/bench/device.md is one function in device_render.py.

    python bench/device/checks.py [--quick] [--out DIR] [CHECK ...]   every check, or those named
    python bench/device/checks.py --list
    python bench/device/checks.py --merge FILE ...   fold device runs into bench/results/device.json
                                                     and rewrite docs/bench/device.md

It runs against the installed vkscope package: the `.venv` here (`bash bench/device/run.sh
--quick` on lavapipe proves the script end to end), or on a bare device machine the bundle that
run.sh brings up. A device run, in one go:

  1. here, in the checkout the device tool sends, after scripts/setup.sh:
       bash bench/device/prepare.sh
     It fills three ignored folders (about 10 MB): .gl (Debian's libvulkan1 and
     vulkan-validationlayers .deb files), .whl (wheels for the device's Python 3.12 of msgspec,
     rich, markdown-it-py, mdurl, pygments, vulkan, cffi, pycparser, perfetto, protobuf and
     nvidia-ml-py, at the versions in .venv) and .device (the package installed from this tree,
     rebuilt first, and the commit it was built from);
  2. on the device, carry [".gl", ".whl", ".device"], timeout 600:
       bash bench/device/run.sh --bring-up scenarios driver two_queue_chain ray_tracing floor \
           accuracy frame_time frame_cost record_cost gpu_state
       bash bench/device/run.sh --bring-up workload_cost
       bash bench/device/run.sh --bring-up budget
       bash bench/device/run.sh --bring-up pytest
     each writing $OUT/device.json (a check's part is written as soon as it ends, so a run cut
     short keeps what it finished); a check of interleaved rounds longer than one call allows
     runs in parts, `--rounds N CHECK` in each call;
  3. here: python bench/device/checks.py --merge FIRST/device.json SECOND/device.json
     writes bench/results/device.json and docs/bench/device.md (the parts of one check joined
     into its rounds); commit both. All checks at
     one commit is the rule; where one check was re-run at a later commit (the device's time
     ran out for the rest), --merge --over LATER/device.json puts it over the file's own, and
     the page says the commit it ran at.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ET
from collections import Counter, defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bench import frame_cost, samplers_cost
from bench.device import budget_check, floor_check, workload_check
from bench.device.device_context import Context, Outcome, run_check, timing_analysis
from bench.device.device_render import render
from bench.device.dispatch_calibration import RATIO_GROUPS, app_timings, calibrate, iterations_for
from bench.device.gpu_state_check import check_gpu_state
from bench.device.merge_results import DOC, NAME, merge
from bench.record_configs import CONFIGS, IDLE_CONFIG
from bench.record_cost import Paths, entries, measure
from bench.resultfile import new, write
from harness.driver import probe, verdicts
from harness.timing import NOT_SERIALIZED

HERE = Path(__file__).resolve().parent
REPO = HERE.parent.parent
__all__ = ["CHECKS", "DOC", "NAME", "render"]

MODES = ("timeline", "none", "queue", "full")
# Dispatch lengths the accuracy sweep aims at (µs), around the 100 µs its target starts at; the
# loop length for each is calibrated on the device from the compute scenario's default.
ACCURACY_TARGETS_US = (10, 90, 115, 350, 1400)
QUICK_ACCURACY_TARGETS_US = (20, 400)
HEAVY_DISPATCH_US = 1400  # GPU-bound frames: dispatches this long
# pytest files whose tests run the layer on the GPU (the rest are the host's, device-independent)
GPU_TESTS = (
    "tests/test_driver_skips.py",
    "tests/test_workloads_under_layer.py",
    "tests/test_timeline_robustness.py",
    "tests/test_timeline_scenarios.py",
    "tests/test_timeline_indirect.py",
    "tests/test_timing_scenarios.py",
    "tests/test_timing_frames.py",
    "tests/test_capture_layer.py",
    "tests/test_timing_host_layer.py",
    "tests/test_counters_layer.py",
    "tests/test_counters_host.py",
    # Under a budget a GPU interprets the command buffers it left out after the driver's call.
    "tests/test_budget_layer.py",
)
QUICK_GPU_TESTS = ("tests/test_driver_skips.py", "tests/test_timeline_indirect.py")


# -- the checks ----------------------------------------------------------------------------------


def check_driver(ctx: Context, out: Outcome) -> None:
    """The driver without the layer, and what the workload program makes of it without the
    layer: every scenario passes except those the probe says the driver lacks something for."""
    out.data["probe"] = ctx.driver.as_json()
    res = ctx.run(["--all", "--frames", "1"], ctx.bare_env())
    out.expect(res.returncode == 0, f"the workload failed without the layer:\n{res.stderr[-1500:]}")
    listed = ctx.run(["--list"], ctx.bare_env()).stdout.split()
    try:
        out.data["skipped_without_layer"] = verdicts(res.stdout, listed, ctx.driver)
    except AssertionError as exc:
        out.expect(False, f"without the layer: {exc}")


def check_scenarios(ctx: Context, out: Outcome) -> None:
    """Every scenario under the layer in every mode: verdicts as without the layer, every
    instance timed or explained, in its CPU window and queue order; validation below: nothing."""
    frames = "2" if ctx.quick else "3"
    listed = ctx.run(["--list"], ctx.bare_env()).stdout.split()
    for mode in MODES:
        settings = {"timeline": "true"} if mode == "timeline" else {"timing": mode}
        res, capture = ctx.capture(["--all", "--frames", frames], **settings)
        part: dict[str, Any] = {"rc": res.returncode}
        out.expect(res.returncode == 0, f"{mode}: exit {res.returncode}\n{res.stderr[-1500:]}")
        try:
            part["skipped"] = verdicts(res.stdout, listed, ctx.driver)
        except AssertionError as exc:
            out.expect(False, f"{mode}: {exc}")
        a = timing_analysis(capture, None if mode == "timeline" else mode)
        part["timing"] = a
        out.expect(a["instances"] > 0, f"{mode}: no workload instance was sent")
        out.expect(a["dropped"] == 0, f"{mode}: {a['dropped']} messages dropped")
        for key in ("without_timing_fields", "unexplained_untimed", "unknown_reasons",
                    "outside_cpu_window", "out_of_queue_order"):  # fmt: skip
            out.expect(a.get(key, 0) == 0, f"{mode}: {a[key]} instance(s) {key.replace('_', ' ')}")
        if mode != "full":
            out.expect(a["not_serialized"] == 0, f"{mode}: left out of a chain it does not build")
        v = ctx.validation(["--all", "--frames", "2"], **settings)
        part["validation"] = v
        out.expect(
            v["rc"] == 0 and v["messages"] == 0,
            f"{mode}: validation below vkscope: exit {v['rc']}, {v['messages']} messages\n"
            f"{v['tail']}",
        )
        out.data[mode] = part
        print(f"  {mode}: {a['instances']} instances, validation {v['messages']}", flush=True)


def check_two_queue_chain(ctx: Context, out: Outcome) -> None:
    """`full` across two queues, the consumer waiting for a value its producer is submitted
    after: the consumer is left out of the cross-queue chain (or it would deadlock) and says so;
    the producer is fully serialized; all of it completes and is timed."""
    frames = "10" if ctx.quick else "50"
    res, capture = ctx.capture(["--scenario", "multi_queue", "--frames", frames], timing="full")
    out.expect(res.returncode == 0, f"exit {res.returncode}\n{res.stderr[-1500:]}")
    out.expect("PASS multi_queue" in res.stdout, f"the scenario did not pass:\n{res.stdout}")
    a = timing_analysis(capture, "full")
    per_queue: dict[int, Counter[str]] = defaultdict(Counter)
    for s, _, f, _ in capture.submitted():
        reason = f.get("timing_reason")
        per_queue[s.payload["queue"]][f"{f.get('timing')} / {f.get('serialization')}"
                                      + (f" / {reason}" if reason else "")] += 1  # fmt: skip
    out.data |= {"frames": int(frames), "timing": a,
                 "per_queue": {str(q): dict(c) for q, c in sorted(per_queue.items())}}  # fmt: skip
    out.expect(len(per_queue) == 2, f"instances on {len(per_queue)} queue(s), not 2")
    for key in ("without_timing_fields", "outside_cpu_window", "out_of_queue_order"):
        out.expect(a[key] == 0, f"{a[key]} instance(s) {key.replace('_', ' ')}")
    out.expect(
        all(k.startswith("ok") for k in a["status"]), f"not every instance timed: {a['status']}"
    )
    consumer = {q for q, c in per_queue.items() if any(NOT_SERIALIZED in k for k in c)}
    producer = {q for q, c in per_queue.items() if any(k == "ok / full" for k in c)}
    out.expect(bool(consumer), "no instance left out of the chain (wait-before-signal)")
    out.expect(bool(producer), "no instance fully serialized")
    out.expect(not consumer & producer, "consumer and producer on the same queue")
    v = ctx.validation(["--scenario", "multi_queue", "--frames", "2"], timing="full")
    out.data["validation"] = v
    out.expect(v["rc"] == 0 and v["messages"] == 0, f"validation: {v}")


COUNTER_REASONS_EXPECTED = {
    # What the scenarios hold that cannot be counted on any device.
    "split_render_pass",  # dynamic_rendering: one instance over three command buffers
    "secondary_twice",  # indirect_draw: a secondary executed twice
    "application_query_active",  # app_statistics: inside the application's own query
}
GRAPHICS_STATISTICS = {
    "input_assembly_vertices", "input_assembly_primitives", "vertex_shader_invocations",
    "geometry_shader_invocations", "geometry_shader_primitives", "clipping_invocations",
    "clipping_primitives", "fragment_shader_invocations", "tessellation_control_shader_patches",
    "tessellation_evaluation_shader_invocations",
}  # fmt: skip
COUNTERS_CODE = 0x09


def check_counters(ctx: Context, out: Outcome) -> None:
    """Pipeline statistics on every queue family the workload program uses (the second queue
    is on a compute-only family where the device has one): each family announces what it
    counts (a compute-only one compute invocations alone, one without graphics or compute
    nothing), every scenario's instances are counted or say why, with exact known values (G
    groups of L invocations count G*L; triangle lists three vertices a primitive), alone and
    with timing; validation below vkscope: nothing."""
    for label, settings in (
        ("counters", {"counters": "pipeline_statistics"}),
        ("counters + timing queue", {"counters": "pipeline_statistics", "timing": "queue"}),
    ):
        res, capture = ctx.capture(["--all", "--frames", "2"], **settings)
        part: dict[str, Any] = {"rc": res.returncode}
        out.expect(res.returncode == 0, f"{label}: exit {res.returncode}\n{res.stderr[-1500:]}")
        families = {m.payload["family"]: m.payload for m in capture.of(COUNTERS_CODE)}
        part["families"] = {
            str(f): {"names": [c["name"] for c in p["counters"]], "reason": p.get("reason")}
            for f, p in sorted(families.items())
        }
        for f, flags in ((q["index"], q["flags"]) for q in ctx.driver.queue_families):
            names = {c["name"] for c in families.get(f, {}).get("counters", [])}
            expected = (GRAPHICS_STATISTICS if flags & 0x1 else set()) | (
                {"compute_shader_invocations"} if flags & 0x2 else set()
            )
            out.expect(names == expected, f"{label}: family {f} (flags {flags:#x}) counts {names}")
        per_queue: dict[int, Counter[str]] = defaultdict(Counter)
        wrong: list[str] = []
        for s, _, w, _ in capture.submitted():
            counts, reason = w.get("counters"), w.get("counters_reason")
            queue = s.payload["queue"]
            per_queue[queue]["counted" if counts else f"none: {reason}"] += 1
            if not counts:
                if reason is None:
                    wrong.append(f"no counters and no reason: {w}")
                continue
            invocations = w.get("invocations") if w["type"] == "dispatch" else None
            if invocations is not None and counts.get("compute_shader_invocations") != invocations:
                wrong.append(f"dispatch of {w['invocations']} invocations counted {counts}")
            if w["type"] == "renderpass":
                vertices = counts.get("input_assembly_vertices", 0)
                if vertices != 3 * counts.get("input_assembly_primitives", -1) or vertices == 0:
                    wrong.append(f"render pass {w.get('draws')} draws counted {counts}")
        reasons = {
            k.removeprefix("none: ") for c in per_queue.values() for k in c if k != "counted"
        }
        part["per_queue"] = {str(q): dict(c) for q, c in sorted(per_queue.items())}
        out.expect(not wrong, f"{label}: " + "; ".join(wrong[:5]))
        # secondary: a render pass of secondaries, counted only where queries are inherited.
        allowed = COUNTER_REASONS_EXPECTED | (
            {"secondary_without_inherited_queries"}
            if ctx.driver.lacks("inherited_queries")
            else set()
        )
        out.expect(reasons <= allowed, f"{label}: unexpected reasons {reasons}")
        out.expect(len(per_queue) >= 1, f"{label}: no instance")
        v = ctx.validation(["--all", "--frames", "2"], **settings)
        part["validation"] = v
        out.expect(
            v["rc"] == 0 and v["messages"] == 0,
            f"{label}: validation below vkscope: exit {v['rc']}, {v['messages']} messages\n"
            f"{v['tail']}",
        )
        out.data[label] = part
        print(f"  {label}: {dict(per_queue)}, validation {v['messages']}", flush=True)


HANDOVER_SLEEP_US = 3000  # the layer's old-driver pause, forced on to see that the GPU waits


def check_handover(ctx: Context, out: Outcome) -> None:
    """CPU-sampled counters between workloads with real workloads (docs/counters.md): the layer
    samples through the event handover here (the driver is on its list); with the old-driver
    pause forced on, every gap between consecutive workloads of a command buffer on the GPU's
    own timestamps is at least the pause: the GPU waited for the host at every handover, not
    only at the first (the scenario records its command buffer anew every frame: from the second
    frame on, its handovers use the event pairs it already holds, reset on the host before each
    submission); cpu_time arrives for every workload or a reason; validation below vkscope:
    nothing; bench/samplers_cost.py's measurement of the cost."""
    samplers = "sampler:cpu_time"
    args = ["--scenario", "compute", "--frames", "3"]
    for label, extra in (("handover", {}), ("handover, pause on", {"handover_sleep": "on"})):
        res, capture = ctx.capture(args, counters=samplers, timing="queue", **extra)
        out.expect(res.returncode == 0, f"{label}: exit {res.returncode}\n{res.stderr[-1500:]}")
        families = [m.payload for m in capture.of(COUNTERS_CODE)]
        sampling = sorted({f.get("sampling", "") for f in families})
        names = sorted({c["name"] for f in families for c in f["counters"]})
        out.expect(sampling == ["handover"], f"{label}: sampled {sampling}")
        valued: Counter[str] = Counter()
        timed = []
        for s, _, w, _ in capture.submitted():
            values, reason = w.get("counters"), w.get("counters_reason")
            valued["values" if values else f"none: {reason}"] += 1
            out.expect(bool(values) or reason is not None, f"{label}: no values, no reason: {w}")
            if w.get("timing") == "ok":
                timed.append((s.sequence or 0, int(w["gpu_begin_ns"]), int(w["gpu_end_ns"])))
        gaps = samplers_cost.gaps_us(timed)
        part = {"sampling": sampling, "counters": names, "instances": dict(valued),
                "gaps_us": {"count": len(gaps), "min": min(gaps, default=None),
                            "median": statistics.median(gaps) if gaps else None}}  # fmt: skip
        # lavapipe's timestamps are taken when its work is flushed, not when it runs: there the
        # tests' cpu_time ratios show that the GPU waits.
        if extra and not ctx.driver.lavapipe:
            out.expect(bool(gaps), f"{label}: no gap between timed workloads")
            short = [g for g in gaps if g < HANDOVER_SLEEP_US * 0.95]
            out.expect(not short, f"{label}: {len(short)} of {len(gaps)} gaps under the pause")
        out.data[label] = part
        print(f"  {label}: {part}", flush=True)
    v = ctx.validation(["--all", "--frames", "2"], counters=samplers)
    out.data["validation"] = v
    found = f"exit {v['rc']}, {v['messages']} messages"
    out.expect(
        v["rc"] == 0 and v["messages"] == 0, f"validation below vkscope: {found}\n{v['tail']}"
    )
    runs, short_frames, long_frames = (1, 2, 4) if ctx.quick else (5, 2, 12)
    out.data["cost"] = samplers_cost.measure(
        ctx.layer, ctx.workload, runs, short_frames, long_frames,
        progress=lambda s: print(f"  handover cost {s}", flush=True),
    )  # fmt: skip


# The ray_tracing scenario's workloads, per frame (tests/test_timeline_indirect.py).
RAY_BYTES = (64 * 32 + 16 * 8) * 4
RAY_FRAME = [
    ["buffer_transfer", "vkCmdFillBuffer", ["fill", RAY_BYTES]],
    ["acceleration_structure", "vkCmdBuildAccelerationStructuresKHR", ["build", 1]],
    ["acceleration_structure", "vkCmdBuildAccelerationStructuresKHR", ["build", 1]],
    ["acceleration_structure", "vkCmdCopyAccelerationStructureKHR", ["copy", 1]],
    ["trace_rays", "vkCmdTraceRaysKHR", [64, 32, 1]],
    ["trace_rays", "vkCmdTraceRaysIndirectKHR", [16, 8, 1]],
    ["buffer_transfer", "vkCmdCopyBuffer", ["copy", RAY_BYTES]],
]


def check_ray_tracing(ctx: Context, out: Outcome) -> None:
    """A ray-tracing capture with timing: acceleration structure builds and copies, a direct and
    an indirect trace (its size arriving as an annex), every instance timed."""
    res, capture = ctx.capture(["--scenario", "ray_tracing", "--frames", "2"], timing="queue")
    out.expect(res.returncode == 0, f"exit {res.returncode}\n{res.stderr[-1500:]}")
    out.expect("PASS ray_tracing" in res.stdout, f"the scenario did not pass:\n{res.stdout}")
    seen = []
    for _, _, w, _ in capture.submitted():
        if w["type"] == "trace_rays":
            size: Any = [w.get("width"), w.get("height"), w.get("depth")]
        elif w["type"] in ("buffer_transfer", "acceleration_structure"):
            size = [w.get("kind"), w.get("bytes", w.get("count"))]
        else:
            size = None
        seen.append([w["type"], w["api"], size])
    a = timing_analysis(capture, "queue")
    out.data |= {"workloads": seen, "timing": a}
    out.expect(seen == RAY_FRAME * 2, f"workloads sent: {seen}")
    out.expect(set(a["status"]) == {"ok / queue"}, f"not every instance timed: {a['status']}")
    out.expect(a["outside_cpu_window"] == 0, f"{a['outside_cpu_window']} outside the CPU window")
    v = ctx.validation(["--scenario", "ray_tracing", "--frames", "2"], timing="queue")
    out.data["validation"] = v
    out.expect(v["rc"] == 0 and v["messages"] == 0, f"validation: {v}")


def check_accuracy(ctx: Context, out: Outcome) -> None:
    """The three ratio dispatches timed by vkscope (`queue`) against the same dispatches timed
    alone by the application's own timestamps, over a sweep of dispatch lengths; the first two
    frames (warm-up, clocks ramping) left out of both."""
    calibration = calibrate(ctx)
    frames = 8 if ctx.quick else 20
    targets = QUICK_ACCURACY_TARGETS_US if ctx.quick else ACCURACY_TARGETS_US
    out.data |= {"calibration_ns_per_iteration": calibration, "frames": frames - 2, "sweep": []}
    for target in targets:
        iterations = iterations_for(calibration, target)
        app = app_timings(ctx, iterations, frames)[2:]
        args = ["--scenario", "compute", "--frames", str(frames)]
        res, capture = ctx.capture([*args, "--compute-iterations", str(iterations)], timing="queue")
        out.expect(res.returncode == 0, f"{iterations} iterations: exit {res.returncode}")
        ours: dict[int, list[float]] = defaultdict(list)
        for _, _, f, _ in capture.submitted():
            groups = f.get("groups") or [0, 0, 0]
            ratio = groups[0] in RATIO_GROUPS and groups[1:] == [1, 1]
            if f["api"] == "vkCmdDispatch" and ratio and f["timing"] == "ok":
                ours[groups[0]].append((f["gpu_end_ns"] - f["gpu_begin_ns"]) / 1e6)
        point = {
            "target_us": target,
            "iterations": iterations,
            "app_alone_ms": [[r[i] for r in app] for i in range(3)],
            "vkscope_queue_ms": [ours[g][2:] for g in RATIO_GROUPS],
        }
        out.expect(all(point["vkscope_queue_ms"]), f"{iterations} iterations: a dispatch untimed")
        out.expect(all(point["app_alone_ms"]), f"{iterations} iterations: no app timestamps")
        out.data["sweep"].append(point)
        print(f"  accuracy {iterations} iterations done", flush=True)


FRAME_CONFIGS: dict[str, dict[str, str]] = {
    "no layer": {},
    "timeline": {"timeline": "true"},
    "timing none": {"timing": "none"},
    "timing queue": {"timing": "queue"},
    "timing full": {"timing": "full"},
    "timing queue, frame not captured": {"timing": "queue", "frames": "1000000-"},
}


def frame_times(
    ctx: Context, args: Sequence[str], short: int, long: int, runs: int
) -> dict[str, list[float]]:
    """ms per frame: the difference between a long and a short run over the frames in between,
    so process start-up and device creation cancel out; the configurations interleaved, so a
    change in the machine's load hits every one alike."""
    samples: dict[str, list[float]] = {k: [] for k in FRAME_CONFIGS}
    for _ in range(runs):
        for key, settings in FRAME_CONFIGS.items():
            env = ctx.env(**settings) if settings else ctx.bare_env()
            t_long = ctx.wall_s([*args, "--frames", str(long), "--quiet"], env)
            t_short = ctx.wall_s([*args, "--frames", str(short), "--quiet"], env)
            samples[key].append((t_long - t_short) / (long - short) * 1e3)
    return samples


def check_frame_time(ctx: Context, out: Outcome) -> None:
    """Frame time per mode: of `--all` (many tiny submissions, each waited for) and of
    GPU-bound frames (the compute scenario with dispatches of about 1.4 ms)."""
    runs = 2 if ctx.quick else 5
    out.data["runs"] = runs
    short, long = (2, 6) if ctx.quick else (2, 42)
    out.data["all"] = {"short": short, "long": long,
                       "samples_ms": frame_times(ctx, ["--all"], short, long, runs)}  # fmt: skip
    print("  frame time --all done", flush=True)
    iterations = iterations_for(calibrate(ctx), HEAVY_DISPATCH_US)
    short, long = (2, 8) if ctx.quick else (2, 202)
    args = ["--scenario", "compute", "--compute-iterations", str(iterations)]
    out.data["gpu_bound"] = {"iterations": iterations, "short": short, "long": long,
                             "samples_ms": frame_times(ctx, args, short, long, runs)}  # fmt: skip


def check_frame_cost(ctx: Context, out: Outcome) -> None:
    """bench/frame_cost.py's measurement of short frames with the workload program (there is no
    window system here for vkcube): what each configuration, `vkscope run` included, adds to a
    frame of the small_frame scenario, as the program times its frames after a warm-up."""
    runs, verdict_runs, warmup, timed = (2, 2, 50, 200) if ctx.quick else (5, 30, 200, 10_000)
    tools = frame_cost.Tools(ctx.layer, ctx.workload)
    app = frame_cost.small_frame_app(tools, ctx.bare_env())
    wall, cpu = frame_cost.measure(tools, [app], runs, warmup, warmup + timed,
                      progress=frame_cost.printer("  frame cost"))  # fmt: skip
    # The targets' configurations alone, for verdicts on more rounds (frame_cost --verdict-runs).
    targets = frame_cost.VERDICT_CONFIGS
    more, _ = frame_cost.measure(tools, [app], verdict_runs, warmup, warmup + timed, targets,
                                 progress=frame_cost.printer("  verdict"))  # fmt: skip
    out.data |= {"short": warmup, "long": warmup + timed, "frame_end": app.frame_end,
                 "times_itself": True, "samples_ms": wall[app.key]["shared"],
                 "cpu_ms": cpu[app.key]["shared"],
                 "verdict_ms": more[app.key]["shared"]}  # fmt: skip


def check_record_cost(ctx: Context, out: Outcome) -> None:
    """bench/record_cost.py's measurement with the installed package's harness and layers."""
    runs, calls = (1, 200_000) if ctx.quick else (9, 2_000_000)
    paths = Paths.from_package()
    points, last = measure(paths, (*CONFIGS, IDLE_CONFIG), runs, calls, 10_000)
    out.data |= {
        "settings": {"runs": runs, "calls": calls, "batch": 10_000},
        "harness_device": {"device": last.device, "driver": last.driver,
                           "driver_info": last.driver_info},
        "results": entries(points),
    }  # fmt: skip


def check_pytest(ctx: Context, out: Outcome) -> None:
    """The GPU tests of the suite on this device: what skips must be what the driver lacks."""
    files = QUICK_GPU_TESTS if ctx.quick else GPU_TESTS
    with tempfile.TemporaryDirectory(prefix="vkscope-pytest-") as tmp:
        junit = Path(tmp) / "junit.xml"
        res = run_pytest(files, junit)
        cases = ET.parse(junit).getroot().iter("testcase") if junit.exists() else iter(())
        results: dict[str, list[str]] = {"passed": [], "failed": [], "skipped": []}
        for case in cases:
            name = f"{case.get('classname')}::{case.get('name')}"
            failure, error = case.find("failure"), case.find("error")
            problem = failure if failure is not None else error
            skipped = case.find("skipped")
            if problem is not None:
                results["failed"].append(f"{name}: {(problem.get('message') or '')[:300]}")
            elif skipped is not None:
                results["skipped"].append(f"{name}: {skipped.get('message')}")
            else:
                results["passed"].append(name)
    out.data |= {"files": list(files), "rc": res.returncode,
                 "left_out": "tests marked window_system (no X server on the device)",
                 "counts": {k: len(v) for k, v in results.items()},
                 "failed": results["failed"], "skipped": results["skipped"]}  # fmt: skip
    out.expect(res.returncode == 0, f"pytest exited {res.returncode}:\n{res.stdout[-3000:]}")
    out.expect(bool(results["passed"]), "no test ran")
    for skip in results["skipped"]:
        out.expect("the driver lacks" in skip, f"a skip not explained by the driver: {skip}")


def run_pytest(files: Sequence[str], junit: Path) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, PYTHONDONTWRITEBYTECODE="1")
    # The device has no window system, so tests that present to a window are left out there.
    cmd = [sys.executable, "-m", "pytest", "-q", "-m", "vulkan and not window_system",
           "-p", "no:cacheprovider",
           f"--junitxml={junit}", "-o", "junit_family=xunit1", *files]  # fmt: skip
    return subprocess.run(cmd, cwd=REPO, env=env, capture_output=True, text=True, timeout=3000)


@dataclass(frozen=True)
class Check:
    name: str
    needs: tuple[str, ...]  # driver features (harness/driver.py), probed without the layer
    run: Callable[[Context, Outcome], None]


CHECKS = (
    Check("driver", (), check_driver),
    Check("scenarios", (), check_scenarios),
    Check("counters", ("pipeline_statistics_query",), check_counters),
    Check("handover", ("timeline_semaphore",), check_handover),
    Check("two_queue_chain", ("second_queue", "timeline_semaphore"), check_two_queue_chain),
    Check("ray_tracing", ("ray_tracing",), check_ray_tracing),
    Check("floor", (), floor_check.check_floor),
    Check("accuracy", (), check_accuracy),
    Check("frame_time", (), check_frame_time),
    Check("frame_cost", (), check_frame_cost),
    Check("workload_cost", (), workload_check.check_workload_cost),
    Check("budget", (), budget_check.check_budget),
    Check("record_cost", (), check_record_cost),
    Check("gpu_state", ("pci_bus_info", "nvml"), check_gpu_state),
    Check("pytest", (), check_pytest),
)


# -- running them --------------------------------------------------------------------------------


def source_of_bundle() -> dict[str, Any] | None:
    """The commit the carried bundle was built from (bench/device/prepare.sh writes it): the
    device's copy of the tree has no git history to ask."""
    path = REPO / ".device" / "source.json"
    if "VKSCOPE_DEVICE_BUNDLE" in os.environ and path.exists():
        found: dict[str, Any] = json.loads(path.read_text())
        return found
    return None


def run_checks(names: Sequence[str], quick: bool, out_file: Path, rounds: int | None = None) -> int:
    from vkscope import paths

    driver = probe()
    ctx = Context(paths.layer_dir(), paths.workload_program(), driver, quick, rounds)
    settings: dict[str, Any] = {"quick": quick, "checks": list(names)}
    if rounds:
        settings["rounds"] = rounds
    results = new(NAME, settings, vulkan=True)
    if bundle := source_of_bundle():
        results |= bundle
    results["checks"] = {}
    failed = []
    for check in (c for c in CHECKS if c.name in names):
        print(f"== {check.name}", flush=True)
        lacking = {f: why for f in check.needs if (why := driver.lacks(f))}
        if lacking:
            part: dict[str, Any] = {"status": "not available", "probe": lacking}
        else:
            part = run_check(check.run, ctx)
        results["checks"][check.name] = part
        write(results, out_file)  # what is done so far survives a later check's timeout
        if part["status"] == "failed":
            failed.append(check.name)
            print(f"FAILED {check.name}:", *part["failures"], sep="\n  ", flush=True)
        else:
            print(f"{part['status']} {check.name}", flush=True)
    print(f"wrote {out_file}")
    if failed:
        print(f"FAILED: {', '.join(failed)}", flush=True)
    return 1 if failed else 0


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("checks", nargs="*", help="checks to run (default: all)")
    parser.add_argument("--quick", action="store_true", help="short runs, to prove the script")
    parser.add_argument("--out", type=Path, default=Path(os.environ.get("OUT", "out")))
    parser.add_argument("--list", action="store_true", help="list the checks")
    parser.add_argument(
        "--rounds",
        type=int,
        help="checks of interleaved rounds run this many (a part of the check: --merge joins "
        "the parts given to it)",
    )
    parser.add_argument("--merge", type=Path, nargs="+", metavar="FILE")
    parser.add_argument(
        "--over",
        action="store_true",
        help="with --merge: runs of a later commit replace their checks in the results of "
        "another, each check saying the commit it ran at",
    )
    args = parser.parse_args(argv)
    if args.list:
        for c in CHECKS:
            print(c.name + (f" (needs {', '.join(c.needs)})" if c.needs else ""))
        return 0
    if args.merge:
        return merge(args.merge, [c.name for c in CHECKS], over=args.over)
    unknown = set(args.checks) - {c.name for c in CHECKS}
    if unknown:
        parser.error(f"unknown checks: {', '.join(sorted(unknown))}")
    if args.rounds is not None and args.rounds < 1:
        parser.error("--rounds must be positive")
    args.out.mkdir(parents=True, exist_ok=True)
    return run_checks(
        args.checks or [c.name for c in CHECKS], args.quick, args.out / "device.json", args.rounds
    )


if __name__ == "__main__":
    sys.exit(main())
