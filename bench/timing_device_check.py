#!/usr/bin/env python3
"""Timing on a real device with several queues (the H200, through the device tool; see
docs/bench-timing.md): every mode on every scenario, `full` with wait-before-signal across two
queues, accuracy against the application's own timestamps, frame time, validation below vkscope.

Usage: timing_device_check.py BUNDLE, where BUNDLE holds layer/ (libVkLayer_vkscope.so and its
manifest) and vkscope-workload; VALIDATION_LAYER_DIR names the validation layer's manifest folder.
Writes $OUT/h200_timing.json (bench/results/timing_cost_h200.json is one).
"""

from __future__ import annotations

import json
import os
import re
import statistics
import subprocess
import sys
import time
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))
from support.protocol import DEFINITION
from support.timeline import DEVICE, GOODBYE, SUBMIT_DONE, Capture, Receiver

MODES = tuple(DEFINITION["enums"]["serialization"]["values"])  # the timing setting's, off aside
RATIO_GROUPS = ([16, 1, 1], [64, 1, 1], [256, 1, 1])


class Bundle:
    def __init__(self, root: Path) -> None:
        self.root = root
        self.workload = str(root / "vkscope-workload")

    def env(self, layer: bool = True, **settings: str) -> dict[str, str]:
        e = {k: v for k, v in os.environ.items() if not k.startswith("VK_VKSCOPE_")}
        e["VK_ADD_LAYER_PATH"] = (
            f"{self.root / 'layer'}:{os.environ.get('VALIDATION_LAYER_DIR', '')}"
        )
        e.pop("VK_INSTANCE_LAYERS", None)
        if layer:
            e["VK_INSTANCE_LAYERS"] = "VK_LAYER_VKSCOPE_profiler"
        for k, v in settings.items():
            e["VK_VKSCOPE_" + k.upper()] = v
        return e

    def capture(
        self, args: list[str], timeout: float = 300, **settings: str
    ) -> tuple[object, str, str, Capture]:
        receiver = Receiver()
        try:
            p = subprocess.run(
                [self.workload, *args],
                env=self.env(host=receiver.address, **settings),
                capture_output=True,
                text=True,
                timeout=timeout,
            )
            rc: object = p.returncode
            out, err = p.stdout, p.stderr
        except subprocess.TimeoutExpired:
            rc, out, err = "timeout", "", ""
        capture = receiver.finish(timeout=5, strict=False)
        receiver.close()
        return rc, out, err, capture


def analyse(c: Capture) -> dict[str, Any]:
    """Timing statuses, and times outside their submission's CPU window or out of queue order."""
    done = {m.sequence: m.payload["cpu_ns"] for m in c.of(SUBMIT_DONE)}
    device = c.of(DEVICE)[0].payload
    slack = (device.get("clock") or {}).get("max_deviation_ns") or 0
    status: Counter[str] = Counter()
    outside, disordered = 0, 0
    last: dict[int, int] = {}
    for s, _, f, _ in c.submitted():
        status[str((f.get("timing"), f.get("timing_reason"), f.get("serialization")))] += 1
        if f.get("timing") != "ok":
            continue
        begin, end = f["gpu_begin_ns"], f["gpu_end_ns"]
        if not s.payload["cpu_ns"] - slack <= begin <= end <= done.get(s.sequence, 0) + slack:
            outside += 1
        queue = s.payload["queue"]
        if queue in last and f["serialization"] != "none" and last[queue] > begin:
            disordered += 1
        last[queue] = end
    return {
        "instances": sum(status.values()),
        "status": dict(status),
        "outside_window": outside,
        "out_of_order": disordered,
        "clock": device.get("clock"),
        "queues": device["queues"],
        "goodbye": [m.payload for m in c.of(GOODBYE)],
    }


def app_timings(text: str) -> list[list[float]]:
    rows = re.findall(r"16 groups ([\d.]+) ms, 64 groups ([\d.]+) ms, 256 groups ([\d.]+) ms", text)
    return [[float(x) for x in r] for r in rows]


# Loop lengths of the compute scenario's ratio dispatches: on the H200 a dispatch takes about
# 3.4 ns per iteration whatever its size (every invocation runs at once), so these give about
# 0.011 (the default), 0.09, 0.11, 0.35 and 1.4 ms.
ACCURACY_ITERATIONS = (2_560, 25_600, 32_768, 102_400, 409_600)
HEAVY_ITERATIONS = 409_600


def wall_s(bundle: Bundle, args: list[str], env: dict[str, str]) -> float:
    """Wall-clock seconds of one vkscope-workload process."""
    start = time.perf_counter()
    subprocess.run([bundle.workload, *args], env=env, capture_output=True)
    return time.perf_counter() - start


def all_frames(bundle: Bundle, env: dict[str, str], frames: int) -> float:
    return wall_s(bundle, ["--all", "--frames", str(frames), "--quiet"], env)


def ratio_times(c: Capture) -> dict[int, list[float]]:
    """vkscope's times of the three ratio dispatches, ms, by group count."""
    ours: dict[int, list[float]] = defaultdict(list)
    for _, _, f, _ in c.submitted():
        if f["api"] == "vkCmdDispatch" and f.get("groups") in RATIO_GROUPS and f["timing"] == "ok":
            ours[f["groups"][0]].append((f["gpu_end_ns"] - f["gpu_begin_ns"]) / 1e6)
    return ours


