"""What the Perfetto export and merge share: their results, their error, and how a workload
instance is named and described in a trace."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

from ..capture import WorkloadInstance

SEP: Final = " · "


class PerfettoExportError(Exception):
    """The export could not be made: a bad device trace to merge, or an unusable output path."""


@dataclass(frozen=True, slots=True)
class MergeSummary:
    """What `--merge` did with the device trace."""

    path: Path
    packets: int  # packets of the device trace copied to the output
    render_stage_events: int
    tagged: int  # render stage events carrying a t<tagID> label
    annotated: int  # of those, the events given vkscope arguments
    ambiguous: int  # annotated with only the fields common to several instances
    unmatched: int  # tagged, but the tag names no workload of the capture
    clock_snapshots: int


@dataclass(frozen=True, slots=True)
class ExportSummary:
    """What export_perfetto wrote."""

    path: Path
    packets: int
    workloads: int
    timed: int
    untimed: int  # placed at their CPU submit time, as placeholders
    queue_tracks: int
    overflow_tracks: int  # extra tracks for overlapping workloads, shown merged in the UI
    label_slices: int
    submits: int
    frames: int
    counter_tracks: int
    counter_samples: int
    clocks: dict[str, str]  # GPU track name -> which clock its times are on, and how placed
    notes: tuple[str, ...]
    merge: MergeSummary | None = None


def instance_name(w: WorkloadInstance) -> str:
    """The slice name: type and label path, e.g. `renderpass · Frame/Shadows`."""
    kind = w.type or f"workload t{w.tag_id}"
    return f"{kind}{SEP}{w.label_path}" if w.labels else kind


def gpu_times(w: WorkloadInstance) -> tuple[int, int] | None:
    """Where its slice goes on the device's clock: (begin, end) when the capture has both (an
    end before its begin, which gives no usable GPU time, is drawn as a zero-length slice)."""
    begin, end = w.gpu_begin_ns, w.gpu_end_ns
    if type(begin) is int and type(end) is int:
        return begin, max(begin, end)
    return None


# WorkloadInstance fields written under these names; the others under their own.
_RENAMED: Final = {"submit_id": "submit", "tag_id": "tag", "id": "instance_row"}
_NOT_FIELDS: Final = {"metadata", "labels", "process", "gpu_begin_ns", "gpu_end_ns", "identity"}
# The record's fields, including those a newer capture reader adds.
_RECORD_FIELDS: Final = tuple(
    (name, _RENAMED.get(name, name))
    for name in WorkloadInstance.__struct_fields__
    if name not in _NOT_FIELDS
)


def instance_details(w: WorkloadInstance) -> dict[str, Any]:
    """What the capture knows about the instance itself (identity, place, timing), leaving out
    the names its metadata has (those say the same or come from the layer)."""
    metadata = w.metadata
    details: dict[str, Any] = {"instance": f"{w.submit_id}.{w.tag_id}", "label_path": w.label_path}
    if any("/" in label for label in w.labels):
        details["labels"] = list(w.labels)  # the path alone would be ambiguous
    for name, key in _RECORD_FIELDS:
        value = getattr(w, name)
        if value is not None and key not in details:
            details[key] = value
    times = gpu_times(w)
    if times is not None:
        details["gpu_begin_ns"], details["gpu_end_ns"] = times
        details["gpu_ns"] = times[1] - times[0]
    for key in [k for k in details if k in metadata]:
        del details[key]
    return details


def instance_fields(w: WorkloadInstance) -> dict[str, Any]:
    """Every metadata field of the instance, then its details (instance_details)."""
    return {**w.metadata, **instance_details(w)}
