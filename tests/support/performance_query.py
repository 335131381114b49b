"""What the performance_query tests share: the test fixture layer that implements
VK_KHR_performance_query below vkscope (layer/testing/performance_query), the `khr` fixture that
runs the workload program on it (a pytest plugin: conftest.py registers it), `vkscope run` on it,
and readers of what the layer sent."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from harness import protocol
from harness.env import base_env, layer_env, run, vkscope_cli
from harness.timeline import Capture, Receiver
from harness.timing import Timed
from vkscope.settings import LAYER_NAME

COUNTERS_CODE = protocol.CODES["COUNTERS"]
FIXTURE = "VK_LAYER_VKSCOPE_test_performance_query"
VALIDATION = "VK_LAYER_KHRONOS_validation"
ALL = ["ia_vertices", "ia_primitives", "fragment_invocations", "compute_invocations", "elapsed_ns"]
# The fixture's counters and the pipeline statistics they stand for.
TRUTH = {
    "ia_vertices": "input_assembly_vertices",
    "ia_primitives": "input_assembly_primitives",
    "fragment_invocations": "fragment_shader_invocations",
    "compute_invocations": "compute_shader_invocations",
    "render_pass_fragments": "fragment_shader_invocations",  # RENDER_PASS scope
}
MANIFEST_DIRS = [
    Path(p) / "vulkan" / "explicit_layer.d"
    for p in ("/usr/local/share", "/usr/share", "/etc")
]  # fmt: skip


def validation_dir() -> Path:
    for d in MANIFEST_DIRS:
        if (d / "VkLayer_khronos_validation.json").is_file():
            return d
    pytest.skip("the Khronos validation layer is not installed")


Runner = Any


@pytest.fixture
def khr(layer_dir: Path, workload: Path) -> Iterator[Runner]:
    receivers: list[Receiver] = []

    def go(
        *args: str,
        validation: str = "between",
        program: list[str] | None = None,
        extra_env: dict[str, str] | None = None,
        **settings: str,
    ) -> tuple[Any, Capture]:
        """Runs `program` (the workload program) with vkscope above the fixture, and the
        validation layer `between` the two, `below` the fixture (checking the fixture's own
        commands too, as it would a driver's), or `none`."""
        receiver = Receiver()
        receivers.append(receiver)
        env = layer_env(layer_dir, host=receiver.address, **settings)
        # This loader stacks VK_INSTANCE_LAYERS in the order it finds their manifests (the
        # folders of VK_ADD_LAYER_PATH first to last), closest to the application first.
        stack = {
            "between": [(layer_dir, LAYER_NAME), (validation_dir(), VALIDATION),
                        (layer_dir / "testing", FIXTURE)],
            "below": [(layer_dir, LAYER_NAME), (layer_dir / "testing", FIXTURE),
                      (validation_dir(), VALIDATION)],
            "none": [(layer_dir, LAYER_NAME), (layer_dir / "testing", FIXTURE)],
        }[validation]  # fmt: skip
        env["VK_ADD_LAYER_PATH"] = ":".join(str(folder) for folder, _ in stack)
        env["VK_INSTANCE_LAYERS"] = ":".join(name for _, name in stack)
        env.update(extra_env or {})
        res = run([*(program or [str(workload)]), *args], env)
        return res, receiver.finish()

    yield go
    for r in receivers:
        r.close()


def validation_errors(res: Any) -> list[str]:
    # The loader names the layers it adds from VK_INSTANCE_LAYERS: validation was among them.
    assert VALIDATION in res.stdout + res.stderr
    return [ln for ln in (res.stdout + res.stderr).splitlines() if "Validation Error" in ln]


def values(t: Timed) -> dict[str, Any]:
    found = t.fields.get("counters")
    return dict(found) if isinstance(found, dict) else {}


def announced(capture: Capture) -> dict[str, dict[str, Any]]:
    (family,) = [m.payload for m in capture.of(COUNTERS_CODE)]  # lavapipe: one family
    assert family["source"] == "performance_query", family
    return {c["name"]: c for c in family["counters"]}


def by_frame(items: list[Timed]) -> dict[int, list[Timed]]:
    out: dict[int, list[Timed]] = {}
    for t in items:
        out.setdefault(int(t.submit.payload["frame"]), []).append(t)
    return out


def fixture_env(layer_dir: Path, **extra: str) -> dict[str, str]:
    env = base_env()
    env["VK_ADD_LAYER_PATH"] = str(layer_dir / "testing")
    env["VK_INSTANCE_LAYERS"] = FIXTURE
    env.update(extra)
    return env


def vkscope_run(env: dict[str, str], cwd: Path, *args: str) -> tuple[int, str]:
    res = run([vkscope_cli(), "run", "--no-html", "-o", "app.vkscope", *args], env, cwd=cwd)
    return res.returncode, res.stdout + res.stderr
