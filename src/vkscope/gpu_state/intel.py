"""Intel GPUs through the i915 and xe drivers' sysfs files.

i915: the card folder `drm/cardN` has `gt/gt0/rps_act_freq_mhz` (older kernels:
`gt_act_freq_mhz`), the actual graphics clock in MHz, with `rps_RPn_freq_mhz` and
`rps_RP0_freq_mhz` its range, and from graphics version 11 `throttle_reason_*` files, 0 or 1
each (pl1, pl2, pl4, thermal, prochot, ratl, vr_thermalert, vr_tdc; `status` is their OR).
xe: the PCI device folder has `tile0/gt0/freq0/act_freq` (MHz), `rpn_freq`, `rp0_freq`, and
`freq0/throttle/reason_*` files. Discrete GPUs of both have a hwmon with `energy1_input`
(microjoules) and `power1_max` (the sustained power limit, microwatts); neither driver gives a
power reading (power is the energy counter's slope), a memory clock or a utilization in sysfs.
"""

from __future__ import annotations

import contextlib
from pathlib import Path
from typing import Final

from . import sysfs
from .metrics import GpuInfo, GpuSource, NoGpu, Read, probe_reads

# The reasons both drivers name, in their documentation's order; others follow by name.
_REASONS: Final = ("pl1", "pl2", "pl4", "thermal", "prochot", "ratl", "vr_thermalert", "vr_tdc")


def _throttle(folder: Path, prefix: str) -> tuple[tuple[str, ...], Read | None]:
    """The reasons of `folder`'s `PREFIXname` files and a reader of them as a bitmask."""
    try:
        names = [p.name[len(prefix) :] for p in folder.iterdir() if p.name.startswith(prefix)]
    except OSError:
        return (), None
    names = [n for n in names if n != "status"]
    ordered = tuple(n for n in _REASONS if n in names) + tuple(
        sorted(n for n in names if n not in _REASONS)
    )
    if not ordered:
        return (), None
    files = [folder / f"{prefix}{n}" for n in ordered]

    def read() -> int:
        mask = 0
        for bit, file in enumerate(files):
            if sysfs.read_int(file):
                mask |= 1 << bit
        return mask

    return ordered, read


def open_intel(device: Path, pci: str, pci_id: str, driver: str) -> GpuSource:
    reads: dict[str, Read] = {}
    origins: dict[str, str] = {}
    absent = {
        "sm_clock_mhz": "NVIDIA GPUs only",
        "memory_clock_mhz": f"{driver} gives no memory clock in sysfs",
        "power_w": f"{driver} gives no power reading: power is the energy counter's slope",
        "utilization_pct": f"{driver} gives no utilization in sysfs (its engines' busyness "
        "is in perf's PMU)",
    }
    reasons: tuple[str, ...] = ()
    throttle: Read | None = None
    low = high = None
    if driver == "xe":
        freq = device / "tile0" / "gt0" / "freq0"
        act, low, high = freq / "act_freq", freq / "rpn_freq", freq / "rp0_freq"
        reasons, throttle = _throttle(freq / "throttle", "reason_")
        where = freq / "throttle"
        steady = (
            f"write the same MHz into {freq / 'max_freq'} and {freq / 'min_freq'} (as root; "
            "raise max first when raising, lower min first when lowering)"
        )
    else:
        card = sysfs.drm_card(device)
        if card is None:
            raise NoGpu(f"the i915 device {device} has no drm/cardN folder")
        gt = card / "gt" / "gt0"
        act = sysfs.first_existing(gt / "rps_act_freq_mhz", card / "gt_act_freq_mhz") or (
            gt / "rps_act_freq_mhz"
        )
        low = sysfs.first_existing(gt / "rps_RPn_freq_mhz", card / "gt_RPn_freq_mhz")
        high = sysfs.first_existing(gt / "rps_RP0_freq_mhz", card / "gt_RP0_freq_mhz")
        reasons, throttle = _throttle(gt, "throttle_reason_")
        where = gt
        steady = (
            f"write the same MHz into {card / 'gt_max_freq_mhz'} and "
            f"{card / 'gt_min_freq_mhz'} (as root; raise max first when raising, lower min "
            "first when lowering)"
        )
    if act.exists():
        reads["graphics_clock_mhz"] = sysfs.int_read(act)
        origins["graphics_clock_mhz"] = str(act)
    else:
        absent["graphics_clock_mhz"] = f"no {act}"
    if throttle is not None:
        reads["throttle"] = throttle
        origins["throttle"] = f"{where} ({', '.join(reasons)})"
    else:
        absent["throttle"] = f"no throttle reason files in {where}"
    hw = sysfs.hwmon(device)
    limit = None
    if hw is None:
        absent["energy_mj"] = "no hwmon: an integrated GPU's energy is in the CPU package's"
        absent["temperature_c"] = "no hwmon"
    else:
        if (hw / "energy1_input").exists():
            reads["energy_mj"] = sysfs.int_read(hw / "energy1_input", 1e-3)
            origins["energy_mj"] = str(hw / "energy1_input")
        else:
            absent["energy_mj"] = f"no energy1_input in {hw}"
        temps = sorted(p for p in hw.glob("temp*_input"))
        if temps:
            reads["temperature_c"] = sysfs.int_read(temps[0], 1e-3)
            origins["temperature_c"] = str(temps[0])
        else:
            absent["temperature_c"] = f"no temp*_input in {hw}"
        with contextlib.suppress(OSError, ValueError):
            limit = sysfs.read_int(hw / "power1_max") * 1e-6 or None
    offered, absent = probe_reads(reads, absent)
    span = None
    with contextlib.suppress(OSError, ValueError, TypeError):
        span = (sysfs.read_int(low), sysfs.read_int(high))  # type: ignore[arg-type]
    info = GpuInfo(
        pci=pci,
        vendor="intel",
        driver=driver,
        name=f"Intel GPU {pci_id.lower()}" if pci_id else "Intel GPU",
        location=str(device),
        origins={m: origins[m] for m in offered},
        absent=absent,
        throttle_reasons=reasons if "throttle" in offered else (),
        graphics_clock_range=span,
        power_limit_w=limit,
        steady_clocks=steady,
    )
    return GpuSource(info, offered)
