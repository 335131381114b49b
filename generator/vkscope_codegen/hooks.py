"""Reads layer/hooks.toml: the one list of commands the layer intercepts, by feature."""

from __future__ import annotations

import tomllib
from dataclasses import dataclass
from pathlib import Path

from .registry import LOADER_INTERFACE, Registry, RegistryError


@dataclass(frozen=True)
class Hook:
    command: str
    feature: str


def load(path: Path, registry: Registry) -> tuple[list[str], list[Hook]]:
    """Returns the feature names (in file order, `core` first) and every hook."""
    data = tomllib.loads(path.read_text())
    features = list(data)
    if not features or features[0] != "core":
        raise RegistryError(f"{path}: the first feature table must be [core]")
    hooks: list[Hook] = []
    seen: set[str] = set()
    for feature, table in data.items():
        # Commands of extensions newer than some registries: hooked only where the registry (and
        # so the headers the layer is built against) has them; their C++ is guarded by the
        # extension's macro.
        optional = [c for c in table.get("if_in_registry", []) if c in registry.commands]
        for command in [*table.get("commands", []), *optional]:
            if command in seen:
                raise RegistryError(f"{path}: {command} is hooked twice")
            if command in LOADER_INTERFACE:
                raise RegistryError(f"{path}: {command} is answered by loader_interface.cpp")
            if command not in registry.commands:
                raise RegistryError(f"{path}: {command} is not a command of this registry")
            seen.add(command)
            hooks.append(Hook(command, feature))
    return features, hooks
