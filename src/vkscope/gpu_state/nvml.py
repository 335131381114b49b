"""NVIDIA GPUs through NVML, with NVIDIA's maintained binding (nvidia-ml-py, `pynvml`).

The GPU is found by its PCI address (nvmlDeviceGetHandleByPciBusId_v2), never by index. Power
is NVML's instantaneous power field where the GPU has it (NVML_FI_DEV_POWER_INSTANT), else
nvmlDeviceGetPowerUsage, which NVIDIA documents as averaged over one second on Ampere and later
GPUs (GA100 aside); energy is nvmlDeviceGetTotalEnergyConsumption (mJ since the driver loaded,
Volta and later). NVML updates neither at every read: the capture's readers measure how often
the values changed and state that as their resolution (docs/gpu-state.md).
"""

from __future__ import annotations

import contextlib
import threading
from typing import Any, Final

from .metrics import GpuInfo, GpuSource, NoGpu, Read, probe_reads

# NVML's clock event reasons (nvmlClocksEventReason*), bit by bit.
THROTTLE_REASONS: Final = (
    "gpu_idle",
    "applications_clocks_setting",
    "sw_power_cap",
    "hw_slowdown",
    "sync_boost",
    "sw_thermal_slowdown",
    "hw_thermal_slowdown",
    "hw_power_brake_slowdown",
    "display_clock_setting",
)

_lock = threading.Lock()  # NVML counts its inits; the binding's first load is not locked


def _nvml() -> Any:
    try:
        import pynvml
    except ImportError as exc:  # a dependency, but a broken environment says so
        raise NoGpu(f"the NVML binding (nvidia-ml-py) is not installed: {exc}") from None
    return pynvml


def _text(value: object) -> str:
    return value.decode() if isinstance(value, bytes) else str(value)


def open_nvml(pci: str) -> GpuSource:
    nv = _nvml()
    with _lock:
        try:
            nv.nvmlInit()
        except nv.NVMLError as exc:
            raise NoGpu(f"NVML cannot start: {exc}") from None
    try:
        return _open(nv, pci)
    except BaseException:
        _shutdown(nv)
        raise


def _shutdown(nv: Any) -> None:
    with _lock, contextlib.suppress(Exception):
        nv.nvmlShutdown()


