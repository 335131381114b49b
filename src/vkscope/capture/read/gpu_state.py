"""The GPU's state as the host sampled it during a capture (schema 9 on; docs/gpu-state.md): each
GPU sampled and what it offers, which Vulkan device runs on which GPU, and the samples on
CLOCK_MONOTONIC. An older capture has none of it (compat.py reads its tables as empty).

Records and the SQL that reads them; joining samples to frames and workloads is gpu_join.py's.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any, Final, NamedTuple

import msgspec

from ...gpu_state.sampler import DeviceGpu, Lost
from ...gpu_state.sampler import SamplerSummary as GpuSampling  # the sampler's own account

__all__ = ["DeviceGpu", "Gpu", "GpuSample", "GpuSampling", "Lost"]

SAMPLING_KEY: Final = "gpu_sampling"  # the meta key of the sampler's summary

_decode_object = msgspec.json.Decoder(dict[str, Any]).decode
_decode_names = msgspec.json.Decoder(list[str]).decode


class GpuSample(NamedTuple):
    """One sample of one GPU: CLOCK_MONOTONIC halfway through its reads (`read_ns` long), then
    a value per metric (None: not offered, or its read failed this time)."""

    gpu: int
    t_ns: int
    read_ns: int
    graphics_clock_mhz: float | None
    sm_clock_mhz: float | None
    memory_clock_mhz: float | None
    power_w: float | None
    energy_mj: float | None  # the GPU's running total: differences mean something
    temperature_c: float | None
    utilization_pct: float | None
    throttle: int | None  # one bit per Gpu.throttle_reasons


@dataclass(frozen=True, slots=True)
class Gpu:
    """A GPU the host sampled."""

    id: int
    pci: str  # domain:bus:device.function
    vendor: str  # nvidia, amd, intel
    driver: str  # what the values were read through: nvml, amdgpu, i915, xe
    name: str | None
    location: str | None  # NVML's bus id, or the sysfs folder
    interval_ns: int  # how often it was sampled
    origins: dict[str, str]  # metric -> what it was read from
    absent: dict[str, str]  # metric -> why this GPU does not give it
    lost: dict[str, Lost]
    throttle_reasons: tuple[str, ...]  # bit i of GpuSample.throttle is reason i
    graphics_clock_range: tuple[int, int] | None  # MHz, what the GPU allows
    power_limit_w: float | None
    steady_clocks: str | None  # how to hold this GPU's clocks steady

    def offers(self, metric: str) -> bool:
        return metric in self.origins

    def reasons(self, mask: int) -> list[str]:
        """The names of the throttle bits set in `mask`."""
        names = self.throttle_reasons
        return [
            names[bit] if bit < len(names) else f"bit {bit}"
            for bit in range(max(mask.bit_length(), 0))
            if mask >> bit & 1
        ]

    def as_json(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "pci": self.pci,
            "vendor": self.vendor,
            "driver": self.driver,
            "name": self.name,
            "interval_ns": self.interval_ns,
            "offered": sorted(self.origins),
            "absent": self.absent,
            "lost": {
                k: {"first_ns": v.first_ns, "reason": v.reason, "failures": v.failures}
                for k, v in self.lost.items()
            },
            "graphics_clock_range_mhz": list(self.graphics_clock_range)
            if self.graphics_clock_range
            else None,
            "power_limit_w": self.power_limit_w,
            "steady_clocks": self.steady_clocks,
        }


_GPUS: Final = (
    "SELECT id, pci, vendor, driver, name, location, interval_ns, origins, absent, lost, "
    "throttle_reasons, graphics_clock_min_mhz, graphics_clock_max_mhz, power_limit_w, "
    "steady_clocks FROM gpus ORDER BY id"
)
DEVICE_GPUS: Final = (
    "SELECT process, device, gpu, pci, matched_by, reason FROM device_gpus ORDER BY process, device"
)
SAMPLES: Final = (
    "SELECT gpu, t_ns, read_ns, graphics_clock_mhz, sm_clock_mhz, memory_clock_mhz, power_w, "
    "energy_mj, temperature_c, utilization_pct, throttle FROM gpu_samples "
    "WHERE gpu = ? AND t_ns >= ? AND t_ns <= ? ORDER BY t_ns"
)


def gpu_of(row: tuple[Any, ...]) -> Gpu:
    """A row of _GPUS as a record; msgspec.DecodeError or TypeError for damaged JSON."""
    lost_json = _decode_object(row[9]) if row[9] else {}
    lost = {
        name: Lost(int(v["first_ns"]), str(v["reason"]), int(v["failures"]))
        for name, v in lost_json.items()
    }
    low, high = row[11], row[12]
    return Gpu(
        row[0], row[1], row[2], row[3], row[4], row[5], row[6],
        {str(k): str(v) for k, v in _decode_object(row[7]).items()},
        {str(k): str(v) for k, v in _decode_object(row[8]).items()},
        lost, tuple(_decode_names(row[10])),
        (int(low), int(high)) if low is not None and high is not None else None,
        row[13], row[14],
    )  # fmt: skip


def gpus_sql() -> str:
    return _GPUS


def samples(rows: Iterator[tuple[Any, ...]]) -> Iterator[GpuSample]:
    for r in rows:
        yield GpuSample(*r)


def sampling_of(text: object) -> GpuSampling | None:
    """meta.gpu_sampling as a record; None when absent; ValueError when it does not parse."""
    if text is None:
        return None
    if not isinstance(text, str):
        raise ValueError(f"meta {SAMPLING_KEY} is {text!r}, not JSON text")
    try:
        found = _decode_object(text)
        return GpuSampling(
            int(found["interval_ns"]), int(found["samples"]), int(found["late"]),
            int(found["cpu_ns"]), int(found["wall_ns"]),
        )  # fmt: skip
    except (msgspec.DecodeError, KeyError, TypeError, ValueError) as exc:
        raise ValueError(f"meta {SAMPLING_KEY} does not parse ({exc})") from None
