"""The small C application of the fault and hostile-input tests (apps/fault_app.c: its modes),
built once per session against the system's Vulkan loader."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

SOURCE = Path(__file__).parent / "apps" / "fault_app.c"


@pytest.fixture(scope="session")
def fault_app(tmp_path_factory: pytest.TempPathFactory) -> Path:
    exe = tmp_path_factory.mktemp("fault_app") / "fault_app"
    subprocess.run(
        ["cc", "-std=c11", "-O1", "-Wall", "-Wextra", "-Werror", "-o", str(exe), str(SOURCE),
         "-lvulkan"],
        check=True,
    )  # fmt: skip
    return exe
