"""What the host's GPU sampler hands the capture (gpu_state.GpuStateBatch) as rows of `gpus`,
`device_gpus` and `gpu_samples`, and the sampler's summary as the meta key `gpu_sampling`.

The sampler runs on its own thread; the capture server takes its batches on the capture thread
(server.py), so they are committed with the next batch of messages like everything else.
"""

from __future__ import annotations

from typing import Any, Final

import msgspec

from ...gpu_state import METRIC_NAMES, GpuRow, GpuStateBatch
from ..schema import storable

SQL: Final = {
    "gpus": "INSERT OR REPLACE INTO gpus VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
    "device_gpus": "INSERT OR REPLACE INTO device_gpus VALUES (?,?,?,?,?,?)",
    "gpu_samples": f"INSERT INTO gpu_samples VALUES (?,?,?{',?' * len(METRIC_NAMES)})",
}
SAMPLING_KEY: Final = "gpu_sampling"  # meta: the sampler's summary, a JSON object

_encode = msgspec.json.encode


def _text(value: object) -> str:
    return _encode(value).decode()


def gpu_row(row: GpuRow) -> tuple[Any, ...]:
    info = row.info
    span = info.graphics_clock_range or (None, None)
    lost = {
        name: {"first_ns": lost.first_ns, "reason": lost.reason, "failures": lost.failures}
        for name, lost in row.lost.items()
    }
    return tuple(
        map(
            storable,
            (
                row.id, info.pci, info.vendor, info.driver, info.name, info.location,
                row.interval_ns, _text(info.origins), _text(info.absent),
                _text(lost) if lost else None, _text(list(info.throttle_reasons)), *span,
                info.power_limit_w, info.steady_clocks,
            ),
        )
    )  # fmt: skip


def rows_of(batch: GpuStateBatch) -> dict[str, list[tuple[Any, ...]]]:
    """The batch's rows, by table."""
    return {
        "gpus": [gpu_row(g) for g in batch.gpus],
        "device_gpus": [
            (d.process, d.device, d.gpu, d.pci, d.matched_by, d.reason) for d in batch.devices
        ],
        "gpu_samples": list(batch.samples),
    }


def sampling_meta(batch: GpuStateBatch) -> str | None:
    s = batch.summary
    if s is None:
        return None
    return _text(
        {
            "interval_ns": s.interval_ns,
            "samples": s.samples,
            "late": s.late,
            "cpu_ns": s.cpu_ns,
            "wall_ns": s.wall_ns,
        }
    )
