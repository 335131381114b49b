"""The skip rule: a test or scenario may skip only where the driver, probed without vkscope, lacks
what it needs (harness/driver.py). On lavapipe that is exactly ray tracing and a second
queue, so exactly `ray_tracing` and `multi_queue` skip; anything else skipping is a failure."""

from __future__ import annotations

from pathlib import Path

import pytest

from harness.driver import (
    FEATURES,
    LAVAPIPE_LACKS,
    LAVAPIPE_SKIPS,
    SCENARIO_NEEDS,
    Driver,
    driver,
    probe,
    verdicts,
)
from harness.env import base_env, layer_env, run

ALL = sorted(SCENARIO_NEEDS)


def probed(*lacking: str) -> Driver:
    return Driver(
        device="Test GPU",
        driver_name="test",
        driver_info="1.0",
        api_version="1.3",
        queue_families=[],
        cpu_device=False,
        have={f: f not in lacking for f in FEATURES},
        why={f: f"no {f}" for f in lacking},
    )


def test_a_scenario_passes_unless_the_driver_lacks_what_it_needs() -> None:
    out = "PASS compute\nSKIP multi_queue: needs a second queue\n"
    assert verdicts(out, ["compute", "multi_queue"], probed("second_queue")) == {
        "multi_queue": "no second_queue"
    }
    # The scenario skipped, but the driver has everything it needs: a regression, not a skip.
    with pytest.raises(AssertionError, match="multi_queue: the driver has all it needs"):
        verdicts(out, ["compute", "multi_queue"], probed())
    # The driver lacks ray tracing, yet the scenario claims to have passed.
    with pytest.raises(AssertionError, match="ray_tracing: the driver lacks no ray_tracing"):
        verdicts("PASS ray_tracing\n", ["ray_tracing"], probed("ray_tracing"))
    # No verdict at all (a crash before it) is a failure too.
    with pytest.raises(AssertionError, match=r"compute: .* no verdict"):
        verdicts("", ["compute"], probed())


@pytest.mark.vulkan
def test_on_lavapipe_exactly_the_second_queue_and_ray_tracing_are_missing() -> None:
    d = driver()
    lacks = {f for f in FEATURES if d.lacks(f)}
    assert set(d.why) == lacks, "every missing feature says what the probe saw"
    if d.lavapipe:
        assert lacks == LAVAPIPE_LACKS, d.as_json()
        assert set(d.expected_skips(ALL)) == LAVAPIPE_SKIPS


@pytest.mark.vulkan
@pytest.mark.parametrize("under", ["no layer", "timing full"])
def test_the_workload_skips_exactly_what_the_driver_lacks(
    layer_dir: Path, workload: Path, under: str
) -> None:
    env = base_env() if under == "no layer" else layer_env(layer_dir, timing="full")
    listed = run([workload, "--list"], env).stdout.split()
    assert set(listed) == set(ALL), "a new scenario: say in SCENARIO_NEEDS what it needs"
    res = run([workload, "--all", "--frames", "1"], env)
    assert res.returncode == 0, res.stdout + res.stderr
    skipped = verdicts(res.stdout, listed)
    if driver().lavapipe:
        assert set(skipped) == LAVAPIPE_SKIPS, res.stdout


@pytest.mark.vulkan
def test_the_probe_never_loads_a_layer(layer_dir: Path, tmp_path: Path) -> None:
    # Asked from an environment that enables vkscope, the probe still sees the bare driver.
    log = tmp_path / "layer.log"
    environ = layer_env(layer_dir, log_level="info", log_file=str(log))
    assert probe(environ) == driver()
    assert not log.exists(), "the layer was loaded into the probe"
