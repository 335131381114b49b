"""Runs of the workload program and of the recording harness that several benchmarks share:
frame time per configuration (the difference between two frame counts over the frames in
between, so that process start-up cancels out; configurations interleaved), workload instances
per frame, and ns per recorded call."""

from __future__ import annotations

import os
import subprocess
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from bench.record_configs import VKSCOPE_LAYER, Config
from bench.record_cost import Paths, run_once
from harness.timeline import Receiver


@dataclass(frozen=True)
class FrameConfig:
    key: str
    title: str
    env: Mapping[str, str] = field(default_factory=dict)
    layer: bool = True


def workload_env(build_dir: Path, config: FrameConfig) -> dict[str, str]:
    """The environment of one configuration: the build's layer and its settings, nothing else
    that configures layers, and lavapipe's rasterizer on the application's thread."""
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith("VK_VKSCOPE_") and k not in ("VK_INSTANCE_LAYERS", "VK_ADD_LAYER_PATH")
    }
    env["LP_NUM_THREADS"] = "0"
    if config.layer:
        env["VK_ADD_LAYER_PATH"] = str(build_dir / "layer")
        env["VK_INSTANCE_LAYERS"] = VKSCOPE_LAYER
        env.update(config.env)
    return env


def run_program(program: Path, args: Sequence[str], env: Mapping[str, str], frames: int) -> float:
    """Wall-clock seconds of one run of the workload program."""
    start = time.perf_counter()
    proc = subprocess.run(
        [str(program), *args, "--frames", str(frames), "--quiet"],
        env=dict(env),
        capture_output=True,
        text=True,
        timeout=600,
    )
    elapsed = time.perf_counter() - start
    if proc.returncode != 0:
        raise SystemExit(f"vkscope-workload failed ({proc.returncode}):\n{proc.stderr}")
    return elapsed


def instances_per_frame(
    program: Path, build_dir: Path, args: Sequence[str], timeline: FrameConfig
) -> float:
    """Workload instances one frame of the program submits (from a capture with `timeline`)."""
    receiver = Receiver()
    try:
        env = workload_env(build_dir, timeline)
        env["VK_VKSCOPE_HOST"] = receiver.address
        frames = 4
        subprocess.run(
            [str(program), *args, "--frames", str(frames), "--quiet"],
            env=env,
            capture_output=True,
            check=True,
            timeout=600,
        )
        capture = receiver.finish()
    finally:
        receiver.close()
    return sum(1 for _ in capture.submitted()) / frames


def measure_frames(
    program: Path,
    build_dir: Path,
    args: Sequence[str],
    configs: Sequence[FrameConfig],
    runs: int,
    short: int,
    long: int,
) -> dict[str, list[float]]:
    """ms per frame, every run, by configuration (interleaved, so that a change in the machine's
    load hits every configuration alike)."""
    out: dict[str, list[float]] = {c.key: [] for c in configs}
    for _ in range(runs):
        for c in configs:
            env = workload_env(build_dir, c)
            t_short = run_program(program, args, env, short)
            t_long = run_program(program, args, env, long)
            out[c.key].append((t_long - t_short) / (long - short) * 1e3)
    return out


def measure_recording(
    paths: Paths, configs: Sequence[Config], runs: int, calls: int, batch: int
) -> dict[str, dict[str, list[float]]]:
    """ns per call, every run, by command and configuration (interleaved)."""
    out: dict[str, dict[str, list[float]]] = {}
    for command in ("draw", "dispatch"):
        samples: dict[str, list[float]] = {c.key: [] for c in configs}
        for _ in range(runs):
            for config in configs:
                samples[config.key].append(
                    run_once(paths, config, command, 1, calls, batch).ns_per_call
                )
        out[command] = samples
    return out
