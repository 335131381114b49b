"""Reading the kernel's sysfs files of a GPU: where they are, and their formats.

The root is /sys, or the folder VKSCOPE_SYSFS_ROOT names (the tests point it at a tree of
fixture files in the kernel's formats). A PCI device is `ROOT/bus/pci/devices/ADDRESS`, its
driver named by the DRIVER line of its `uevent`, its hwmon sensors in `hwmon/hwmon*/`
(Documentation/hwmon/sysfs-interface: microwatts, microjoules, millidegrees Celsius, hertz).
Each value is read by opening the file anew, as a monitor must: a file the driver removed
(a GPU unbound or lost) then fails instead of repeating its last value.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Final

from .metrics import Read

ROOT_VARIABLE: Final = "VKSCOPE_SYSFS_ROOT"
_CARD: Final = re.compile(r"card\d+")


def root(environment: Mapping[str, str] = os.environ) -> Path:
    return Path(environment.get(ROOT_VARIABLE) or "/sys")


def read_text(path: Path) -> str:
    fd = os.open(path, os.O_RDONLY)
    try:
        return os.read(fd, 65536).decode("ascii", "replace")
    finally:
        os.close(fd)


def read_int(path: Path) -> int:
    words = read_text(path).split()
    if not words:
        raise ValueError(f"{path} is empty")
    return int(words[0])


def int_read(path: Path, scale: float = 1.0) -> Read:
    """A reader of one integer file, times `scale`."""
    if scale == 1.0:
        return lambda: read_int(path)
    return lambda: read_int(path) * scale


def pci_device(sysfs: Path, pci: str) -> Path:
    return sysfs / "bus" / "pci" / "devices" / pci


def uevent(device: Path) -> dict[str, str]:
    """KEY=VALUE lines of the device's uevent (DRIVER, PCI_ID, PCI_SLOT_NAME ...)."""
    out = {}
    for line in read_text(device / "uevent").splitlines():
        key, sep, value = line.partition("=")
        if sep:
            out[key.strip()] = value.strip()
    return out


def hwmon(device: Path) -> Path | None:
    """The device's first hwmon folder, if it has one."""
    folder = device / "hwmon"
    try:
        found = sorted(p for p in folder.iterdir() if p.name.startswith("hwmon"))
    except OSError:
        return None
    return found[0] if found else None


def drm_card(device: Path) -> Path | None:
    """The device's DRM card folder (`drm/cardN`, not a connector such as card0-DP-1)."""
    try:
        cards = sorted(p for p in (device / "drm").iterdir() if _CARD.fullmatch(p.name))
    except OSError:
        return None
    return cards[0] if cards else None


def first_existing(*paths: Path) -> Path | None:
    return next((p for p in paths if p.exists()), None)


def dpm_current_mhz(path: Path) -> int:
    """The current level of an amdgpu DPM table (pp_dpm_sclk, pp_dpm_mclk): the line marked
    `*`, such as `1: 1800Mhz *` (a current clock between levels is written `   1234Mhz *`)."""
    for line in read_text(path).splitlines():
        if line.rstrip().endswith("*"):
            return _mhz(line)
    raise ValueError(f"no current level marked in {path}")


def dpm_levels_mhz(path: Path) -> list[int]:
    """Every numbered level of an amdgpu DPM table, in MHz."""
    levels = []
    for line in read_text(path).splitlines():
        index, sep, _ = line.partition(":")
        if sep and index.strip().isdigit():
            levels.append(_mhz(line))
    return levels


def _mhz(line: str) -> int:
    found = re.search(r"(\d+)\s*[Mm][Hh]z", line)
    if not found:
        raise ValueError(f"no clock in {line!r}")
    return int(found.group(1))


def hwmon_label(folder: Path, channel: str) -> str | None:
    try:
        return read_text(folder / f"{channel}_label").strip()
    except OSError:
        return None
