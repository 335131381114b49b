"""What every benchmark records about where it ran: the machine, its Vulkan driver, and the
vkscope source it measured (commit, and whether the tree had uncommitted changes)."""

from __future__ import annotations

import json
import os
import platform
import subprocess
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
# What benchmarks write: a run that leaves these changed still measured a clean tree.
OUTPUTS = ("bench/results/", "docs/bench/")


def cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def memory_gib() -> float | None:
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemTotal:"):
                return round(int(line.split()[1]) / 2**20, 1)
    except OSError:
        pass
    return None


def os_name() -> str:
    try:
        for line in Path("/etc/os-release").read_text().splitlines():
            if line.startswith("PRETTY_NAME="):
                return line.split("=", 1)[1].strip().strip('"')
    except OSError:
        pass
    return platform.system()


def loadavg() -> str | None:
    try:
        return " ".join(Path("/proc/loadavg").read_text().split()[:3])
    except OSError:
        return None


def vulkan_driver() -> dict[str, Any]:
    """Device 0 as its driver describes it, probed without any layer (harness/driver.py)."""
    from harness.driver import probe

    d = probe()
    return {
        "device": d.device,
        "driver": d.driver_name,
        "driver_info": d.driver_info,
        "api_version": d.api_version,
    }


def describe(vulkan: bool = False) -> dict[str, Any]:
    """The machine; with `vulkan`, its Vulkan device and driver too."""
    uname = platform.uname()
    machine: dict[str, Any] = {
        "cpu": cpu_model(),
        "cores": os.cpu_count(),
        "memory_gib": memory_gib(),
        "os": os_name(),
        "kernel": f"{uname.system} {uname.release} {uname.machine}",
        "python": platform.python_version(),
        "loadavg": loadavg(),
    }
    if vulkan:
        machine["vulkan"] = vulkan_driver()
    return machine


def _git(*args: str) -> str | None:
    try:
        out = subprocess.run(
            ["git", "-C", str(REPO), *args], capture_output=True, text=True, check=True
        )
    except (OSError, subprocess.CalledProcessError):
        return None
    return out.stdout


def source() -> dict[str, Any]:
    """The commit measured and whether the tree matched it. Changes under OUTPUTS do not count
    (the previous benchmark's results, not yet committed, change nothing that is measured).
    Without git (a copied tree), both are unknown: None."""
    # A tree copied to a GPU machine has no history of its own (what git finds there may be a
    # stale copy): bench/device/prepare.sh wrote down the commit its bundle was built from.
    bundle = Path(__file__).resolve().parent.parent / ".device" / "source.json"
    if os.environ.get("VKSCOPE_DEVICE_BUNDLE") and bundle.exists():
        found: dict[str, Any] = json.loads(bundle.read_text())
        return found
    commit = _git("rev-parse", "HEAD")
    status = _git("status", "--porcelain", "--untracked-files=normal")
    if commit is None or status is None:
        return {"commit": None, "clean": None, "changed": []}
    changed = [
        line[3:] for line in status.splitlines() if not line[3:].startswith(OUTPUTS) and line
    ]
    return {"commit": commit.strip(), "clean": not changed, "changed": changed[:20]}


def git_revision() -> str | None:
    """The short commit, with -dirty for a tree with changes (as `git describe` says it)."""
    out = _git("describe", "--always", "--dirty")
    return out.strip() if out else None
