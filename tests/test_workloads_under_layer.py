"""Every workload scenario verifies its own results with the layer loaded, alone or stacked."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from harness.driver import verdicts
from harness.env import layer_env, run

pytestmark = pytest.mark.vulkan


@pytest.mark.parametrize("passthrough", ["direct", "wrapped"])
def test_every_scenario_passes_under_the_layer(
    layer_dir: Path, workload: Path, tmp_path: Path, passthrough: str
) -> None:
    log = tmp_path / "layer.log"
    env = layer_env(layer_dir, passthrough=passthrough, log_level="info", log_file=str(log))
    res = run([workload, "--all", "--frames", "2"], env)
    assert res.returncode == 0, res.stdout + res.stderr
    assert "VK_LAYER_VKSCOPE_profiler loaded" in log.read_text()
    # Skipped only where the driver, probed without vkscope, lacks what the scenario needs.
    verdicts(res.stdout, run([workload, "--list"], env).stdout.split())


@pytest.mark.parametrize("order", ["above", "below"])
def test_stacked_with_validation_gives_no_message(
    layer_dir: Path, workload: Path, tmp_path: Path, order: str
) -> None:
    # Both layers come from the application's layer list, whose order the loader keeps.
    log = tmp_path / "layer.log"
    env = layer_env(layer_dir, enable=False, log_level="info", log_file=str(log))
    res = run([workload, "--all", "--validation", order], env)
    assert res.returncode == 0, res.stdout + res.stderr
    assert "validation messages: 0" in res.stdout + res.stderr
    assert "VK_LAYER_VKSCOPE_profiler loaded" in log.read_text()


def test_twenty_instance_and_device_cycles(layer_dir: Path, workload: Path) -> None:
    cmd = [workload, "--cycles", "20", "--scenario", "buffer_transfer", "--scenario", "compute"]
    res = run(cmd, layer_env(layer_dir, passthrough="wrapped"))
    assert res.returncode == 0, res.stderr
    assert res.stdout.count("PASS compute") == 20


def test_two_threads_recording_at_once(layer_dir: Path, workload: Path) -> None:
    res = run([workload, "--threads", "2", "--scenario", "threads"], layer_env(layer_dir))
    assert res.returncode == 0, res.stderr
    assert "PASS threads" in res.stdout


def test_compute_loop_length_is_an_option(layer_dir: Path, workload: Path) -> None:
    # The scenario checks every element against the closed form of that many iterations, so a
    # pass means the shader ran the loop length asked for (it is how dispatches are made long
    # enough for accuracy runs on large GPUs).
    env = layer_env(layer_dir)
    res = run([workload, "--scenario", "compute", "--compute-iterations", "777"], env)
    assert res.returncode == 0, res.stdout + res.stderr
    assert "PASS compute" in res.stdout
    bad = run([workload, "--scenario", "compute", "--compute-iterations", "0"], env)
    assert bad.returncode == 2
    assert "--compute-iterations expects an integer in [1, 16777216], got '0'" in bad.stderr


def test_frames_after_a_warm_up_time_themselves(layer_dir: Path, workload: Path) -> None:
    # bench/frame_cost.py reads this line: the mean of the frames after the warm-up alone.
    env = layer_env(layer_dir)
    cmd = [workload, "--scenario", "small_frame", "--quiet", "--frames", "30"]
    res = run([*cmd, "--time-frames", "10"], env)
    assert res.returncode == 0, res.stdout + res.stderr
    line = r"frame time: ([0-9.]+) ms per frame, CPU ([0-9.]+) ms per frame over 20 frames\n"
    match = re.fullmatch(line, res.stdout)
    assert match is not None, res.stdout
    assert float(match.group(1)) > 0
    assert float(match.group(2)) > 0  # lavapipe renders on the CPU
    bad = run([*cmd, "--time-frames", "30"], env)
    assert bad.returncode == 2
    assert "--time-frames 30 leaves no frame to time: it must be below --frames (30)" in bad.stderr
