"""Sysfs trees of GPUs in the kernel's own formats, for the host's GPU sampler to read (vkscope
reads /sys, or the folder VKSCOPE_SYSFS_ROOT names).

Each GPU is `bus/pci/devices/ADDRESS` with the files its driver makes: amdgpu (a discrete
Radeon: DPM tables, hwmon with clocks, power and temperature), i915 (an integrated GPU: its
card's gt folder with the actual frequency and throttle reasons, no hwmon) and xe (a discrete
Arc: tile0/gt0/freq0 and a hwmon with an energy counter). Values are written as the kernel
writes them: text with a newline, hwmon in micro units and millidegrees.
"""

from __future__ import annotations

import os
from pathlib import Path

AMD = "0000:03:00.0"
INTEL_I915 = "0000:00:02.0"
INTEL_XE = "0000:04:00.0"
NO_DRIVER = "0000:05:00.0"


def _write(path: Path, text: str) -> None:
    """Writes the file whole at once, as a sysfs read sees it (never half written)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    new = path.with_name(f".{path.name}.new")  # a name no source looks for
    new.write_text(text if text.endswith("\n") else text + "\n")
    os.replace(new, path)


def device(root: Path, pci: str) -> Path:
    return root / "bus" / "pci" / "devices" / pci


def _uevent(folder: Path, driver: str | None, pci_id: str, pci: str) -> None:
    lines = [f"DRIVER={driver}"] if driver else []
    lines += [
        "PCI_CLASS=30000",
        f"PCI_ID={pci_id}",
        "PCI_SUBSYS_ID=1DA2:E471",
        f"PCI_SLOT_NAME={pci}",
        f"MODALIAS=pci:v0000{pci_id[:4]}d0000{pci_id[5:]}sv00001DA2sd0000E471bc03sc00i00",
    ]
    _write(folder / "uevent", "\n".join(lines))


def amdgpu(root: Path, pci: str = AMD, *, sclk_mhz: int = 2482, power_uw: int = 48_000_000) -> Path:
    """A discrete amdgpu GPU (Navi 31): hwmon1 with freq1/freq2 (Hz), power1_average (µW)."""
    d = device(root, pci)
    _uevent(d, "amdgpu", "1002:744C", pci)
    _write(d / "gpu_busy_percent", "37")
    _write(d / "power_dpm_force_performance_level", "auto")
    _write(d / "pp_dpm_sclk", "0: 500Mhz \n1: 2482Mhz *\n2: 2900Mhz \n")
    _write(d / "pp_dpm_mclk", "0: 96Mhz \n1: 456Mhz \n2: 1249Mhz *\n")
    hw = d / "hwmon" / "hwmon1"
    _write(hw / "name", "amdgpu")
    set_amd_clock(root, pci, sclk_mhz)
    _write(hw / "freq1_label", "sclk")
    _write(hw / "freq2_input", "1249000000")
    _write(hw / "freq2_label", "mclk")
    _write(hw / "power1_average", str(power_uw))
    _write(hw / "power1_cap", "303000000")
    _write(hw / "temp1_input", "51000")
    _write(hw / "temp1_label", "edge")
    (d / "drm" / "card1").mkdir(parents=True, exist_ok=True)
    return d


def set_amd_clock(root: Path, pci: str, mhz: int) -> None:
    _write(device(root, pci) / "hwmon" / "hwmon1" / "freq1_input", str(mhz * 1_000_000))


def set_amd_power(root: Path, pci: str, watts: float) -> None:
    _write(device(root, pci) / "hwmon" / "hwmon1" / "power1_average", str(round(watts * 1e6)))


def i915(root: Path, pci: str = INTEL_I915, *, mhz: int = 1300, pl1: int = 0) -> Path:
    """An integrated i915 GPU (Alder Lake): drm/card0/gt/gt0 with the actual frequency and the
    throttle reason files; no hwmon (its energy is the CPU package's)."""
    d = device(root, pci)
    _uevent(d, "i915", "8086:46A6", pci)
    card = d / "drm" / "card0"
    gt = card / "gt" / "gt0"
    _write(gt / "rps_act_freq_mhz", str(mhz))
    _write(gt / "rps_cur_freq_mhz", str(mhz))
    _write(gt / "rps_RPn_freq_mhz", "100")
    _write(gt / "rps_RP0_freq_mhz", "1400")
    for reason in ("pl1", "pl2", "pl4", "prochot", "ratl", "thermal", "vr_tdc", "vr_thermalert"):
        _write(gt / f"throttle_reason_{reason}", str(pl1 if reason == "pl1" else 0))
    _write(gt / "throttle_reason_status", str(pl1))
    _write(card / "gt_max_freq_mhz", "1400")
    _write(card / "gt_min_freq_mhz", "100")
    (d / "drm" / "card0-eDP-1").mkdir(parents=True, exist_ok=True)
    return d


def xe(root: Path, pci: str = INTEL_XE, *, mhz: int = 2850, energy_uj: int = 81_234_567) -> Path:
    """A discrete xe GPU (Battlemage): tile0/gt0/freq0 and a hwmon with energy1_input (µJ)."""
    d = device(root, pci)
    _uevent(d, "xe", "8086:E20B", pci)
    freq = d / "tile0" / "gt0" / "freq0"
    _write(freq / "act_freq", str(mhz))
    _write(freq / "cur_freq", str(mhz))
    _write(freq / "rpn_freq", "400")
    _write(freq / "rp0_freq", "2850")
    _write(freq / "min_freq", "400")
    _write(freq / "max_freq", "2850")
    for reason in ("pl1", "pl2", "pl4", "prochot", "ratl", "thermal", "vr_tdc", "vr_thermalert"):
        _write(freq / "throttle" / f"reason_{reason}", "0")
    _write(freq / "throttle" / "status", "0")
    hw = d / "hwmon" / "hwmon4"
    _write(hw / "name", "xe")
    _write(hw / "energy1_input", str(energy_uj))
    _write(hw / "power1_max", "190000000")
    _write(hw / "temp2_input", "44000")
    _write(hw / "temp2_label", "pkg")
    return d


def unbound(root: Path, pci: str = NO_DRIVER) -> Path:
    """A PCI display device no driver is bound to."""
    d = device(root, pci)
    _uevent(d, None, "10DE:2684", pci)
    return d