def _open(nv: Any, pci: str) -> GpuSource:
    try:
        handle = nv.nvmlDeviceGetHandleByPciBusId(pci)
    except nv.NVMLError as exc:
        raise NoGpu(f"NVML knows no GPU at {pci}: {exc}") from None

    def clock(kind: int) -> Read:
        return lambda: nv.nvmlDeviceGetClockInfo(handle, kind)

    def instant_power() -> float:
        field = nv.nvmlDeviceGetFieldValues(handle, [nv.NVML_FI_DEV_POWER_INSTANT])[0]
        if field.nvmlReturn != nv.NVML_SUCCESS:
            raise ValueError(str(nv.NVMLError(field.nvmlReturn)))
        return float(field.value.uiVal) * 1e-3

    def throttle() -> int:
        get = getattr(nv, "nvmlDeviceGetCurrentClocksEventReasons", None)
        return int((get or nv.nvmlDeviceGetCurrentClocksThrottleReasons)(handle))

    candidates: dict[str, Read] = {
        "graphics_clock_mhz": clock(nv.NVML_CLOCK_GRAPHICS),
        "sm_clock_mhz": clock(nv.NVML_CLOCK_SM),
        "memory_clock_mhz": clock(nv.NVML_CLOCK_MEM),
        "power_w": instant_power,
        "energy_mj": lambda: int(nv.nvmlDeviceGetTotalEnergyConsumption(handle)),
        "temperature_c": lambda: int(nv.nvmlDeviceGetTemperature(handle, nv.NVML_TEMPERATURE_GPU)),
        "utilization_pct": lambda: int(nv.nvmlDeviceGetUtilizationRates(handle).gpu),
        "throttle": throttle,
    }
    origins = {
        "graphics_clock_mhz": "nvmlDeviceGetClockInfo(NVML_CLOCK_GRAPHICS)",
        "sm_clock_mhz": "nvmlDeviceGetClockInfo(NVML_CLOCK_SM)",
        "memory_clock_mhz": "nvmlDeviceGetClockInfo(NVML_CLOCK_MEM)",
        "power_w": "nvmlDeviceGetFieldValues(NVML_FI_DEV_POWER_INSTANT)",
        "energy_mj": "nvmlDeviceGetTotalEnergyConsumption",
        "temperature_c": "nvmlDeviceGetTemperature(NVML_TEMPERATURE_GPU)",
        "utilization_pct": "nvmlDeviceGetUtilizationRates (over the last 1/6 s to 1 s)",
        "throttle": "nvmlDeviceGetCurrentClocksEventReasons",
    }
    offered, absent = _probe(nv, candidates, {})
    if "power_w" not in offered:
        averaged: Read = lambda: nv.nvmlDeviceGetPowerUsage(handle) * 1e-3  # noqa: E731
        got, _ = _probe(nv, {"power_w": averaged}, {})
        if got:
            offered = {**offered, **got}
            offered = {n: offered[n] for n in candidates if n in offered}
            absent.pop("power_w", None)
            origins["power_w"] = "nvmlDeviceGetPowerUsage (averaged over 1 s on Ampere and later)"
    low = high = None
    with contextlib.suppress(nv.NVMLError):
        high = int(nv.nvmlDeviceGetMaxClockInfo(handle, nv.NVML_CLOCK_GRAPHICS))
        memory = max(nv.nvmlDeviceGetSupportedMemoryClocks(handle))
        low = int(min(nv.nvmlDeviceGetSupportedGraphicsClocks(handle, memory)))
    limit = None
    with contextlib.suppress(nv.NVMLError):
        limit = nv.nvmlDeviceGetEnforcedPowerLimit(handle) * 1e-3
    base = None
    with contextlib.suppress(nv.NVMLError):
        base = int(nv.nvmlDeviceGetDefaultApplicationsClock(handle, nv.NVML_CLOCK_GRAPHICS))
    lock = f"{base},{base}" if base else "MHZ,MHZ"
    info = GpuInfo(
        pci=pci,
        vendor="nvidia",
        driver="nvml",
        name=_text(nv.nvmlDeviceGetName(handle)),
        location=f"NVML {_text(nv.nvmlDeviceGetPciInfo(handle).busId)}",
        origins={m: origins[m] for m in offered},
        absent=absent,
        throttle_reasons=THROTTLE_REASONS if "throttle" in offered else (),
        graphics_clock_range=(low, high) if low is not None and high is not None else None,
        power_limit_w=limit,
        steady_clocks=(
            f"sudo nvidia-smi -i {pci} --lock-gpu-clocks={lock} (the base clock; "
            "--reset-gpu-clocks undoes it; power and thermal limits can still lower it)"
        ),
    )
    return GpuSource(info, offered, close=lambda: _shutdown(nv))


def _probe(
    nv: Any, candidates: dict[str, Read], absent: dict[str, str]
) -> tuple[dict[str, Read], dict[str, str]]:
    """probe_reads, with NVML's errors read as failures too, and a binding that lacks a call
    or a constant (an older nvidia-ml-py): that metric is absent, the others are read."""

    def guarded(read: Read) -> Read:
        def call() -> int | float:
            try:
                return read()
            except nv.NVMLError as exc:
                raise ValueError(str(exc)) from None
            except (AttributeError, TypeError) as exc:
                raise ValueError(f"this nvidia-ml-py cannot ask it ({exc})") from None

        return call

    return probe_reads({k: guarded(v) for k, v in candidates.items()}, absent)
