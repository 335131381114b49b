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
import numpy.typing as npt
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from ..capture import Capture, CaptureError, open_capture
from ..capture.read.columns import CHECKED_AS_READ, instance_batches
from ..capture.read.gpu_join import GpuJoin
from ..capture.read.numpy_arrow import arrow_numbers
from ..capture.read.records import FrameKey
from .identity import identity_text, queue_names
from .layout import Dataset, Manifest
from .schema import CAPTURES, DATASET_VERSION, FRAMES, counter_column, instances_schema

SUFFIX: Final = ".vkscope"

Ints = npt.NDArray[np.int64]
Bools = npt.NDArray[np.bool_]


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


_TEXT: Final = pa.dictionary(pa.int32(), pa.string())


def _written(schema: pa.Schema) -> pa.Schema:
    """The instances schema as the export hands its columns to Parquet: text columns
    dictionary-encoded, as Parquet stores them anyway, so that the writer takes each column's
    dictionary as it is instead of hashing every value. Written without the Arrow schema, the
    files read back as plain text columns (fleet/schema.py), as before."""
    return pa.schema(
        [pa.field(f.name, _TEXT, f.nullable) if f.type == pa.string() else f for f in schema]
    )


# Text columns with statistics: those that hold one value per capture (what engines skip a
# file by). The others span nearly every value in every capture's file, so their minimum and
# maximum would skip nothing, and the writer finds them by hashing every instance's index into
# its column's dictionary (a tenth of the export's time).
_TEXT_STATISTICS: Final = ("capture_id", "partition", "device")


def _with_statistics(schema: pa.Schema) -> list[str]:
    return [f.name for f in schema if f.type != pa.string() or f.name in _TEXT_STATISTICS]


def _constant(value: Any, n: int) -> pa.Array:
    return pa.DictionaryArray.from_arrays(
        arrow_numbers(np.zeros(n, np.int32)), pa.array([value], pa.string())
    )


def _ints(array: pa.Array) -> Ints:
    """An integer column's values as int64 (0 where NULL: callers mask them by is_null)."""
    if array.null_count:
        array = pc.fill_null(array, 0)
    return np.asarray(array.to_numpy(), np.int64)


def _nulls(array: pa.Array) -> Bools:
    if not array.null_count:
        return np.zeros(len(array), bool)
    return np.asarray(array.is_null().to_numpy(zero_copy_only=False), bool)


class _Runs:
    """A batch's runs of instances of one frame (process, device and frame), as instances in
    submission order come: what every instance of a run shares is worked out once per run."""

    def __init__(self, b: pa.RecordBatch) -> None:
        keys: list[npt.NDArray[Any]] = []
        for name in ("process", "device", "frame"):
            keys += [_ints(b.column(name)), _nulls(b.column(name))]
        change = np.zeros(b.num_rows, bool)
        change[:1] = True
        for column in keys:
            change[1:] |= column[1:] != column[:-1]
        self.starts = np.flatnonzero(change)
        self.counts = np.diff(np.append(self.starts, b.num_rows))
        # process, whether it is NULL, device, whether NULL, frame, whether NULL
        self.keys = [k[self.starts] for k in keys]

    def repeat(self, per_run: npt.NDArray[Any]) -> npt.NDArray[Any]:
        """Each instance's value, from its run's."""
        return np.repeat(per_run, self.counts)


def _device_names(runs: _Runs, devices: dict[tuple[int, int], str | None]) -> pa.Array:
    """Each instance's device name, by its process and device (none: device 0)."""
    names = pa.array(list(devices.values()), pa.string())
    if not devices:
        n = int(runs.counts.sum())
        return pa.DictionaryArray.from_arrays(pa.nulls(n, pa.int32()), names)
    process, no_process, device = runs.keys[:3]
    keys = np.array([p * (1 << 32) + d for p, d in devices], np.int64)
    order = np.argsort(keys)
    key = process * (1 << 32) + device  # a NULL device is 0 here
    at = np.minimum(np.searchsorted(keys[order], key), len(keys) - 1)
    index = order[at]
    missing = (keys[index] != key) | no_process
    return pa.DictionaryArray.from_arrays(
        arrow_numbers(runs.repeat(index.astype(np.int32)), runs.repeat(missing)), names
    )


def _identity(b: pa.RecordBatch) -> pa.Array:
    """identity_text of every instance of the batch (its text columns dictionary-encoded):
    written once per distinct identity (a frame's few hundred, repeated in every frame) and
    referred to by every instance. Each instance's (ordinal, type, label path, queue) is one
    integer, made of the ordinal and the text columns' dictionary indices (numpy)."""
    parts = [b.column(n) for n in ("type", "label_path", "queue")]
    ordinal = b.column("ordinal")
    null = _nulls(ordinal)  # NULL, as the text made of a NULL ordinal would be
    key = _ints(ordinal) * 2 + null
    bound = int(key.max()) + 1 if len(key) else 1
    for part in parts:
        size = len(part.dictionary) + 1  # the last: NULL
        if bound * size >= 1 << 62:  # renumbered densely first: at most rows x size
            key = _ints(pc.dictionary_encode(arrow_numbers(key)).indices)
            bound = len(key) + 1
        indices = part.indices
        if indices.null_count:
            indices = pc.fill_null(indices, size - 1)
        key = key * size + np.asarray(indices.to_numpy(), np.int64)
        bound *= size
    keys = pc.dictionary_encode(arrow_numbers(key))  # numbered in order of first appearance
    codes = np.asarray(keys.indices.to_numpy(), np.int32)
    # Each distinct key's first instance: where its code exceeds every code before it.
    first = np.flatnonzero(codes > np.maximum.accumulate(np.concatenate(([-1], codes[:-1]))))
    kind, path, queue = (_texts_at(p, first) for p in parts)
    ordinals = ordinal.take(arrow_numbers(first)).to_pylist()
    texts = [
        None if p is None or q is None else identity_text(k, p, q, o)  # as joining NULL gives
        for k, p, q, o in zip(kind, path, queue, ordinals, strict=True)
    ]
    return pa.DictionaryArray.from_arrays(arrow_numbers(codes, null), pa.array(texts, pa.string()))


