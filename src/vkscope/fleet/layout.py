"""Where a fleet dataset's files lie, and how a capture enters it whole or not at all.

    DATASET/dataset.json                       format, version, partition key, counter columns
    DATASET/captures/PART/CAPTURE_ID.parquet   one row
    DATASET/frames/PART/CAPTURE_ID.parquet     its frames
    DATASET/instances/PART/CAPTURE_ID.parquet  its workload instances
    DATASET/captures.parquet                   the captures files' rows in one file (an index)

PART is a folder per value of the partition key (a file system name made from the value; every
row also holds the value itself in its `partition` column, so no reader depends on the folder's
name, and a tag value may hold any character). Engines skip the files of other partitions by
their Parquet statistics, which say each file's one `partition` value.

A capture's three files are written into DATASET/.staging first and renamed into place, its
captures file last: a capture is in the dataset when its captures file is. What an export that
was killed left behind (staging, or instances and frames without a captures file) is removed by
the next one before it writes. One export at a time writes a dataset (a lock on dataset.json's
folder).

The captures index holds every captures file's row, rewritten by each writer when it is done
(writing()): an engine reads the captures table from that one file instead of a small file per
capture (opening 1,000 of them took seconds of CPU, mostly each file's own cost). The files stay
what says which captures are in: the index is read only where it holds exactly the captures
whose files are in place (sources()), so one that a killed writer left behind, or that files
copied in or removed by hand have outdated, is passed over until the next writer rewrites it.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import json
import os
import re
import shutil
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

import pyarrow as pa
import pyarrow.parquet as pq

from .schema import CAPTURES, DATASET_VERSION, FORMAT, TABLES

MANIFEST: Final = "dataset.json"
INDEX: Final = "captures.parquet"
_STAGING: Final = ".staging"
_LOCK: Final = ".lock"
_SAFE: Final = re.compile(r"[^A-Za-z0-9._-]")
# Partition keys that are columns of `captures`; any other key is `tag:NAME`.
PARTITION_COLUMNS: Final = ("date", "device", "application", "status", "vkscope_version")
NO_PARTITION: Final = "none"
UNSET: Final = "unset"  # the partition of a capture without the key's value


class DatasetError(Exception):
    """A dataset that cannot be used as asked: one line saying why."""


def check_partition_key(key: str) -> str:
    if key in (*PARTITION_COLUMNS, NO_PARTITION) or (key.startswith("tag:") and len(key) > 4):
        return key
    choices = ", ".join((*PARTITION_COLUMNS, NO_PARTITION, "tag:NAME"))
    raise DatasetError(f"unknown partition key {key!r}; one of {choices}")


def folder_name(value: str | None) -> str:
    """A file system name for a partition value: the value where it is safe as one, else its
    safe characters and a hash of the whole (two values never share a folder)."""
    if value is None:
        return UNSET
    slug = _SAFE.sub("_", value)[:48]
    if slug == value and slug[:1].isalnum():
        return slug
    digest = hashlib.sha256(value.encode("utf-8", "surrogatepass")).hexdigest()[:10]
    return f"v{slug}-{digest}" if not slug[:1].isalnum() else f"{slug}-{digest}"


@dataclass
class Manifest:
    partition_by: str
    version: int = DATASET_VERSION
    # instances column -> the counter's name in its captures, and its unit where known
    counters: dict[str, dict[str, str | None]] = field(default_factory=dict)

    def as_json(self) -> dict[str, Any]:
        return {
            "format": FORMAT,
            "version": self.version,
            "partition_by": self.partition_by,
            "counters": self.counters,
        }


class Dataset:
    """A fleet dataset's folder."""

    def __init__(self, root: Path) -> None:
        self.root = Path(root)
        self._added: list[pa.Table] = []  # captures rows written in this writing()

    @property
    def manifest_path(self) -> Path:
        return self.root / MANIFEST

    def exists(self) -> bool:
        return self.manifest_path.is_file()

    def manifest(self) -> Manifest:
        try:
            data = json.loads(self.manifest_path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            if self.root.is_dir():
                raise DatasetError(f"{self.root}: not a vkscope dataset (no {MANIFEST})") from None
            raise DatasetError(f"{self.root}: no such dataset") from None
        except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
            raise DatasetError(f"{self.manifest_path}: cannot read: {exc}") from None
        if not isinstance(data, dict) or data.get("format") != FORMAT:
            raise DatasetError(f"{self.root}: not a vkscope dataset ({MANIFEST} says otherwise)")
        version = data.get("version")
        if not isinstance(version, int) or version > DATASET_VERSION:
            raise DatasetError(
                f"{self.root}: dataset version {version}, written by a newer vkscope "
                f"(this one reads up to {DATASET_VERSION})"
            )
        counters = data.get("counters") or {}
        return Manifest(str(data.get("partition_by", NO_PARTITION)), version, dict(counters))

    def create(self, partition_by: str) -> Manifest:
        """The dataset's manifest, writing a new one when the folder has none."""
        check_partition_key(partition_by)
        if self.exists():
            manifest = self.manifest()
            if manifest.partition_by != partition_by:
                raise DatasetError(
                    f"{self.root} is partitioned by {manifest.partition_by}, "
                    f"not {partition_by}; export into another dataset to change it"
                )
            return manifest
        if self.root.exists() and (not self.root.is_dir() or any(self.root.iterdir())):
            raise DatasetError(f"{self.root}: exists and is not a vkscope dataset")
        manifest = Manifest(partition_by)
        self.root.mkdir(parents=True, exist_ok=True)
        self.write_manifest(manifest)
        return manifest

    def write_manifest(self, manifest: Manifest) -> None:
        text = json.dumps(manifest.as_json(), indent=2, sort_keys=True) + "\n"
        staged = self.root / f"{MANIFEST}.tmp"
        staged.write_text(text, encoding="utf-8")
        os.replace(staged, self.manifest_path)

    @contextlib.contextmanager
    def writing(self) -> Iterator[None]:
        """Holds the dataset's write lock; cleans what an export that was killed left."""
        self.root.mkdir(parents=True, exist_ok=True)
        with (self.root / _LOCK).open("a") as lock:
            try:
                fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                raise DatasetError(f"{self.root}: another export is writing it") from None
            self._clean()
            self._added = []
            yield
            self._write_index()

    def _clean(self) -> None:
        shutil.rmtree(self.root / _STAGING, ignore_errors=True)
        (self.root / f"{INDEX}.tmp").unlink(missing_ok=True)
        present = self.capture_ids()
        for table in ("instances", "frames"):
            for path in self.files(table):
                if path.stem not in present:
                    path.unlink()

    def files(self, table: str) -> list[Path]:
        folder = self.root / table
        return sorted(folder.glob("*/*.parquet")) if folder.is_dir() else []

    def capture_ids(self) -> set[str]:
        """The captures in the dataset: those whose captures file is in place."""
        return {p.stem for p in self.files("captures")}

    def staging(self, capture_id: str) -> Path:
        """An empty folder to write a capture's tables into before add()."""
        staging = self.root / _STAGING / capture_id
        shutil.rmtree(staging, ignore_errors=True)
        staging.mkdir(parents=True)
        return staging

    def discard(self, capture_id: str) -> None:
        shutil.rmtree(self.root / _STAGING / capture_id, ignore_errors=True)

    def add(self, capture_id: str, partition: str | None, tables: dict[str, pa.Table]) -> None:
        """Writes one capture's tables, staged then renamed into place, `captures` last; a
        table not in `tables` must be in its staging folder already. Call inside writing()."""
        staging = self.root / _STAGING / capture_id
        staging.mkdir(parents=True, exist_ok=True)
        part = folder_name(partition)
        for table in tables:
            pq.write_table(
                tables[table],
                staging / f"{table}.parquet",
                compression="zstd",
                write_statistics=True,
            )
        for table in TABLES:  # captures last: it says the capture is in
            target = self.root / table / part
            target.mkdir(parents=True, exist_ok=True)
            os.replace(staging / f"{table}.parquet", target / f"{capture_id}.parquet")
        staging.rmdir()
        added = tables.get("captures")
        if added is None:
            added = _read(self.root / "captures" / part / f"{capture_id}.parquet")
        self._added.append(added)

    @property
    def index_path(self) -> Path:
        return self.root / INDEX

    def sources(self, table: str) -> list[Path]:
        """The files an engine reads `table` from: for `captures`, the index where it holds
        exactly the captures in place; else the table's files."""
        files = self.files(table)
        if table == "captures" and files and self._index_ids() == {p.stem for p in files}:
            return [self.index_path]
        return files

    def _index_ids(self) -> set[str] | None:
        """The capture ids the index holds; None where it is missing, unreadable or holds one
        twice."""
        if not self.index_path.is_file():
            return None
        try:
            ids = _read(self.index_path, ["capture_id"]).column(0).to_pylist()
        except (OSError, pa.ArrowException):
            return None
        found = set(ids)
        return found if len(found) == len(ids) else None

    def _write_index(self) -> None:
        """Rewrites the index after a writer: a row per capture in place, from the old index
        where it has it, else from what this writer added, else from its captures file. Left
        as it is where it is up to date."""
        files = {p.stem: p for p in self.files("captures")}
        held = self._index_ids()
        added, self._added = self._added, []
        if not added and held == set(files):
            return
        if not files:
            self.index_path.unlink(missing_ok=True)
            return
        rows: dict[str, pa.Table] = {}
        for table in [_read(self.index_path)] if held else []:
            rows.update(_rows_by_id(table))
        for table in added:
            rows.update(_rows_by_id(table))
        order = sorted(files, key=lambda cid: files[cid].parts)  # as the files list them
        table = pa.concat_tables(
            [_conformed(rows[cid] if cid in rows else _read(files[cid])) for cid in order]
        )
        staged = self.root / f"{INDEX}.tmp"
        pq.write_table(table, staged, compression="zstd")
        os.replace(staged, self.index_path)

    def bytes_on_disk(self, table: str) -> int:
        return sum(p.stat().st_size for p in self.files(table))


def _read(path: Path, columns: list[str] | None = None) -> pa.Table:
    """One Parquet file (not pq.read_table, whose first call imports pyarrow.dataset: more than
    an export of a small capture costs otherwise)."""
    with pq.ParquetFile(path) as f:
        return f.read(columns=columns)


def _rows_by_id(table: pa.Table) -> dict[str, pa.Table]:
    ids = table.column("capture_id").to_pylist()
    return {cid: table.slice(n, 1) for n, cid in enumerate(ids)}


def _conformed(table: pa.Table) -> pa.Table:
    """A captures table in the dataset's schema as it is now: a column that a file written
    before it was added lacks is NULL."""
    n = table.num_rows
    columns = table.column_names
    return pa.table(
        [table.column(f.name).cast(f.type) if f.name in columns else pa.nulls(n, f.type)
         for f in CAPTURES],
        schema=CAPTURES,
    )  # fmt: skip
