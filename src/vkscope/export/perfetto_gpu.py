"""The GPU's sampled state in a Perfetto trace (docs/gpu-state.md): per GPU the host sampled, a
track with a counter track per metric it offers (clocks, power, temperature, utilization, the
throttle reasons as their bit mask), one value per sample, on CLOCK_MONOTONIC like every CPU
time of the capture. The energy total is left out: its slope is the power track."""

from __future__ import annotations

from typing import Final

from ..capture import Capture
from ..capture.read.gpu_state import Gpu
from .perfetto_packets import MONOTONIC, Sequence, stable_id

# Metric -> (track name, unit), in the order the tracks are shown.
TRACKS: Final = {
    "graphics_clock_mhz": ("graphics clock", "MHz"),
    "sm_clock_mhz": ("SM clock", "MHz"),
    "memory_clock_mhz": ("memory clock", "MHz"),
    "power_w": ("power", "W"),
    "temperature_c": ("temperature", "°C"),
    "utilization_pct": ("utilization", "%"),
    "throttle": ("throttle reasons (bit mask)", ""),
}
_COLUMN: Final = {
    "graphics_clock_mhz": 3, "sm_clock_mhz": 4, "memory_clock_mhz": 5, "power_w": 6,
    "temperature_c": 8, "utilization_pct": 9, "throttle": 10,
}  # fmt: skip


def _description(gpu: Gpu) -> str:
    parts = [f"{gpu.driver}, sampled every {gpu.interval_ns / 1e6:g} ms"]
    if "throttle" in gpu.origins:
        bits = ", ".join(f"{1 << i}: {r}" for i, r in enumerate(gpu.throttle_reasons))
        parts.append(f"throttle bits: {bits}")
    if gpu.absent:
        parts.append("not offered: " + "; ".join(f"{k} ({v})" for k, v in gpu.absent.items()))
    return "; ".join(parts)


def write_gpu_state(capture: Capture, seq: Sequence) -> tuple[int, int]:
    """Writes every sampled GPU's tracks and samples; returns (tracks, samples) written."""
    tracks = samples = 0
    for gpu in capture.gpus():
        parent = stable_id("gpu state", gpu.id)
        seq.track(
            parent, f"GPU state: {gpu.name or gpu.pci} ({gpu.pci})", description=_description(gpu)
        )
        uuids: dict[str, int] = {}
        for metric, (name, unit) in TRACKS.items():
            if gpu.offers(metric):
                uuids[metric] = stable_id("gpu state", gpu.id, metric)
                seq.track(uuids[metric], name, parent, counter_unit=unit)
                tracks += 1
        columns = [(uuid, _COLUMN[metric]) for metric, uuid in uuids.items()]
        for sample in capture.gpu_samples(gpu.id):
            for uuid, column in columns:
                value = sample[column]
                if value is not None:
                    seq.counter(uuid, sample.t_ns, value, clock=MONOTONIC)
                    samples += 1
    return tracks, samples
