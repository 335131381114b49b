"""AMD GPUs through the amdgpu driver's sysfs files (the kernel's amdgpu documentation, "GPU
Power/Thermal Controls and Monitoring").

Device folder: `gpu_busy_percent`, `pp_dpm_sclk` and `pp_dpm_mclk` (DPM levels, the current
one marked `*`), `power_dpm_force_performance_level`. Its hwmon: `freq1_input` (sclk) and
`freq2_input` (mclk) in Hz, `power1_input` (instantaneous, newer GPUs) or `power1_average` in
microwatts, `power1_cap`, `temp1_input` (edge) in millidegrees. amdgpu has no energy counter
in hwmon, and says why its clocks are limited only in the binary `gpu_metrics` table, whose
layout changes with each GPU generation: vkscope reads neither.
"""

from __future__ import annotations

import contextlib
from pathlib import Path

from . import sysfs
from .metrics import GpuInfo, GpuSource, Read, probe_reads


def open_amdgpu(device: Path, pci: str, pci_id: str) -> GpuSource:
    hw = sysfs.hwmon(device)
    reads: dict[str, Read] = {}
    origins: dict[str, str] = {}
    absent = {
        "sm_clock_mhz": "NVIDIA GPUs only",
        "energy_mj": "amdgpu's hwmon has no energy counter: energy is the power integrated",
        "throttle": "amdgpu gives throttle reasons only in its binary gpu_metrics table, "
        "which vkscope does not read",
    }

    def clock(metric: str, channel: str, label: str, table: str) -> None:
        file = hw / f"{channel}_input" if hw else None
        if file is not None and file.exists() and sysfs.hwmon_label(hw, channel) in (label, None):  # type: ignore[arg-type]
            reads[metric] = sysfs.int_read(file, 1e-6)
            origins[metric] = str(file)
        elif (device / table).exists():
            dpm = device / table
            reads[metric] = lambda: sysfs.dpm_current_mhz(dpm)
            origins[metric] = f"{dpm} (the current DPM level)"
        else:
            absent[metric] = f"no {channel}_input in hwmon, no {table}"

    clock("graphics_clock_mhz", "freq1", "sclk", "pp_dpm_sclk")
    clock("memory_clock_mhz", "freq2", "mclk", "pp_dpm_mclk")
    if hw is None:
        for metric in ("power_w", "temperature_c"):
            absent[metric] = f"no hwmon folder under {device}"
    else:
        power = sysfs.first_existing(hw / "power1_input", hw / "power1_average")
        if power is None:
            absent["power_w"] = f"neither power1_input nor power1_average in {hw}"
        else:
            reads["power_w"] = sysfs.int_read(power, 1e-6)
            origins["power_w"] = str(power)
        if (hw / "temp1_input").exists():
            reads["temperature_c"] = sysfs.int_read(hw / "temp1_input", 1e-3)
            origins["temperature_c"] = f"{hw / 'temp1_input'} ({sysfs.hwmon_label(hw, 'temp1')})"
        else:
            absent["temperature_c"] = f"no temp1_input in {hw}"
    busy = device / "gpu_busy_percent"
    if busy.exists():
        reads["utilization_pct"] = sysfs.int_read(busy)
        origins["utilization_pct"] = str(busy)
    else:
        absent["utilization_pct"] = f"no {busy.name} in {device}"
    offered, absent = probe_reads(reads, absent)
    levels: list[int] = []
    with contextlib.suppress(OSError, ValueError):
        levels = sysfs.dpm_levels_mhz(device / "pp_dpm_sclk")
    limit = None
    if hw is not None:
        with contextlib.suppress(OSError, ValueError):
            limit = sysfs.read_int(hw / "power1_cap") * 1e-6
    level_file = device / "power_dpm_force_performance_level"
    info = GpuInfo(
        pci=pci,
        vendor="amd",
        driver="amdgpu",
        name=f"AMD GPU {pci_id.lower()}" if pci_id else "AMD GPU",
        location=str(device),
        origins={m: origins[m] for m in offered},
        absent=absent,
        graphics_clock_range=(min(levels), max(levels)) if levels else None,
        power_limit_w=limit,
        steady_clocks=(
            f"echo profile_standard | sudo tee {level_file} (the clocks AMD set for "
            "profiling; `auto` gives the GPU back its own)"
        ),
    )
    return GpuSource(info, offered)
