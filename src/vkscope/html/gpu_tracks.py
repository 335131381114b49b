"""The page's clock and power tracks under the timeline (docs/gpu-state.md): per GPU the host
sampled, its graphics clock and its power over the captured work, on the timeline's own axis.

The timeline's x is GPU time made relative to a base (page.py). Samples are on CLOCK_MONOTONIC,
so they share that axis only where the device's GPU times are on CLOCK_MONOTONIC too; a GPU
whose devices have their own clock gets no track, and the page says why.
"""

from __future__ import annotations

from typing import Any, Final

from ..capture import Capture, Device
from ..capture.read.gpu_join import GpuJoin

# Metric -> what the page calls it and its unit, in the order the tracks are drawn.
TRACKS: Final = {"graphics_clock_mhz": ("graphics clock", "MHz"), "power_w": ("power", "W")}
_COLUMN: Final = {"graphics_clock_mhz": 3, "power_w": 6}


def gpu_tracks(
    capture: Capture,
    devices: dict[tuple[int, int], Device],
    bases: dict[tuple[int, int | None], int],
    extent: tuple[int, int] | None,
) -> dict[str, Any]:
    """{"tracks": [...], "notes": [...]}: each track's samples as times relative to its
    device's base (covering `extent`, absolute ns, and one sample either side), and why a
    sampled GPU has none."""
    join = GpuJoin(capture)
    tracks: list[dict[str, Any]] = []
    notes = [f"device {d.device}: GPU not sampled: {d.reason}" for d in join.unmatched()]
    if not join.gpus:
        return {"tracks": tracks, "notes": notes}
    for gpu in join.gpus.values():
        on_axis = [
            key
            for key in bases
            if join.gpu_of(key[0], key[1]) is gpu
            and (dev := devices.get((key[0], key[1] or 0))) is not None
            and dev.clock_domain == "clock_monotonic"
        ]
        if not on_axis or extent is None:
            why = "no GPU times on CLOCK_MONOTONIC to draw its samples against"
            notes.append(f"GPU {gpu.pci}: {why}")
            continue
        base = bases[on_axis[0]]
        samples = join.samples(gpu, extent[0], extent[1])
        for metric, (name, unit) in TRACKS.items():
            if not gpu.offers(metric):
                continue
            column = _COLUMN[metric]
            points = [(s.t_ns - base, s[column]) for s in samples if s[column] is not None]
            tracks.append({
                "name": f"{name} ({unit})",
                "gpu": f"{gpu.name or '?'} {gpu.pci}",
                "metric": metric,
                "unit": unit,
                "t": [t for t, _ in points],
                "v": [v for _, v in points],
            })  # fmt: skip
    return {"tracks": tracks, "notes": notes}
