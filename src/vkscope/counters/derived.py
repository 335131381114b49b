"""Metrics derived from a workload's counters, where their inputs exist (docs/counters.md
defines each): what a graphics engineer reads first.

- overdraw: fragment shader invocations per pixel of the render area, times its layers (or views
  with multiview): 1.0 shades every pixel once; more is overdraw (or multisampling's extra
  samples with sample shading).
- vertices_per_primitive: input assembly vertices per primitive (3 for triangle lists, nearer 1
  for strips; lower is better reuse).
- clipping_ratio: primitives out of the clipper per primitive in (below 1: culled or clipped
  away; above 1: split by clipping).
- invocations_per_us: every shader invocation counted, per microsecond of GPU time (timed only).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

METRICS: Final = ("overdraw", "vertices_per_primitive", "clipping_ratio", "invocations_per_us")


def _ratio(num: float | None, den: float | None) -> float | None:
    if num is None or not den:
        return None
    return num / den


def _pixels(metadata: Mapping[str, Any]) -> int | None:
    width, height = metadata.get("width"), metadata.get("height")
    if not isinstance(width, int) or not isinstance(height, int):
        return None
    layers = metadata.get("layers")
    views = metadata.get("view_mask")
    count = max(
        layers if isinstance(layers, int) and layers > 0 else 1,
        bin(views).count("1") if isinstance(views, int) else 0,
    )
    return width * height * count


def derived_metrics(
    counters: Mapping[str, float], metadata: Mapping[str, Any], gpu_ns: int | None
) -> dict[str, float]:
    """The metrics whose inputs `counters` (and the workload's metadata and GPU time) have."""
    if not counters:
        return {}
    get = counters.get
    found = {
        "overdraw": _ratio(get("fragment_shader_invocations"), _pixels(metadata)),
        "vertices_per_primitive": _ratio(
            get("input_assembly_vertices"), get("input_assembly_primitives")
        ),
        "clipping_ratio": _ratio(get("clipping_primitives"), get("clipping_invocations")),
    }
    invocations = [v for k, v in counters.items() if k.endswith("_invocations") and "shader" in k]
    if gpu_ns and invocations:
        found["invocations_per_us"] = sum(invocations) / (gpu_ns / 1000)
    return {k: v for k, v in found.items() if v is not None}
