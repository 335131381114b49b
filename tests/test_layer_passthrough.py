"""The layer loads, and with no feature doing anything it changes nothing the application sees."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from harness.env import base_env, layer_env, run
from vkscope.settings import LAYER_NAME

pytestmark = pytest.mark.vulkan


def test_loader_inserts_the_layer(layer_dir: Path) -> None:
    env = layer_env(layer_dir)
    env["VK_LOADER_DEBUG"] = "layer"
    env["VK_VKSCOPE_LOG_LEVEL"] = "info"
    res = run(["vulkaninfo", "--summary"], env)
    assert res.returncode == 0, res.stderr
    assert f'Insert instance layer "{LAYER_NAME}"' in res.stdout + res.stderr
    assert f"vkscope: info: {LAYER_NAME} loaded" in res.stderr


@pytest.mark.parametrize("passthrough", ["direct", "wrapped"])
def test_full_vulkaninfo_is_unchanged(layer_dir: Path, passthrough: str) -> None:
    without = run(["vulkaninfo"], layer_env(layer_dir, enable=False))
    with_layer = run(["vulkaninfo"], layer_env(layer_dir, passthrough=passthrough))
    assert without.returncode == 0, without.stderr
    assert with_layer.returncode == 0, with_layer.stderr
    assert LAYER_NAME in without.stdout  # listed as available in both runs
    assert without.stdout.splitlines() == with_layer.stdout.splitlines()


def test_vulkaninfo_without_layer_path_differs_only_by_the_layer_entry(layer_dir: Path) -> None:
    plain = run(["vulkaninfo"], base_env())
    with_layer = run(["vulkaninfo"], layer_env(layer_dir))
    assert plain.returncode == 0 and with_layer.returncode == 0

    def without_vkscope(text: str) -> list[str]:
        # Drop the layer's own block in the Layers section (its header line through the blank
        # line that ends it) and the layer count that includes it.
        out: list[str] = []
        skipping = False
        for line in text.splitlines():
            if line.startswith(LAYER_NAME):
                skipping = True
            elif skipping and not line.strip():
                skipping = False
            elif not skipping:
                out.append(re.sub(r"^Layers: count = \d+", "Layers: count = N", line))
        return out

    assert without_vkscope(plain.stdout) == without_vkscope(with_layer.stdout)
