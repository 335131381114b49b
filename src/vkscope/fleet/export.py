"""`vkscope export --parquet DATASET CAPTURE...`: captures into a fleet dataset, incrementally.

Each capture is read through the capture package's reader (its records: no SQL here), written
as its three tables into the dataset's staging folder, and moved into place whole (layout.py).
A capture already in the dataset (by its id) is skipped without being read past its meta; a
damaged one is reported and skipped, and leaves nothing behind. Instances stream through in
batches, so memory does not grow with the capture.
"""

from __future__ import annotations

import datetime
import hashlib
import json
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

import pyarrow as pa
import pyarrow.parquet as pq

from ..capture import Capture, CaptureError, open_capture
from .identity import identity_text, queue_names
from .layout import Dataset, Manifest
from .schema import CAPTURES, DATASET_VERSION, FRAMES, counter_column, instances_schema

BATCH: Final = 65_536
SUFFIX: Final = ".vkscope"


@dataclass
class ExportResult:
    written: list[Path] = field(default_factory=list)
    present: list[Path] = field(default_factory=list)  # already in the dataset
    damaged: list[tuple[Path, str]] = field(default_factory=list)
    instances: int = 0


def capture_files(paths: Iterable[Path]) -> Iterator[Path]:
    """The captures named: files as given, folders for every *.vkscope file under them."""
    for path in paths:
        if path.is_dir():
            yield from sorted(p for p in path.rglob(f"*{SUFFIX}") if p.is_file())
        else:
            yield path


def capture_id(capture: Capture) -> str:
    """The capture's own id (schema 8 on); for an older one, a hash of the file's bytes."""
    if capture.meta.capture_id:
        return capture.meta.capture_id
    digest = hashlib.sha256()
    with capture.path.open("rb") as f:
        while chunk := f.read(1 << 20):
            digest.update(chunk)
    return digest.hexdigest()[:32]


def _time(text: str | None) -> datetime.datetime | None:
    if not text:
        return None
    try:
        value = datetime.datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        return None
    return value if value.tzinfo else value.replace(tzinfo=datetime.UTC)


def partition_value(key: str, row: dict[str, Any], tags: dict[str, str]) -> str | None:
    if key == "none":
        return "all"
    if key.startswith("tag:"):
        return tags.get(key[4:])
    value = row.get(key)
    return None if value is None else str(value)


class _Writer:
    """One capture's instances, streamed into a Parquet file in batches."""

    def __init__(self, path: Path, schema: pa.Schema) -> None:
        self.schema = schema
        self.columns: dict[str, list[Any]] = {f.name: [] for f in schema}
        self.writer = pq.ParquetWriter(path, schema, compression="zstd")

    def flush(self) -> None:
        if self.columns["identity"]:
            self.writer.write_table(pa.table(self.columns, schema=self.schema))
            for values in self.columns.values():
                values.clear()

    def close(self) -> None:
        self.flush()
        self.writer.close()


def _instances(
    capture: Capture,
    writer: _Writer,
    base: dict[str, Any],
    devices: dict[tuple[int, int], str | None],
    counters: dict[str, str],
) -> dict[tuple[int, int | None, int | None], list[int]]:
    """Writes every instance; returns, per (process, device, frame): instances, timed, GPU ns."""
    per_frame: dict[tuple[int, int | None, int | None], list[int]] = {}
    c = writer.columns
    for w in capture.workloads():
        identity = w.identity  # the read side's (capture/read/identity.py)
        assert identity is not None  # every record the reader makes has one
        gpu_ns = w.gpu_ns
        tally = per_frame.setdefault((w.process, w.device, w.frame), [0, 0, 0])
        tally[0] += 1
        if gpu_ns is not None:
            tally[1] += 1
            tally[2] += gpu_ns
        meta = w.metadata
        groups = meta.get("groups")
        groups = groups if isinstance(groups, list) and len(groups) == 3 else (None,) * 3
        for name, value in base.items():
            c[name].append(value)
        c["process"].append(w.process)
        c["device"].append(devices.get((w.process, w.device or 0)))
        c["frame"].append(w.frame)
        c["queue"].append(identity.queue)
        c["identity"].append(identity_text(w.type, w.label_path, identity.queue, identity.ordinal))
        c["type"].append(w.type)
        c["label_path"].append(w.label_path)
        c["ordinal"].append(identity.ordinal)
        c["gpu_ns"].append(gpu_ns)
        c["timing"].append(w.timing)
        c["timing_reason"].append(w.timing_reason)
        c["serialization"].append(w.serialization)
        c["draws"].append(_int(meta.get("draws")))
        c["groups_x"].append(_int(groups[0]))
        c["groups_y"].append(_int(groups[1]))
        c["groups_z"].append(_int(groups[2]))
        c["bytes"].append(_int(meta.get("bytes")))
        c["pixels"].append(_int(meta.get("pixels")))
        changed = meta.get("clock_changed")
        c["clock_changed"].append(changed if isinstance(changed, bool) else None)
        values = w.counters
        for name, column in counters.items():
            value = values.get(name)
            c[column].append(None if value is None else float(value))
        if len(c["identity"]) >= BATCH:
            writer.flush()
    return per_frame


