"""`vkscope run`: runs the app with the layer, passes its exit code back, explains failures."""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

import pytest

from harness.env import base_env, run, vkscope_cli

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


def vkscope(
    *args: str | Path, cwd: Path | None = None, env: dict[str, str] | None = None
) -> tuple[int, str, str]:
    # Runs in a scratch folder: `vkscope run` writes its capture into the working directory.
    with tempfile.TemporaryDirectory() as scratch:
        res = run([vkscope_cli(), *args], env or base_env(), cwd=cwd or Path(scratch))
    return res.returncode, res.stdout, res.stderr


def script(path: Path, body: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("#!/bin/sh\n" + body)
    path.chmod(0o755)
    return path


@pytest.mark.parametrize(
    ("program", "folder"),
    [("./app", "bin"), ("../app", "bin/sub"), ("./sub/../app", "bin"), ("app", "elsewhere")],
)
def test_programs_are_found_as_a_shell_finds_them(
    tmp_path: Path, program: str, folder: str
) -> None:
    # A path with a slash is relative to the working folder; a bare name is looked up on PATH.
    # What the program is told ($0, its arguments) is what a shell tells it.
    script(tmp_path / "bin" / "app", 'echo "ran as $0 with $1" > "$2"\n')
    (tmp_path / "bin" / "sub").mkdir()
    cwd = tmp_path / folder
    cwd.mkdir(parents=True, exist_ok=True)
    env = base_env()
    env["PATH"] = f"{tmp_path / 'bin'}:{env['PATH']}"
    by_shell, by_vkscope = tmp_path / "by-shell", tmp_path / "by-vkscope"
    shell = run(["sh", "-c", f'{program} hello "{by_shell}"'], env, cwd=cwd)
    assert shell.returncode == 0, shell.stderr
    code, _, err = vkscope("run", "--", program, "hello", by_vkscope, cwd=cwd, env=env)
    assert code == 0, err
    assert by_vkscope.read_text() == by_shell.read_text()
    assert not list(cwd.glob("*.vkscope"))  # nothing connected: no capture kept


@pytest.mark.vulkan
def test_a_vulkan_program_in_this_folder(tmp_path: Path, workload: Path) -> None:
    (tmp_path / "wl").symlink_to(workload)
    code, out, err = vkscope(
        "run", "--no-trace", "--no-html", "--", "./wl", "--scenario", "compute", cwd=tmp_path
    )
    assert code == 0, err
    assert "PASS compute" in out
    (capture,) = tmp_path.glob("wl-*.vkscope")
    from vkscope.capture import open_capture

    with open_capture(capture) as cap:
        assert cap.meta.status == "complete" and cap.workload_count() > 0


def test_a_program_that_cannot_be_executed_leaves_no_capture(tmp_path: Path) -> None:
    junk = tmp_path / "junk"
    junk.write_bytes(b"\x7fELF not really")
    junk.chmod(0o755)
    code, _, err = vkscope("run", "--", "./junk", cwd=tmp_path)
    assert code == 126 and "./junk: Exec format error" in err, err
    assert [p.name for p in tmp_path.iterdir()] == ["junk"]


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


@pytest.mark.parametrize(
    ("output", "words"),
    [
        ("missing/dir/app.vkscope", "the folder missing/dir does not exist"),
        # sysfs takes no new files, not even from root: a file system that cannot be written.
        ("/sys/app.vkscope", "cannot write the capture /sys/app.vkscope: Permission denied"),
    ],
)
def test_an_output_that_cannot_be_written_is_refused_first(
    tmp_path: Path, output: str, words: str
) -> None:
    marker = tmp_path / "ran"
    code, _, err = vkscope("run", "-o", output, "--", "touch", marker, cwd=tmp_path)
    assert code == 2, err
    assert err.startswith("vkscope: ") and err.count("\n") == 1 and words in err, err
    assert not marker.exists()


@pytest.mark.parametrize(
    ("variable", "value", "words"),
    [
        ("VK_VKSCOPE_LOG_LEVEL", "loud", "VK_VKSCOPE_LOG_LEVEL (from the environment): setting "
         "log_level='loud': expected one of error|warn|info|debug"),
        ("VK_VKSCOPE_LOG_FILE", "/sys/vkscope.log", "cannot write the layer's log file "
         "/sys/vkscope.log: Permission denied"),
        ("VK_VKSCOPE_FRAME_SUBMITS", " 3", "setting frame_submits=' 3': expected an integer"),
        ("VK_VKSCOPE_COLOUR", "1", "VK_VKSCOPE_COLOUR (from the environment): unknown setting "
         "'colour'"),
    ],
)  # fmt: skip
def test_layer_variables_are_checked_as_the_layer_checks_them(
    tmp_path: Path, variable: str, value: str, words: str
) -> None:
    # vkscope run replaces some of the layer's variables with its own: what the layer would have
    # said about the user's value is said before the application starts.
    env = base_env()
    env[variable] = value
    marker = tmp_path / "ran"
    code, _, err = vkscope("run", "--", "touch", marker, cwd=tmp_path, env=env)
    assert code == 2, err
    assert err.startswith("vkscope: ") and err.count("\n") == 1 and words in err, err
    assert not marker.exists()


def test_the_host_setting_is_never_replaced_without_a_word(tmp_path: Path) -> None:
    marker = tmp_path / "ran"
    code, _, err = vkscope("run", "-s", "host=tcp:127.0.0.1:9", "--", "touch", marker)
    assert code == 2 and "-s host=tcp:127.0.0.1:9: a capture needs the layer's host" in err, err
    assert not marker.exists()
    code, _, err = vkscope("run", "-s", "timeline=off", "--", "touch", marker)
    assert code == 2 and "-s timeline=off: a capture needs the layer's timeline on" in err, err
    code, _, err = vkscope("run", "--no-capture", "-s", "host=tcp:127.0.0.1:9", "--", "touch",
                           marker)  # fmt: skip
    assert code == 0 and marker.exists(), err
    env = base_env()
    env["VK_VKSCOPE_HOST"] = "unix:/nowhere.sock"
    code, _, err = vkscope("run", "--", "true", env=env)
    assert code == 0, err
    assert (
        "vkscope: VK_VKSCOPE_HOST=unix:/nowhere.sock from the environment is overridden: a "
        "capture needs host to be vkscope run's own capture server (--no-capture keeps it)"
    ) in err
