"""Starts an application with the vkscope layer enabled through the loader's environment.

Nothing is installed system-wide: the layer's folder is added with VK_ADD_LAYER_PATH (which keeps
the system's layers, such as validation, visible) and the layer is enabled with
VK_INSTANCE_LAYERS, for this one process tree only.
"""

from __future__ import annotations

import ctypes.util
import os
import shutil
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from .settings import LAYER_NAME, all_settings, environment
from .supervisor import Supervisor

LOADED_MARK = f"{LAYER_NAME} loaded"
LEVELS = ("error", "warn", "info", "debug")


class LaunchError(Exception):
    """The application could not be started; `exit_code` follows the shell's convention."""

    def __init__(self, message: str, exit_code: int) -> None:
        super().__init__(message)
        self.exit_code = exit_code


@dataclass
class LaunchResult:
    exit_code: int
    layer_loaded: bool
    layer_messages: list[str] = field(default_factory=list)


def resolve_program(program: str) -> str:
    """The file to execute for `program`, found as a shell finds it: a name with a slash is a
    path (relative to the working directory), any other is looked up on PATH. LaunchError with
    the shell's 127 (missing) or 126 (not runnable)."""
    if os.sep in program:
        path = Path(program)
        if not path.exists():
            raise LaunchError(f"{program}: no such file", 127)
        if path.is_dir() or not os.access(path, os.X_OK):
            raise LaunchError(f"{program}: not an executable file", 126)
        return program  # as typed: Path() would turn ./app into app, a name to look up
    found = shutil.which(program)
    if found is None:
        raise LaunchError(f"{program}: command not found", 127)
    return found


def layer_environment(
    base: Mapping[str, str], layer_dir: Path, settings: Mapping[str, str]
) -> dict[str, str]:
    env = dict(base)
    paths = [str(layer_dir)] + [p for p in env.get("VK_ADD_LAYER_PATH", "").split(":") if p]
    env["VK_ADD_LAYER_PATH"] = ":".join(paths)
    layers = [name for name in env.get("VK_INSTANCE_LAYERS", "").split(":") if name]
    if LAYER_NAME not in layers:
        layers.insert(0, LAYER_NAME)
    env["VK_INSTANCE_LAYERS"] = ":".join(layers)
    env.update(environment(dict(settings)))
    return env


def loader_available() -> bool:
    return ctypes.util.find_library("vulkan") is not None


def not_loaded_reason(program: str) -> str:
    if not loader_available():
        return (
            "the Vulkan loader (libvulkan.so.1) is not installed, so no layer can load; "
            "install it (Debian: apt-get install libvulkan1 mesa-vulkan-drivers)"
        )
    return (
        f"the vkscope layer was not loaded: {program} never created a Vulkan instance through "
        "the Vulkan loader (is it a Vulkan application?)"
    )


def run(
    argv: Sequence[str],
    layer_dir: Path,
    settings: Mapping[str, str],
    log_file: Path,
    supervisor: Supervisor,
    extra_env: Mapping[str, str] | None = None,
) -> LaunchResult:
    """Runs the application to completion with the layer; its messages go to `log_file`.

    The application keeps argv[0] as typed. `supervisor` passes signals on to it (supervisor.py).
    The layer always logs at `info` into the file so vkscope can tell whether it loaded; the
    level the user asked for decides which of those lines are shown.
    """
    program = resolve_program(argv[0])
    wanted_level = settings.get("log_level", all_settings()["log_level"].default)
    layer_settings = dict(settings)
    layer_settings["log_level"] = "info" if wanted_level in ("error", "warn") else wanted_level
    layer_settings["log_file"] = str(log_file)
    env = layer_environment(os.environ, layer_dir, layer_settings)
    env.update(extra_env or {})
    log_file.parent.mkdir(parents=True, exist_ok=True)
    log_file.write_text("")
    try:
        pid = supervisor.spawn(program, argv, env)
    except OSError as exc:
        raise LaunchError(f"{argv[0]}: {exc.strerror}", 126) from exc
    code = supervisor.wait(pid)
    lines = log_file.read_text(errors="replace").splitlines()
    shown = LEVELS[: LEVELS.index(wanted_level) + 1]
    messages = [ln for ln in lines if any(ln.startswith(f"vkscope: {lv}:") for lv in shown)]
    loaded = any(LOADED_MARK in ln for ln in lines)
    return LaunchResult(code, loaded, messages)