def _texts_at(column: pa.DictionaryArray, rows: Ints) -> list[str | None]:
    """A dictionary-encoded text column's values at a few rows (DictionaryArray.to_pylist makes
    a scalar object of each value first)."""
    values = column.dictionary.to_pylist()
    indices = column.indices.take(arrow_numbers(rows)).to_pylist()
    return [None if i is None else values[i] for i in indices]


FrameTally = dict[tuple[int, int | None, int | None], tuple[int, int, int]]


class _Tally:
    """Each (process, device, frame)'s instances, timed instances and GPU ns: summed by runs
    within a batch, then the runs of every batch by their frame (numpy, not a group-by, whose
    engine takes longer to import than a small capture takes to count)."""

    def __init__(self) -> None:
        self._runs: list[list[npt.NDArray[Any]]] = []

    def add(self, b: pa.RecordBatch, runs: _Runs) -> None:
        if not b.num_rows:
            return
        process, no_process, *keys = runs.keys
        gpu = b.column("gpu_ns")
        timed = (~_nulls(gpu)).astype(np.int64)
        starts = runs.starts
        sums = [runs.counts, np.add.reduceat(timed, starts), np.add.reduceat(_ints(gpu), starts)]
        self._runs.append([np.where(no_process, 0, process), *keys, *sums])  # NULL: process 0

    def frames(self) -> FrameTally:
        """(process, device, frame) -> (instances, timed instances, GPU ns)."""
        if not self._runs:
            return {}
        runs = [np.concatenate(c) for c in zip(*self._runs, strict=True)]
        keys = runs[:5]
        order = np.lexsort(keys[::-1])
        new = np.zeros(len(order), bool)
        new[0] = True
        for column in keys:
            ordered = column[order]
            new[1:] |= ordered[1:] != ordered[:-1]
        starts = np.flatnonzero(new)
        sums = [np.add.reduceat(c[order], starts).tolist() for c in runs[5:]]
        process, device, no_device, frame, no_frame = (k[order[starts]].tolist() for k in keys)
        return {
            (p, None if nd else d, None if nf else f): (n, t, ns)
            for p, d, nd, f, nf, n, t, ns in zip(
                process, device, no_device, frame, no_frame, *sums, strict=True
            )
        }


def _instances(
    capture: Capture,
    writer: pq.ParquetWriter,
    base: dict[str, str],
    devices: dict[tuple[int, int], str | None],
    counters: dict[str, str],
    sampled: GpuJoin,
) -> FrameTally:
    """Writes every instance, read as columns (capture/read/columns.py); returns, per
    (process, device, frame): instances, timed instances, GPU ns."""
    schema = writer.schema
    names = list(counters)
    tally = _Tally()
    for b in instance_batches(capture, names, dictionaries=True):
        n = b.num_rows
        columns: dict[str, pa.Array] = {name: _constant(value, n) for name, value in base.items()}
        runs = _Runs(b)
        columns.update(
            process=b.column("process"),
            device=_device_names(runs, devices),
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
        tally.add(b, runs)
    return tally.frames()


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
    writer = pq.ParquetWriter(
        staging / "instances.parquet",
        _written(schema),
        compression="zstd",
        store_schema=False,
        write_statistics=_with_statistics(schema),
    )
    sampled = GpuJoin(capture)
    try:
        per_frame = _instances(
            capture, writer, {"capture_id": cid, "partition": part}, devices, counters, sampled
        )
    finally:
        writer.close()
    queues = queue_names(capture.queues())
    listed = capture.frames()
    tallies = [per_frame.get((f.process, f.device, f.number), (0, 0, 0)) for f in listed]
    frames: dict[str, list[Any]] = {  # a column at a time: a capture has thousands of frames
        "capture_id": [cid] * len(listed),
        "partition": [part] * len(listed),
        "process": [f.process for f in listed],
        "device": [devices.get((f.process, f.device or 0)) for f in listed],
        "frame": [f.number for f in listed],
        "queue": [queues.get((f.process, f.device, f.queue)) for f in listed],
        "cpu_ns": [f.cpu_ns for f in listed],
        "reason": [f.reason for f in listed],
        "captured": [f.captured for f in listed],
        "instances": [t[0] for t in tallies],
        "timed_instances": [t[1] for t in tallies],
        "gpu_ns": [t[2] if t[1] else None for t in tallies],
    }
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
        "clocks": _clocks(sampled),
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


def _clocks(sampled: GpuJoin) -> str | None:
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
        for g in sampled.summaries()
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
