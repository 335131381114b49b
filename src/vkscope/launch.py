"""Starts an application with the vkscope layer enabled through the loader's environment.

Nothing is installed system-wide. For the run, the layer's manifest is written as an *implicit*
layer's into a temporary folder that XDG_DATA_DIRS names (the loader looks for implicit layers in
`vulkan/implicit_layer.d` under each), with an `enable_environment` variable that vkscope sets
for this one process tree. The loader enables such a layer silently, before any layer of the
application's list or of VK_INSTANCE_LAYERS (so vkscope sits above validation, as the
application sees it); enabling it with VK_INSTANCE_LAYERS instead makes the loader report the
variable as a warning to the application's debug messengers at every instance it creates.
"""

from __future__ import annotations

import ctypes.util
import json
import os
import shutil
import tempfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from .paths import LAYER_MANIFEST
from .settings import LAYER_NAME, all_settings, environment
from .supervisor import Supervisor

LOADED_MARK = f"{LAYER_NAME} loaded"
LEVELS = ("error", "warn", "info", "debug")
# The implicit manifest's switches: the layer loads where ENABLE is 1 and DISABLE is not (the
# loader requires every implicit layer to name a disable variable).
ENABLE_VARIABLE = "VKSCOPE_ENABLE_LAYER"
DISABLE_VARIABLE = "VKSCOPE_DISABLE_LAYER"
# Where the loader looks when XDG_DATA_DIRS is unset or empty (the XDG base directory default).
XDG_DATA_DIRS_DEFAULT = "/usr/local/share:/usr/share"


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


def write_implicit_manifest(layer_dir: Path, data_dir: Path) -> Path:
    """Writes the installed layer's manifest as an implicit layer's under
    `data_dir`/vulkan/implicit_layer.d, its library by absolute path; returns the file."""
    manifest = json.loads((layer_dir / LAYER_MANIFEST).read_text())
    layer = manifest["layer"]
    layer["library_path"] = str((layer_dir / layer["library_path"]).resolve())
    layer["enable_environment"] = {ENABLE_VARIABLE: "1"}
    layer["disable_environment"] = {DISABLE_VARIABLE: "1"}
    folder = data_dir / "vulkan" / "implicit_layer.d"
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / LAYER_MANIFEST
    path.write_text(json.dumps(manifest, indent=4) + "\n")
    return path


def layer_environment(
    base: Mapping[str, str], data_dir: Path, settings: Mapping[str, str]
) -> dict[str, str]:
    """`base` with the layer enabled from the implicit manifest under `data_dir`
    (write_implicit_manifest) and `settings` as VK_VKSCOPE_* variables."""
    env = dict(base)
    dirs = env.get("XDG_DATA_DIRS") or XDG_DATA_DIRS_DEFAULT
    env["XDG_DATA_DIRS"] = f"{data_dir}:{dirs}"
    env[ENABLE_VARIABLE] = "1"
    env.pop(DISABLE_VARIABLE, None)
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
    log_file.parent.mkdir(parents=True, exist_ok=True)
    log_file.write_text("")
    with tempfile.TemporaryDirectory(prefix="vkscope-layer-") as data_dir:
        write_implicit_manifest(layer_dir, Path(data_dir))
        env = layer_environment(os.environ, Path(data_dir), layer_settings)
        env.update(extra_env or {})
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
