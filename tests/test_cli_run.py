"""`vkscope run`: runs the app with the layer, passes its exit code back, explains failures."""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

import pytest
from support.env import base_env, run, vkscope_cli

NOT_LOADED = "the vkscope layer was not loaded"

# A minimal Vulkan application on the PyPI bindings: creates an instance, then exits with a code.
VULKAN_APP = """
import sys, vulkan as vk
app = vk.VkApplicationInfo(
    sType=vk.VK_STRUCTURE_TYPE_APPLICATION_INFO, apiVersion=vk.VK_MAKE_VERSION(1, 3, 0))
info = vk.VkInstanceCreateInfo(
    sType=vk.VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO, pApplicationInfo=app)
inst = vk.vkCreateInstance(info, None)
vk.vkDestroyInstance(inst, None)
sys.exit(int(sys.argv[1]))
"""


def vkscope(*args: str | Path) -> tuple[int, str, str]:
    # Runs in a scratch folder: `vkscope run` writes its capture into the working directory.
    with tempfile.TemporaryDirectory() as cwd:
        res = run([vkscope_cli(), *args], base_env(), cwd=Path(cwd))
    return res.returncode, res.stdout, res.stderr


def test_version_and_help() -> None:
    code, out, _ = vkscope("--version")
    assert code == 0 and out.startswith("vkscope ")
    for verb in ("run", "devices", "settings"):
        code, out, _ = vkscope(verb, "--help")
        assert code == 0 and "usage:" in out


@pytest.mark.vulkan
def test_vulkan_application_exit_code_is_propagated(tmp_path: Path) -> None:
    code, _, err = vkscope("run", "--", sys.executable, "-c", VULKAN_APP, "5")
    assert code == 5
    assert NOT_LOADED not in err


@pytest.mark.vulkan
def test_workload_under_vkscope_passes(workload: Path) -> None:
    code, out, err = vkscope("run", "--", workload, "--scenario", "compute")
    assert code == 0, err
    assert "PASS compute" in out


def test_non_vulkan_program_is_explained() -> None:
    code, _, err = vkscope("run", "--", "true")
    assert code == 0
    assert f"{NOT_LOADED}: true never created a Vulkan instance" in err


def test_failing_non_vulkan_program_keeps_its_code() -> None:
    code, _, err = vkscope("run", "--", "sh", "-c", "exit 7")
    assert code == 7
    assert NOT_LOADED in err


def test_crashing_program_reports_the_signal() -> None:
    code, _, _ = vkscope("run", "--", "sh", "-c", "kill -SEGV $$")
    assert code == 128 + 11


def test_missing_program(tmp_path: Path) -> None:
    code, _, err = vkscope("run", "--", "no-such-program-vkscope")
    assert code == 127
    assert "vkscope: no-such-program-vkscope: command not found" in err
    code, _, err = vkscope("run", "--", str(tmp_path / "absent"))
    assert code == 127 and "no such file" in err


def test_not_executable(tmp_path: Path) -> None:
    script = tmp_path / "script.sh"
    script.write_text("#!/bin/sh\n")
    code, _, err = vkscope("run", "--", str(script))
    assert code == 126 and "not an executable file" in err


@pytest.mark.parametrize(
    ("setting", "message"),
    [
        ("bogus=1", "unknown setting 'bogus'"),
        ("log_level=loud", "setting log_level='loud': expected one of error|warn|info|debug"),
        ("log_level", "expected NAME=VALUE"),
    ],
)
def test_bad_settings_refused_before_launch(setting: str, message: str, tmp_path: Path) -> None:
    marker = tmp_path / "ran"
    code, _, err = vkscope("run", "-s", setting, "--", "touch", str(marker))
    assert code == 2
    assert message in err
    assert not marker.exists()


def test_no_application() -> None:
    code, _, err = vkscope("run")
    assert code == 2 and "no application given" in err


def test_settings_lists_every_setting() -> None:
    code, out, _ = vkscope("settings")
    assert code == 0
    for name in ("log_level", "log_file", "passthrough"):
        assert name in out and f"VK_VKSCOPE_{name.upper()}" in out


def test_readme_documents_every_setting() -> None:
    from vkscope.settings import all_settings

    readme = (Path(__file__).resolve().parents[1] / "README.md").read_text()
    for name in all_settings():
        assert f"| `{name}` |" in readme, name
