"""The test fixture VK_LAYER_VKSCOPE_test_performance_query (layer/testing/performance_query):
VK_KHR_performance_query on lavapipe as an application observes it, through the real loader:
the extension and its feature, counters per queue family with units, scopes and storage, one
pass per counter, the profiling lock, results only once every pass has been submitted, and
values from the driver's own queries."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from support.performance_query import fixture_env

from harness.env import run
from vkscope.counters.performance_query_probe import probe_khr

pytestmark = pytest.mark.vulkan

COUNTERS = ["ia_vertices", "ia_primitives", "fragment_invocations", "compute_invocations",
            "elapsed_ns", "render_pass_fragments", "command_buffer_invocations"]  # fmt: skip
APP = Path(__file__).parent / "support" / "performance_query_app.py"


def test_the_driver_alone_has_no_performance_query() -> None:
    # Checked without the fixture: the reason the fixture exists.
    assert not any(d.has_extension for d in probe_khr())


def test_counters_units_and_passes_are_enumerated(
    layer_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for name, value in fixture_env(layer_dir).items():
        monkeypatch.setenv(name, value)
    selections = [COUNTERS[:1], COUNTERS[:2], COUNTERS]
    (device,) = probe_khr(selections)
    assert device.has_extension
    family = device.families[0]  # lavapipe: one family with graphics and compute
    assert [c.name for c in family.counters] == COUNTERS
    units = {c.name: c.unit for c in family.counters}
    assert units["elapsed_ns"] == "nanoseconds" and units["ia_vertices"] == "generic"
    scopes = {c.name: c.scope for c in family.counters}
    assert scopes.pop("render_pass_fragments") == "render_pass"
    assert scopes.pop("command_buffer_invocations") == "command_buffer"
    assert set(scopes.values()) == {"command"}
    assert {c.storage for c in family.counters} == {"uint64"}
    assert [c.name for c in family.counters if c.concurrently_impacted] == ["elapsed_ns"]
    assert len({c.uuid for c in family.counters}) == len(COUNTERS)
    # Each counter its own pass.
    assert sorted(family.passes.values()) == [1, 2, 7]


def test_results_need_every_pass_and_come_from_real_queries(layer_dir: Path) -> None:
    res = run([sys.executable, APP], fixture_env(layer_dir))
    assert res.returncode == 0, res.stdout + res.stderr
    seen = json.loads(res.stdout.strip().splitlines()[-1])
    assert seen["counters"] == COUNTERS
    assert seen["lock"] == 0
    assert seen["passes"] == len(COUNTERS)
    # VK_NOT_READY (1) until the last pass was submitted, then VK_SUCCESS.
    assert seen["ready_after_each_pass"] == [1] * (len(COUNTERS) - 1) + [0]
    # A buffer fill: no vertices, primitives or invocations; some time.
    values = dict(zip(COUNTERS, seen["values"], strict=True))
    assert values["ia_vertices"] == values["compute_invocations"] == 0
    assert values["render_pass_fragments"] == values["command_buffer_invocations"] == 0
    assert values["elapsed_ns"] >= 0


def test_a_busy_profiling_lock_times_out(layer_dir: Path) -> None:
    env = fixture_env(layer_dir, VKSCOPE_TEST_PERFORMANCE_QUERY_LOCK="busy")
    res = run([sys.executable, APP, "busy"], env)
    assert res.returncode == 0, res.stdout + res.stderr
    assert json.loads(res.stdout.strip().splitlines()[-1])["lock"] == 2  # VK_TIMEOUT
