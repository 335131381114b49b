"""Settings reach the layer from each source, in Vulkan's precedence, and bad ones are reported."""

from __future__ import annotations

from pathlib import Path

import pytest

from harness.env import layer_env, run

pytestmark = pytest.mark.vulkan

LOADED = "VK_LAYER_VKSCOPE_profiler loaded"


def _settings_file(folder: Path, **values: str) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    lines = ["# other layers' lines are left alone", "khronos_validation.enables = x"]
    lines += [f"vkscope_profiler.{k} = {v}" for k, v in values.items()]
    (folder / "vk_layer_settings.txt").write_text("\n".join(lines) + "\n")
    return folder


def test_environment_variable(layer_dir: Path, tmp_path: Path) -> None:
    log = tmp_path / "env.log"
    res = run(
        ["vulkaninfo", "--summary"], layer_env(layer_dir, log_level="info", log_file=str(log))
    )
    assert res.returncode == 0
    assert LOADED in log.read_text()
    assert LOADED not in res.stderr


def test_settings_file_by_path_and_in_working_directory(layer_dir: Path, tmp_path: Path) -> None:
    log = tmp_path / "file.log"
    folder = _settings_file(tmp_path / "cfg", log_level="info", log_file=str(log))
    env = layer_env(layer_dir)
    env["VK_LAYER_SETTINGS_PATH"] = str(folder)
    assert run(["vulkaninfo", "--summary"], env).returncode == 0
    assert LOADED in log.read_text()

    log.unlink()
    assert run(["vulkaninfo", "--summary"], layer_env(layer_dir), cwd=folder).returncode == 0
    assert LOADED in log.read_text()


def test_api_settings(layer_dir: Path, workload: Path, tmp_path: Path) -> None:
    log = tmp_path / "api.log"
    cmd = [
        workload,
        "--scenario",
        "buffer_transfer",
        "--quiet",
        "--layer-setting",
        "log_level=info",
        "--layer-setting",
        f"log_file={log}",
    ]
    res = run(cmd, layer_env(layer_dir))
    assert res.returncode == 0, res.stderr
    assert LOADED in log.read_text()


def test_precedence_environment_over_file_over_api(
    layer_dir: Path, workload: Path, tmp_path: Path
) -> None:
    logs = {src: tmp_path / f"{src}.log" for src in ("api", "file", "env")}
    folder = _settings_file(tmp_path / "cfg", log_file=str(logs["file"]))
    cmd = [
        workload,
        "--scenario",
        "buffer_transfer",
        "--quiet",
        "--layer-setting",
        "log_level=info",
        "--layer-setting",
        f"log_file={logs['api']}",
    ]

    def winner(use_file: bool, use_env: bool) -> str:
        env = layer_env(layer_dir)
        if use_file:
            env["VK_LAYER_SETTINGS_PATH"] = str(folder)
        if use_env:
            env["VK_VKSCOPE_LOG_FILE"] = str(logs["env"])
        for log in logs.values():
            log.unlink(missing_ok=True)
        assert run(cmd, env).returncode == 0
        written = [src for src, log in logs.items() if log.exists() and LOADED in log.read_text()]
        assert len(written) == 1, written
        return written[0]

    assert winner(use_file=True, use_env=True) == "env"
    assert winner(use_file=True, use_env=False) == "file"
    assert winner(use_file=False, use_env=False) == "api"


def test_bad_value_and_unknown_setting_reported_once_each(layer_dir: Path, workload: Path) -> None:
    env = layer_env(layer_dir, log_level="loud", colour="blue")
    res = run([workload, "--scenario", "buffer_transfer", "--quiet", "--cycles", "3"], env)
    assert res.returncode == 0, res.stderr
    bad = (
        "vkscope: warn: setting log_level='loud' (from VK_VKSCOPE_LOG_LEVEL) ignored: "
        "expected one of error|warn|info|debug"
    )
    unknown = "vkscope: warn: unknown setting 'colour' (from VK_VKSCOPE_COLOUR) ignored"
    assert res.stderr.count(bad) == 1, res.stderr
    assert res.stderr.count(unknown) == 1, res.stderr


def test_bad_line_in_settings_file_reports_file_and_line(layer_dir: Path, tmp_path: Path) -> None:
    folder = tmp_path / "cfg"
    folder.mkdir()
    (folder / "vk_layer_settings.txt").write_text("vkscope_profiler.passthrough = sideways\n")
    env = layer_env(layer_dir)
    env["VK_LAYER_SETTINGS_PATH"] = str(folder)
    res = run(["vulkaninfo", "--summary"], env)
    assert res.returncode == 0
    assert "vk_layer_settings.txt:1) ignored: expected one of direct|wrapped" in res.stderr
