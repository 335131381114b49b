"""The timeline never costs the application its results, its validity or its exit status: every
scenario verifies under it, the Khronos validation layer finds nothing in what the layer adds
(above or below vkscope), and a host that is absent or dies mid-run changes nothing for the
application.
"""

from __future__ import annotations

import subprocess
import time
from pathlib import Path

import pytest

from harness.driver import verdicts
from harness.env import layer_env, run
from harness.timeline import GOODBYE, HELLO, SUBMIT, WORKLOAD, Receiver

pytestmark = pytest.mark.vulkan


def test_every_scenario_passes_with_the_timeline(layer_dir: Path, workload: Path) -> None:
    receiver = Receiver()
    try:
        env = layer_env(layer_dir, timeline="true", host=receiver.address)
        res = run([workload, "--all", "--frames", "3"], env)
        capture = receiver.finish()
    finally:
        receiver.close()
    assert res.returncode == 0, res.stdout + res.stderr
    # Skipped only where the driver, probed without vkscope, lacks what the scenario needs.
    verdicts(res.stdout, run([workload, "--list"], env).stdout.split())
    assert capture.of(SUBMIT)
    assert capture.messages[-1].type == GOODBYE
    assert capture.messages[-1].payload == {"dropped": 0}


@pytest.mark.parametrize("order", ["above", "below"])
def test_validation_finds_nothing_in_what_the_layer_adds(
    layer_dir: Path, workload: Path, order: str
) -> None:
    receiver = Receiver()
    try:
        # Both layers from the application's list, which keeps their order.
        env = layer_env(layer_dir, enable=False, timeline="true", host=receiver.address)
        res = run([workload, "--all", "--frames", "2", "--validation", order], env)
        capture = receiver.finish()
    finally:
        receiver.close()
    assert res.returncode == 0, res.stdout + res.stderr
    assert "validation messages: 0" in res.stdout
    assert capture.of(SUBMIT), "the timeline was on"


def test_without_a_host_the_workloads_still_pass(layer_dir: Path, workload: Path) -> None:
    env = layer_env(layer_dir, timeline="true")
    res = run([workload, "--all"], env)
    assert res.returncode == 0, res.stdout + res.stderr


def test_unreachable_host_changes_nothing(layer_dir: Path, workload: Path) -> None:
    env = layer_env(layer_dir, timeline="true", host="unix:/nonexistent/vkscope.sock")
    res = run([workload, "--all"], env)
    assert res.returncode == 0, res.stdout + res.stderr


def test_timeline_off_sends_nothing(layer_dir: Path, workload: Path) -> None:
    receiver = Receiver()
    try:
        env = layer_env(layer_dir, timeline="false", host=receiver.address)
        res = run([workload, "--scenario", "compute"], env)
        capture = receiver.finish()
    finally:
        receiver.close()
    assert res.returncode == 0, res.stderr
    assert capture.connections == []


def test_host_killed_mid_run(layer_dir: Path, workload: Path) -> None:
    receiver = Receiver()
    env = layer_env(layer_dir, timeline="true", host=receiver.address)
    app = subprocess.Popen(
        [str(workload), "--all", "--frames", "150", "--quiet"],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        deadline = time.monotonic() + 60
        while receiver.received() < 4096 and app.poll() is None:
            assert time.monotonic() < deadline, "nothing received"
            time.sleep(0.01)
        assert app.poll() is None, "the run was too short to kill the host in the middle of it"
        receiver.kill()
        out, err = app.communicate(timeout=300)
    finally:
        if app.poll() is None:
            app.kill()
        receiver.close()
    assert app.returncode == 0, out + err
    capture = receiver.finish(strict=False)
    assert capture.connections[0][0].type == HELLO


def test_twenty_cycles_and_two_recording_threads(layer_dir: Path, workload: Path) -> None:
    receiver = Receiver()
    try:
        env = layer_env(layer_dir, timeline="true", host=receiver.address)
        cmd = [workload, "--cycles", "20", "--scenario", "threads", "--scenario", "compute"]
        res = run([*cmd, "--threads", "2"], env)
        capture = receiver.finish()
    finally:
        receiver.close()
    assert res.returncode == 0, res.stderr
    assert res.stdout.count("PASS threads") == 20
    assert len(capture.connections) == 20
    tags = [m.tag for m in capture.of(WORKLOAD)]
    assert len(tags) == len(set(tags)) == 20 * (8 + 7)
