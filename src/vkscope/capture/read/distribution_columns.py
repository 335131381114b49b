"""Distributions over frames (distributions.py) from instance columns (columns.py), with numpy:
no Python work per instance or per value.

`IdentityColumns` reads only the columns it needs (COLUMNS), a batch at a time, and gives each
instance's scope (a number per distinct queue, label path and type), ordinal, GPU time and
counters to identity_table.Instances, which sorts them once by identity and value and keeps each
identity's values in order; the statistics (quantiles.py's rule to the last bit) are computed
as the table's rows are read.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final

import numpy as np
import numpy.typing as npt
import pyarrow as pa
import pyarrow.compute as pc

from .columns import instance_batches
from .distributions import DistributionTable
from .identity_table import NULL, Instances
from .reader import Capture
from .stored_columns import stored_meta
from .warmup import WarmUp

Ints = npt.NDArray[np.int64]
Bools = npt.NDArray[np.bool_]
# The columns the distributions read (columns.SCHEMA's), and the rows of a batch summed up at
# once: the stored blobs' (columns.BATCH_ROWS) in four, so that a batch's temporary arrays
# (a few dozen of 8 bytes a row) stay a few MB.
COLUMNS: Final = ("process", "device", "frame", "queue", "labels_json", "type", "ordinal",
                  "gpu_ns")  # fmt: skip
BATCH_ROWS: Final = 32_768


def ints(column: pa.Array | pa.ChunkedArray, null: int = NULL) -> Ints:
    """An integer column as int64 values, NULL as `null`."""
    return np.asarray(pc.fill_null(column, null).to_numpy(), np.int64)


def valid(column: pa.Array | pa.ChunkedArray) -> Bools:
    return np.asarray(column.is_valid().to_numpy(zero_copy_only=False), bool)


def texts(column: pa.Array, null: str = "") -> tuple[list[str], Ints]:
    """A text column (dictionary-encoded or not) as its distinct values and each row's index
    into them; NULL as `null`."""
    if not pa.types.is_dictionary(column.type):
        column = pc.dictionary_encode(column)
    values: list[str] = column.dictionary.to_pylist()
    values.append(null)
    return values, ints(column.indices, len(values) - 1)


def groups(*columns: Ints) -> tuple[list[tuple[int, ...]], Ints]:
    """The distinct rows of equally long columns, in ascending order, and each row's index."""
    found, inverse = distinct_rows(*columns)
    return list(zip(*(c.tolist() for c in found), strict=True)), inverse


def distinct_rows(*columns: Ints) -> tuple[list[Ints], Ints]:
    """groups(), the distinct rows as columns: no Python object per row. Each column's values
    are numbered first and the numbers made one integer per row: numpy's unique of rows
    (axis=0) sorts them as bytes, an order of magnitude slower."""
    if not len(columns[0]):
        return [np.zeros(0, np.int64) for _ in columns], np.zeros(0, np.int64)
    code = np.zeros(len(columns[0]), np.int64)
    distinct = []
    for column in columns:
        values, at = np.unique(column, return_inverse=True)
        code = code * len(values) + at.reshape(-1)
        distinct.append(values)
    found, inverse = np.unique(code, return_inverse=True)
    parts = []
    for values in reversed(distinct):
        found, at = np.divmod(found, len(values))
        parts.append(values[at])
    return parts[::-1], inverse.reshape(-1)


def warm_keys(warmup: WarmUp, process: Ints, device: Ints, frame: Ints) -> Bools:
    """Which (process, device, frame) rows are warm-up frames (NULL as NULL), per device."""
    warm = np.zeros(len(frame), bool)
    by_device: dict[tuple[int, int], list[int]] = {}
    for p, d, f in warmup.frames:
        by_device.setdefault((p, NULL if d is None else d), []).append(NULL if f is None else f)
    for (p, d), frames in by_device.items():
        warm |= (process == p) & (device == d) & np.isin(frame, np.array(frames, np.int64))
    return warm


def or_none(value: int) -> int | None:
    return None if value == NULL else value


class IdentityColumns:
    """Gathers instances' identities and values from record batches (`add`) in compact arrays
    (identity_table.Instances), sums them up per identity at the end (`result`)."""

    def __init__(self, counters: Sequence[str], capacity: int = 0) -> None:
        """`capacity`: how many instances may come (the capture's), for arrays made once."""
        self._gathered = Instances(counters, capacity)
        self._counters = list(counters)

    def add(self, batch: pa.RecordBatch, keep: Bools) -> None:
        """The instances of `batch` (COLUMNS, then the counters) where `keep`."""
        if not keep.any():
            return
        scope = self._scopes(batch)[keep].astype(np.int32)
        counters = {}
        for name in self._counters:
            column = batch.column(name)
            has = valid(column)[keep]
            values = np.asarray(pc.fill_null(column, 0.0).to_numpy(), np.float64)[keep]
            counters[name] = (np.flatnonzero(has), values[has])
        ordinal = ints(batch.column("ordinal"))[keep]
        gpu = ints(batch.column("gpu_ns"))[keep]  # NULL: untimed
        self._gathered.add(scope, ordinal, gpu, counters)

    def _scopes(self, batch: pa.RecordBatch) -> Ints:
        queues, queue = texts(batch.column("queue"), "?")
        paths, path = texts(batch.column("labels_json"), "[]")
        types, type_ = texts(batch.column("type"))
        found, inverse = groups(queue, path, type_)
        scope_of = self._gathered.scope_of
        numbers = np.array(
            [
                scope_of.setdefault((queues[q], paths[p], types[t]), len(scope_of))
                for q, p, t in found
            ],
            np.int64,
        )
        return numbers[inverse] if len(found) else np.zeros(0, np.int64)

    def result(self) -> DistributionTable:
        return self._gathered.table()


def warm_rows(warmup: WarmUp, keys: list[tuple[int, ...]], inverse: Ints) -> Bools:
    """Which rows ran in a warm-up frame, from their frames' (process, device, frame) keys."""
    if not warmup.frames:
        return np.zeros(len(inverse), bool)
    warm = np.array([(p, or_none(d), or_none(f)) in warmup for p, d, f in keys], bool)
    return warm[inverse] if len(keys) else np.zeros(0, bool)


def frame_groups(batch: pa.RecordBatch) -> tuple[list[tuple[int, ...]], Ints]:
    """The batch's frames as (process, device, frame) keys (NULL as NULL), each row's index."""
    return groups(
        ints(batch.column("process")), ints(batch.column("device")), ints(batch.column("frame"))
    )


def stored_rows(capture: Capture) -> int:
    """How many instances the capture's stored columns hold (0: it has none)."""
    meta = stored_meta(capture)
    return meta.rows if meta is not None else 0


def stored_distributions(
    capture: Capture, warmup: WarmUp, counters: Sequence[str]
) -> DistributionTable:
    """distributions.distribution_table from the stored columns."""
    gathered = IdentityColumns(counters, stored_rows(capture))
    batches = instance_batches(capture, counters, BATCH_ROWS, dictionaries=True, columns=COLUMNS)
    for batch in batches:
        keys, inverse = frame_groups(batch)
        gathered.add(batch, ~warm_rows(warmup, keys, inverse))
    return gathered.result()
