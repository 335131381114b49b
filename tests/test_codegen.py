"""The build's code generator: every registry command reaches the tables, bad inputs are named."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
VK_XML = Path("/usr/share/vulkan/registry/vk.xml")


def generate(tmp: Path, *extra: str, hooks: Path | None = None) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, PYTHONPATH=str(ROOT / "generator"))
    env.pop("VKSCOPE_VK_XML", None)
    cmd = [
        sys.executable, "-m", "vkscope_codegen",
        "--include-dir", "/usr/include",
        "--hooks", str(hooks or ROOT / "layer/hooks.toml"),
        "--settings", str(ROOT / "src/vkscope/layer_settings.toml"),
        "--out", str(tmp), *extra,
    ]  # fmt: skip
    return subprocess.run(cmd, env=env, capture_output=True, text=True, check=False)


@pytest.mark.skipif(not VK_XML.exists(), reason="needs Debian's libvulkan-dev registry")
def test_every_command_of_the_registry_is_in_the_tables(tmp_path: Path) -> None:
    res = generate(tmp_path)
    assert res.returncode == 0, res.stderr
    sys.path.insert(0, str(ROOT / "generator"))
    from vkscope_codegen import registry

    reg = registry.load(VK_XML)
    tables = (tmp_path / "dispatch_tables.gen.hpp").read_text()
    lookup = (tmp_path / "command_tables.gen.cpp").read_text()
    for cmd in reg.commands.values():
        if cmd.level in ("instance", "device"):
            assert f"PFN_{cmd.name} {cmd.field} = nullptr;" in tables, cmd.name
            if cmd.name != "vkGetDeviceProcAddr":
                assert f" pt_{cmd.name}(" in lookup, cmd.name
    # Window-system and vendor commands are there, each under its platform's guard.
    assert "#ifdef VK_USE_PLATFORM_XLIB_KHR\n    PFN_vkCreateXlibSurfaceKHR" in tables
    assert "#ifdef VK_USE_PLATFORM_WAYLAND_KHR" in tables
    assert "PFN_vkCmdDrawMeshTasksNV CmdDrawMeshTasksNV" in tables
    assert f"kRegistryHeaderVersion = {reg.header_version}" in tables


def test_missing_registry_is_a_clear_error(tmp_path: Path) -> None:
    res = generate(tmp_path, "--registry", str(tmp_path / "nowhere/vk.xml"))
    assert res.returncode == 1
    assert "the Khronos registry vk.xml was not found" in res.stderr
    assert "apt-get install libvulkan-dev" in res.stderr
    assert "Traceback" not in res.stderr


def test_hook_of_an_unknown_command_is_refused(tmp_path: Path) -> None:
    hooks = tmp_path / "hooks.toml"
    hooks.write_text('[core]\ncommands = ["vkCreateInstance", "vkCmdDoMagicVKSCOPE"]\n')
    res = generate(tmp_path / "out", hooks=hooks)
    assert res.returncode == 1
    assert "vkCmdDoMagicVKSCOPE is not a command of this registry" in res.stderr
