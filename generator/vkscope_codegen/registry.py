"""Reads the commands of the Khronos Vulkan registry (vk.xml).

Only what the layer framework needs: every command of the `vulkan` API (core versions and every
supported extension, platform and vendor ones included), its C signature, the preprocessor guard
its platform needs, and which dispatch chain (global, instance or device) it travels.
"""

from __future__ import annotations

import os
import re
import xml.etree.ElementTree as ET
from dataclasses import dataclass
from pathlib import Path

INSTANCE_HANDLES = {"VkInstance", "VkPhysicalDevice"}
DEVICE_HANDLES = {"VkDevice", "VkQueue", "VkCommandBuffer", "VkExternalComputeQueueNV"}
# The loader-interface entry points are answered by hand in loader_interface.cpp.
LOADER_INTERFACE = {"vkGetInstanceProcAddr", "vkGetDeviceProcAddr"}


class RegistryError(Exception):
    """The registry is missing or does not parse; the message says what to do."""


@dataclass(frozen=True)
class Param:
    type: str
    name: str
    decl: str  # the full C declaration, e.g. "const float blendConstants[4]"


@dataclass(frozen=True)
class Command:
    name: str
    return_type: str
    params: tuple[Param, ...]
    level: str  # "global", "instance" or "device"
    protect: str | None  # preprocessor symbol the command's platform needs, if any

    @property
    def field(self) -> str:
        """Dispatch-table member name: the command without its `vk` prefix."""
        return self.name[2:]

    def signature(self) -> str:
        return ", ".join(p.decl for p in self.params) or "void"

    def arguments(self) -> str:
        return ", ".join(p.name for p in self.params)


@dataclass(frozen=True)
class Registry:
    header_version: int
    commands: dict[str, Command]

    def ordered(self) -> list[Command]:
        return [self.commands[n] for n in sorted(self.commands)]


def find_registry(explicit: str | None = None, include_dirs: list[str] | None = None) -> Path:
    """Locates vk.xml next to the installed Vulkan headers.

    Order: an explicit path, $VKSCOPE_VK_XML, $VULKAN_SDK/share/vulkan/registry, then
    <prefix>/share/vulkan/registry for each include directory's prefix.
    """
    named = explicit or os.environ.get("VKSCOPE_VK_XML")
    candidates: list[Path] = []
    if named:
        # A registry the user named is the only one to use: another one found elsewhere could
        # silently disagree with the headers they meant.
        candidates = [Path(named)]
    else:
        if os.environ.get("VULKAN_SDK"):
            candidates.append(Path(os.environ["VULKAN_SDK"]) / "share/vulkan/registry/vk.xml")
        for inc in include_dirs or []:
            candidates.append(Path(inc).resolve().parent / "share/vulkan/registry/vk.xml")
    for c in candidates:
        if c.is_file():
            return c
    tried = "\n  ".join(str(c) for c in candidates) or "(no candidate locations)"
    raise RegistryError(
        "the Khronos registry vk.xml was not found; tried:\n  "
        + tried
        + "\nInstall the Vulkan headers with their registry (Debian: apt-get install libvulkan-dev)"
        " or point VKSCOPE_VK_XML at a vk.xml that matches your headers."
    )


def _is_vulkan(api: str | None) -> bool:
    return api is None or "vulkan" in api.split(",")


def _text(elem: ET.Element) -> str:
    return re.sub(r"\s+", " ", "".join(elem.itertext())).strip()


def _level(first_param_type: str | None, name: str) -> str:
    if name in {"vkGetInstanceProcAddr"}:
        return "global"
    if first_param_type in DEVICE_HANDLES:
        return "device"
    if first_param_type in INSTANCE_HANDLES:
        return "instance"
    return "global"


def load(path: Path) -> Registry:
    try:
        root = ET.parse(path).getroot()
    except (OSError, ET.ParseError) as exc:
        raise RegistryError(f"cannot read the registry {path}: {exc}") from exc

    header_version = None
    for t in root.iter("type"):
        define = t.find("name")
        if (
            t.get("category") == "define"
            and define is not None
            and define.text == "VK_HEADER_VERSION"
        ):
            header_version = int((define.tail or "").strip())
    if header_version is None:
        raise RegistryError(f"{path} has no VK_HEADER_VERSION: is it really vk.xml?")

    protects = {p.get("name"): p.get("protect") for p in root.iter("platform")}

    # Which commands the `vulkan` API requires, and under which platform guard.
    guards: dict[str, set[str | None]] = {}
    for feature in root.iter("feature"):
        if not _is_vulkan(feature.get("api")):
            continue
        for req in feature.iter("require"):
            if not _is_vulkan(req.get("api")):
                continue
            for cmd in req.iter("command"):
                guards.setdefault(cmd.get("name", ""), set()).add(None)
    for ext in root.iter("extension"):
        if "vulkan" not in (ext.get("supported") or "").split(","):
            continue
        protect = protects.get(ext.get("platform")) if ext.get("platform") else None
        for req in ext.iter("require"):
            if not _is_vulkan(req.get("api")):
                continue
            for cmd in req.iter("command"):
                guards.setdefault(cmd.get("name", ""), set()).add(protect)

    definitions: dict[str, ET.Element] = {}
    aliases: dict[str, str] = {}
    for cmd in root.iter("command"):
        if not _is_vulkan(cmd.get("api")):
            continue
        if cmd.get("alias"):
            aliases[cmd.get("name", "")] = cmd.get("alias", "")
            continue
        proto = cmd.find("proto")
        if proto is not None:
            definitions[_text(proto.find("name"))] = cmd  # type: ignore[arg-type]

    commands: dict[str, Command] = {}
    for name, guard in guards.items():
        target = name
        while target in aliases:
            target = aliases[target]
        elem = definitions.get(target)
        if elem is None:
            raise RegistryError(f"{path}: command {name} is required but never defined")
        proto = elem.find("proto")
        assert proto is not None
        ret = _text(proto)[: -len(target)].strip()
        params = []
        for p in elem.findall("param"):
            if not _is_vulkan(p.get("api")):
                continue
            ptype = p.find("type")
            pname = p.find("name")
            params.append(
                Param(
                    type=ptype.text or "" if ptype is not None else "",
                    name=pname.text or "" if pname is not None else "",
                    decl=_text(p),
                )
            )
        first = params[0].type if params else None
        protect = None if None in guard else sorted(g for g in guard if g)[0]
        commands[name] = Command(name, ret, tuple(params), _level(first, name), protect)
    return Registry(header_version, commands)


def header_version_of(include_dir: Path) -> int | None:
    """VK_HEADER_VERSION of the C headers, to check they match the registry."""
    header = include_dir / "vulkan" / "vulkan_core.h"
    try:
        m = re.search(r"#define\s+VK_HEADER_VERSION\s+(\d+)", header.read_text())
    except OSError:
        return None
    return int(m.group(1)) if m else None
