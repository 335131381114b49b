"""What the host samples of a GPU, and how a GPU source describes itself.

Every source gives the same metrics in the same units, or says why it does not have one; the
capture stores one row per sample with a column per metric (docs/gpu-state.md).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Final


@dataclass(frozen=True, slots=True)
class Metric:
    name: str  # also the column of gpu_samples
    unit: str
    description: str


METRICS: Final = (
    Metric("graphics_clock_mhz", "MHz", "graphics (shader core) clock"),
    Metric("sm_clock_mhz", "MHz", "streaming multiprocessor clock (NVIDIA)"),
    Metric("memory_clock_mhz", "MHz", "memory clock"),
    Metric("power_w", "W", "board power as the GPU reports it"),
    Metric("energy_mj", "mJ", "the GPU's energy counter: a running total"),
    Metric("temperature_c", "C", "GPU temperature"),
    Metric("utilization_pct", "%", "share of the last interval the GPU was busy"),
    Metric("throttle", "flags", "clock event (throttle) reasons, one bit each"),
)
METRIC_NAMES: Final = tuple(m.name for m in METRICS)

# Clock event reasons that say nothing is wrong: the GPU idles, or someone set its clocks.
# Every other reason a source names lowers the clocks below what the GPU would run at.
NOT_THROTTLING: Final = frozenset(
    {"gpu_idle", "applications_clocks_setting", "sync_boost", "display_clock_setting"}
)

Value = int | float
Read = Callable[[], Value]


@dataclass(frozen=True, slots=True)
class GpuInfo:
    """One sampled GPU, as its source found it when it was opened."""

    pci: str  # domain:bus:device.function, as sysfs writes it: 0000:03:00.0
    vendor: str  # nvidia, amd, intel
    driver: str  # nvml, amdgpu, i915, xe: what the values are read through
    name: str
    location: str  # where: NVML's bus id, or the sysfs folder
    origins: dict[str, str]  # metric -> what it is read from (a file, an NVML call)
    absent: dict[str, str]  # metric -> why this GPU does not give it
    throttle_reasons: tuple[str, ...] = ()  # bit i of `throttle` is reason i
    graphics_clock_range: tuple[int, int] | None = None  # MHz, what the GPU allows
    power_limit_w: float | None = None
    steady_clocks: str | None = None  # how to hold this GPU's clocks steady


@dataclass(slots=True)
class GpuSource:
    """An opened GPU: `reads` gives each metric it offers, in METRIC_NAMES order."""

    info: GpuInfo
    reads: dict[str, Read]
    close: Callable[[], None] = field(default=lambda: None)


class NoGpu(Exception):
    """A Vulkan device whose GPU cannot be sampled; the message says why."""


def probe_reads(
    candidates: dict[str, Read], absent: dict[str, str]
) -> tuple[dict[str, Read], dict[str, str]]:
    """The candidates that answer once (the rest added to `absent` with the error), and
    `absent`, in METRIC_NAMES order."""
    offered: dict[str, Read] = {}
    for name in METRIC_NAMES:
        read = candidates.get(name)
        if read is None:
            continue
        try:
            read()
        except (OSError, ValueError) as exc:
            absent.setdefault(name, f"reading it failed: {describe_error(exc)}")
        else:
            offered[name] = read
    ordered = {n: absent[n] for n in METRIC_NAMES if n in absent and n not in offered}
    return offered, ordered


def describe_error(exc: BaseException) -> str:
    if isinstance(exc, OSError) and exc.strerror:
        where = f" ({exc.filename})" if exc.filename else ""
        return f"{exc.strerror}{where}"
    return str(exc) or type(exc).__name__