def accuracy(bundle: Bundle, iterations: int, frames: int = 20) -> dict[str, Any]:
    """The three ratio dispatches timed by vkscope (`queue`) against the same dispatches timed
    alone: the application's own timestamps around each, without the layer. The first two frames
    (pipeline warm-up, clocks ramping) are left out of both."""
    args = ["--scenario", "compute", "--frames", str(frames)]
    args += ["--compute-iterations", str(iterations)]
    alone = subprocess.run(
        [bundle.workload, *args],
        env={**bundle.env(layer=False), "VKSCOPE_WORKLOAD_TIMINGS": "1"},
        capture_output=True,
        text=True,
        timeout=300,
    )
    app = app_timings(alone.stderr)[2:]
    _, _, _, c = bundle.capture(args, timing="queue")
    ours = ratio_times(c)
    app_ms = [statistics.median(r[i] for r in app) for i in range(3)]
    ours_ms = [statistics.median(ours[g][2:]) for g in (16, 64, 256)]
    result = {
        "iterations": iterations,
        "frames": frames - 2,
        "app_alone_median_ms": app_ms,
        "vkscope_queue_median_ms": ours_ms,
        "vkscope_queue_spread_ms": [[min(ours[g][2:]), max(ours[g][2:])] for g in (16, 64, 256)],
        "error_percent": [(o - a) / a * 100 for o, a in zip(ours_ms, app_ms, strict=True)],
    }
    print("accuracy", result, flush=True)
    return result


def heavy_frames(bundle: Bundle, configs: dict[str, dict[str, str]]) -> dict[str, Any]:
    """Frame time of the compute scenario with long dispatches: GPU-bound frames, so the
    difference between configurations is what the layer adds to the GPU's work."""
    args = ["--scenario", "compute", "--compute-iterations", str(HEAVY_ITERATIONS), "--quiet"]

    samples: dict[str, list[float]] = {k: [] for k in configs}
    for _ in range(5):  # interleaved, so a change in load hits every configuration alike
        for key, env in configs.items():
            # 200 frames (about 1.5 s) against 2: what varies from process to process (device
            # set-up, first pipeline use) cancels out and is spread over many frames.
            long, short = (wall_s(bundle, [*args, "--frames", str(n)], env) for n in (202, 2))
            samples[key].append((long - short) / 200 * 1e3)
    return {
        "iterations": HEAVY_ITERATIONS,
        "median_ms": {k: statistics.median(v) for k, v in samples.items()},
        "samples_ms": samples,
    }


def main() -> None:
    bundle = Bundle(Path(sys.argv[1]).resolve() if len(sys.argv) > 1 else Path.cwd())
    out_dir = Path(os.environ.get("OUT", "/tmp"))
    summary: dict[str, Any] = {}

    for mode in MODES:
        rc, out, _, c = bundle.capture(["--all", "--frames", "3"], timing=mode)
        a = analyse(c)
        a["rc"] = rc
        a["verdicts"] = [line for line in out.splitlines() if line[:4] in ("PASS", "SKIP", "FAIL")]
        summary[f"all_{mode}"] = a
        print(mode, json.dumps(a), flush=True)

    rc, _, _, c = bundle.capture(
        ["--scenario", "multi_queue", "--frames", "50"], timeout=120, timing="full"
    )
    a = analyse(c)
    per_queue: dict[int, Counter[str]] = defaultdict(Counter)
    for s, _, f, _ in c.submitted():
        per_queue[s.payload["queue"]][str((f["serialization"], f.get("timing_reason")))] += 1
    a["rc"] = rc
    a["per_queue"] = {str(q): dict(v) for q, v in per_queue.items()}
    summary["multi_queue_full"] = a
    print("multi_queue", json.dumps(a), flush=True)

    summary["accuracy"] = [accuracy(bundle, n) for n in ACCURACY_ITERATIONS]

    configs = {
        "no_layer": bundle.env(layer=False),
        "timeline": bundle.env(timeline="true"),
        "none": bundle.env(timing="none"),
        "queue": bundle.env(timing="queue"),
        "full": bundle.env(timing="full"),
        "queue_idle": bundle.env(timing="queue", frames="1000000-"),
    }
    summary["frame_ms"] = {
        key: statistics.median(
            (all_frames(bundle, e, 42) - all_frames(bundle, e, 2)) / 40 * 1e3 for _ in range(5)
        )
        for key, e in configs.items()
    }
    print("frame ms", summary["frame_ms"], flush=True)
    summary["heavy_frame"] = heavy_frames(bundle, configs)
    print("heavy frame", summary["heavy_frame"], flush=True)

    validation = {}
    for mode in MODES:
        p = subprocess.run(
            [bundle.workload, "--all", "--frames", "2", "--validation", "above"],
            env=bundle.env(layer=False, timing=mode),
            capture_output=True,
            text=True,
            timeout=300,
        )
        text = p.stdout + p.stderr
        counts = re.findall(r"validation messages: (\d+)", text)
        validation[mode] = {"rc": p.returncode, "messages": counts, "tail": text[-800:]}
    summary["validation"] = validation
    print("validation", {m: (v["rc"], v["messages"]) for m, v in validation.items()}, flush=True)
    (out_dir / "h200_timing.json").write_text(json.dumps(summary, indent=1, default=str))


if __name__ == "__main__":
    main()
