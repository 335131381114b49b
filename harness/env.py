"""Environments and subprocess helpers shared by the tests: the installed package's layer,
enabled through the loader's environment exactly as a user's application gets it."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from collections.abc import Mapping
from pathlib import Path

from vkscope.settings import LAYER_NAME


def base_env() -> dict[str, str]:
    """The environment without any vkscope or layer variables, deterministic lavapipe."""
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("VK_VKSCOPE_", "VK_INSTANCE_LAYERS", "VK_ADD_LAYER_PATH"))
        and k not in ("VK_LAYER_SETTINGS_PATH", "VK_LOADER_DEBUG", "DISPLAY")
    }
    env["LP_NUM_THREADS"] = "0"
    return env


def layer_env(layer_dir: Path, enable: bool = True, **settings: str) -> dict[str, str]:
    env = base_env()
    env["VK_ADD_LAYER_PATH"] = str(layer_dir)
    if enable:
        env["VK_INSTANCE_LAYERS"] = LAYER_NAME
    for name, value in settings.items():
        env["VK_VKSCOPE_" + name.upper()] = value
    return env


def run(
    cmd: list[str | Path], env: Mapping[str, str], cwd: Path | None = None, timeout: float = 300
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(c) for c in cmd],
        env=dict(env),
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=timeout,
    )


def vkscope_cli() -> str:
    # The script installed next to the interpreter running the tests, as a user of this venv gets.
    beside = Path(sys.executable).parent / "vkscope"
    exe = str(beside) if beside.exists() else shutil.which("vkscope")
    assert exe, "the vkscope command is not installed (pip install .)"
    return exe
