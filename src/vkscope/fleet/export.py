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

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from ..capture import Capture, CaptureError, open_capture
from ..capture.read.columns import CHECKED_AS_READ, instance_batches
from ..capture.read.gpu_join import GpuJoin
from ..capture.read.records import FrameKey
from .identity import queue_names
from .layout import Dataset, Manifest
from .schema import CAPTURES, DATASET_VERSION, FRAMES, counter_column, instances_schema

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


def _constant(value: Any, n: int, type: pa.DataType) -> pa.Array:
    return pa.array([value], type).take(pa.array(np.zeros(n, np.int64)))


def _device_names(
    process: pa.Array, device: pa.Array, devices: dict[tuple[int, int], str | None]
) -> pa.Array:
    """Each instance's device name, by its process and device (none: device 0)."""
    procs = np.asarray(process.to_numpy(zero_copy_only=False), np.int64)
    ids = np.asarray(pc.fill_null(device, 0).to_numpy(zero_copy_only=False), np.int64)
    index = np.full(len(procs), -1, np.int64)
    for n, (p, d) in enumerate(devices):
        index[(procs == p) & (ids == d)] = n
    return pa.array(list(devices.values()), pa.string()).take(pa.array(index, mask=index < 0))


def _identity(b: pa.RecordBatch) -> pa.Array:
    """identity_text of every instance of the batch, in Arrow."""
    kind = pc.fill_null(b.column("type"), "")
    kind = pc.if_else(pc.equal(kind, ""), "?", kind)
    ordinal = pc.binary_join_element_wise("#", b.column("ordinal").cast(pa.string()), "")
    queue = pc.binary_join_element_wise("q", b.column("queue"), "")
    return pc.binary_join_element_wise(kind, b.column("label_path"), ordinal, queue, " ")


def _instances(
    capture: Capture,
    writer: pq.ParquetWriter,
    base: dict[str, str],
    devices: dict[tuple[int, int], str | None],
    counters: dict[str, str],
) -> dict[tuple[int, int | None, int | None], list[int]]:
    """Writes every instance, read as columns (capture/read/columns.py); returns, per
    (process, device, frame): instances, timed instances, GPU ns."""
    schema = writer.schema
    names = list(counters)
    sampled = GpuJoin(capture)
    tallies: list[pa.Table] = []
    for b in instance_batches(capture, names):
        n = b.num_rows
        columns: dict[str, pa.Array] = {
            name: _constant(value, n, pa.string()) for name, value in base.items()
        }
        columns.update(
            process=b.column("process"),
            device=_device_names(b.column("process"), b.column("device"), devices),
            identity=_identity(b),
            ordinal=b.column("ordinal").cast(pa.int32()),
        )
        for name in ("frame", "queue", "type", "label_path", "gpu_ns", "timing", "timing_reason",
                     "serialization", "draws", "groups_x", "groups_y", "groups_z", "bytes",
                     "pixels", "clock_changed"):  # fmt: skip
            columns[name] = b.column(name)
        if sampled:  # where no sampler plugin said, the host's samples say (docs/gpu-state.md)
            columns["clock_changed"] = _clock_changed(sampled, b)
        for name, column in counters.items():
            columns[column] = b.column(name)
        writer.write_table(pa.table([columns[f.name] for f in schema], schema=schema))
        tallies.append(
            pa.table([b.column("process"), b.column("device"), b.column("frame"),
                      b.column("gpu_ns")], names=["process", "device", "frame", "gpu_ns"])
            .group_by(["process", "device", "frame"], use_threads=False)
            .aggregate([([], "count_all"), ("gpu_ns", "count"), ("gpu_ns", "sum")])
        )  # fmt: skip
    per_frame: dict[tuple[int, int | None, int | None], list[int]] = {}
    for table in tallies:  # a row per frame of each batch
        for row in table.to_pylist():
            key = (row["process"], row["device"], row["frame"])
            tally = per_frame.setdefault(key, [0, 0, 0])
            tally[0] += row["count_all"]
            tally[1] += row["gpu_ns_count"]
            tally[2] += row["gpu_ns_sum"] or 0
    return per_frame


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
    writer = pq.ParquetWriter(staging / "instances.parquet", schema, compression="zstd")
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
        "clocks": _clocks(capture),
        **row,
    }
    tables = {
        "captures": pa.Table.from_pylist([captures], schema=CAPTURES),
        "frames": pa.table(frames, schema=FRAMES),
    }
    return partition, tables, instances


def _clock_changed(sampled: GpuJoin, b: pa.RecordBatch) -> pa.Array:
    """The batch's clock_changed: a sampler plugin's where its annex said, else the host's."""
    said = b.column("clock_changed")
    keys = [
        FrameKey(p, d, f if f is not None else -1)
        for p, d, f in zip(*(b.column(n).to_pylist() for n in ("process", "device", "frame")),
                           strict=True)
    ]  # fmt: skip
    host = pa.array(sampled.clock_changes(b.column("id").to_pylist(), keys), pa.bool_())
    return pc.coalesce(said, host)


def _clocks(capture: Capture) -> str | None:
    """The GPUs' clocks, power and throttle reasons during the captured frames, as the host
    sampled them (docs/gpu-state.md); None where it sampled none."""
    gpus = [
        {
            "pci": g.gpu.pci,
            "name": g.gpu.name,
            "driver": g.gpu.driver,
            "state": g.state.as_json() if g.state else None,  # over the captured frames
            "warnings": g.warnings(),
        }
        for g in GpuJoin(capture).summaries()
    ]
    return json.dumps({"gpus": gpus}, sort_keys=True) if gpus else None


def export(root: Path, paths: Iterable[Path], partition_by: str = "date") -> ExportResult:
    dataset = Dataset(root)
    manifest = dataset.create(partition_by)
    result = ExportResult()
    with dataset.writing():
        present = dataset.capture_ids()
        for path in capture_files(paths):
            cid: str | None = None
            try:
                with open_capture(path, cells_checked_as_read=CHECKED_AS_READ) as capture:
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