def _int(value: Any) -> int | None:
    return value if type(value) is int and -(2**63) <= value < 2**63 else None


def _tables(
    capture: Capture, cid: str, manifest: Manifest, staging: Path
) -> tuple[str | None, dict[str, pa.Table], int]:
    """Writes the capture's instances into `staging`; returns its partition value, its
    captures and frames tables, and how many instances it has."""
    meta = capture.meta
    tags = capture.tags()
    devices_list = capture.devices()
    devices = {(d.process, d.id): d.name for d in devices_list}
    first = devices_list[0] if devices_list else None
    started = _time(meta.created_utc)
    row: dict[str, Any] = {
        "date": started.date().isoformat() if started else None,
        "device": first.name if first else None,
        "application": meta.process_name,
        "status": meta.status,
        "vkscope_version": meta.vkscope_version,
    }
    partition = partition_value(manifest.partition_by, row, tags)
    part = partition if partition is not None else "unset"
    counters = {name: counter_column(name) for name in capture.counter_names()}
    details = capture.counter_details()
    for name, column in counters.items():
        manifest.counters.setdefault(column, {"name": name, "unit": details[name].unit})
    schema = instances_schema(sorted(set(counters.values())))
    writer = _Writer(staging / "instances.parquet", schema)
    try:
        per_frame = _instances(
            capture, writer, {"capture_id": cid, "partition": part}, devices, counters
        )
    finally:
        writer.close()
    queues = queue_names(capture.queues())
    frames: dict[str, list[Any]] = {f.name: [] for f in FRAMES}
    for f in capture.frames():
        tally = per_frame.get((f.process, f.device, f.number), [0, 0, 0])
        for name, value in (
            ("capture_id", cid), ("partition", part), ("process", f.process),
            ("device", devices.get((f.process, f.device or 0))), ("frame", f.number),
            ("queue", queues.get((f.process, f.device, f.queue))), ("cpu_ns", f.cpu_ns),
            ("reason", f.reason), ("captured", f.captured), ("instances", tally[0]),
            ("timed_instances", tally[1]), ("gpu_ns", tally[2] if tally[1] else None),
        ):  # fmt: skip
            frames[name].append(value)
    instances = sum(t[0] for t in per_frame.values())
    captures = {
        "capture_id": cid,
        "partition": part,
        "dataset_version": DATASET_VERSION,
        "source": capture.path.name,
        "schema_version": capture.schema_version,
        "started_utc": started,
        "finished_utc": _time(meta.finished_utc),
        "driver": " ".join(x for x in (first.driver_name, first.driver_info) if x)
        if first
        else None,
        "vendor_id": first.vendor_id if first else None,
        "device_id": first.device_id if first else None,
        "api_version": first.api_version if first else None,
        "devices": len(devices_list),
        "frames": len(frames["frame"]),
        "instances": instances,
        "timed_instances": sum(t[1] for t in per_frame.values()),
        "tags": list(tags.items()),
        "clocks": _clocks(meta.extra),
        **row,
    }
    tables = {
        "captures": pa.Table.from_pylist([captures], schema=CAPTURES),
        "frames": pa.table(frames, schema=FRAMES),
    }
    return partition, tables, instances


def _clocks(extra: dict[str, Any]) -> str | None:
    """The GPU clocks a sampler recorded for the capture, where its meta has them."""
    clocks = extra.get("clocks")
    return None if clocks is None else json.dumps(clocks, sort_keys=True)


def export(root: Path, paths: Iterable[Path], partition_by: str = "date") -> ExportResult:
    dataset = Dataset(root)
    manifest = dataset.create(partition_by)
    result = ExportResult()
    with dataset.writing():
        present = dataset.capture_ids()
        for path in capture_files(paths):
            cid: str | None = None
            try:
                with open_capture(path) as capture:
                    cid = capture_id(capture)
                    if cid in present:
                        result.present.append(path)
                        continue
                    staging = dataset.staging(cid)
                    partition, tables, instances = _tables(capture, cid, manifest, staging)
            except CaptureError as exc:
                if cid is not None:
                    dataset.discard(cid)
                result.damaged.append((path, exc.reason))
                continue
            dataset.write_manifest(manifest)  # its counter columns, before the files that use them
            dataset.add(cid, partition, tables)
            present.add(cid)
            result.written.append(path)
            result.instances += instances
    return result
