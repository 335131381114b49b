"""Distributions over frames (distributions.py) from instance columns (columns.py), with numpy:
no Python work per instance or per value.

`IdentityColumns` keeps, per instance given to it, its scope (a number per distinct queue, label
path and type), its ordinal, its GPU time and counters, as numpy arrays; `result` sorts them by
identity and value (one lexsort per value) and computes each identity's statistics for all
identities at once, by quantiles.py's rule to the last bit: integer GPU times in exact integer
arithmetic, counters (float64 columns) in the same float operations in the same order as
`percentile` does them.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final

import numpy as np
import numpy.typing as npt
import pyarrow as pa
import pyarrow.compute as pc

from .columns import instance_batches
from .distributions import EXACT_FLOAT, DistributionTable, ValueStats
from .identity import labels_of
from .quantiles import PERCENTILES
from .reader import Capture
from .warmup import WarmUp

Ints = npt.NDArray[np.int64]
Bools = npt.NDArray[np.bool_]
NULL: Final = -(2**63)  # a NULL integer, as the arrays here hold it
_WIDE: Final = 2**53  # integer values from here on are interpolated in Python (no overflow)


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
    """The distinct rows of equally long columns, in ascending order, and each row's index.
    Each column's values are numbered first and the numbers made one integer per row: numpy's
    unique of rows (axis=0) sorts them as bytes, an order of magnitude slower."""
    if not len(columns[0]):
        return [], np.zeros(0, np.int64)
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
        parts.append(values[at].tolist())
    return list(zip(*reversed(parts), strict=True)), inverse.reshape(-1)


def or_none(value: int) -> int | None:
    return None if value == NULL else value


class IdentityColumns:
    """Gathers instances' identities and values from record batches (`add`), sums them up per
    identity at the end (`result`)."""

    def __init__(self, counters: Sequence[str]) -> None:
        self._scope_of: dict[tuple[str, str, str], int] = {}
        self._scope: list[npt.NDArray[np.int32]] = []
        self._ordinal: list[Ints] = []
        self._gpu: list[Ints] = []  # NULL: untimed
        self._counters: dict[str, list[tuple[Ints, npt.NDArray[np.float64]]]] = {
            n: [] for n in counters
        }
        self._instances = 0

    def add(self, batch: pa.RecordBatch, keep: Bools) -> None:
        """The instances of `batch` (columns.SCHEMA, then the counters) where `keep`."""
        if not keep.any():
            return
        scope = self._scopes(batch)[keep]
        at = np.arange(self._instances, self._instances + len(scope), dtype=np.int64)
        self._instances += len(scope)
        self._scope.append(scope.astype(np.int32))
        self._ordinal.append(ints(batch.column("ordinal"))[keep])
        self._gpu.append(ints(batch.column("gpu_ns"))[keep])  # NULL: untimed
        for name, parts in self._counters.items():
            column = batch.column(name)
            has = valid(column)[keep]
            values = np.asarray(pc.fill_null(column, 0.0).to_numpy(), np.float64)[keep]
            parts.append((at[has], values[has]))

    def _scopes(self, batch: pa.RecordBatch) -> Ints:
        queues, queue = texts(batch.column("queue"), "?")
        paths, path = texts(batch.column("labels_json"), "[]")
        types, type_ = texts(batch.column("type"))
        found, inverse = groups(queue, path, type_)
        scope_of = self._scope_of
        numbers = np.array(
            [
                scope_of.setdefault((queues[q], paths[p], types[t]), len(scope_of))
                for q, p, t in found
            ],
            np.int64,
        )
        return numbers[inverse] if len(found) else np.zeros(0, np.int64)

    def result(self) -> DistributionTable:
        keys = sorted(self._scope_of)
        rank = np.zeros(len(keys), np.int64)
        for r, key in enumerate(keys):
            rank[self._scope_of[key]] = r
        ordinal = _joined(self._ordinal)
        span = int(ordinal.max()) + 1 if len(ordinal) else 1
        codes = rank[np.concatenate(self._scope)] if self._scope else ordinal
        codes *= span
        codes += ordinal
        del ordinal
        self._scope, self._ordinal = [], []
        identities, frames = np.unique(codes, return_counts=True)
        gpu = _joined(self._gpu)
        self._gpu = []
        timed = np.flatnonzero(gpu != NULL)
        stats = value_stats(codes[timed], gpu[timed], identities)
        del gpu, timed
        counters = {}
        for name, parts in self._counters.items():
            at = _joined([a for a, _ in parts])
            values = np.concatenate([v for _, v in parts]) if parts else np.zeros(0)
            counters[name] = value_stats(codes[at], values, identities, floats=True)
        scopes = [(q, labels_of(labels), t or None) for q, labels, t in keys]
        scope, ordinals = np.divmod(identities, span)
        return DistributionTable(
            scopes, scope.astype(np.int32), ordinals, frames.astype(np.int32), stats, counters
        )


def _joined(parts: list[Ints]) -> Ints:
    return np.concatenate(parts) if parts else np.zeros(0, np.int64)


def value_stats(
    codes: Ints, values: npt.NDArray[np.int64] | npt.NDArray[np.float64], identities: Ints,
    *, floats: bool = False,
) -> ValueStats:  # fmt: skip
    """Per identity of `identities` (ascending codes), the statistics of the `values` whose
    `codes` are its own; count 0 where it has none."""
    n = len(identities)
    count = np.zeros(n, np.int64)
    low, high = np.zeros(n, values.dtype), np.zeros(n, values.dtype)
    ps = [np.zeros(n, np.float64) for _ in PERCENTILES]
    if len(codes):
        order = np.lexsort((values, codes))
        c, v = codes[order], values[order]
        del order
        first = np.empty(len(c), bool)
        first[0] = True
        np.not_equal(c[1:], c[:-1], out=first[1:])
        starts = np.flatnonzero(first)
        del first
        at = np.searchsorted(identities, c[starts])
        del c
        sizes = np.diff(np.append(starts, len(v)))
        count[at] = sizes
        low[at] = v[starts]
        high[at] = v[starts + sizes - 1]
        # One value: every percentile is it; the others are interpolated.
        single = sizes == 1
        for column in ps:
            column[at[single]] = v[starts[single]]
        several = np.flatnonzero(~single)
        if len(several):
            for column, p in zip(ps, PERCENTILES, strict=True):
                column[at[several]] = percentiles(v, starts[several], sizes[several], p)
    return ValueStats((count, low, *ps, high), floats)


def percentiles(
    v: npt.NDArray[np.int64] | npt.NDArray[np.float64], starts: Ints, sizes: Ints, p: int
) -> npt.NDArray[np.float64]:
    """quantiles.percentile(ordered, p) of each group of sorted `v` (its start and size)."""
    lo, r = np.divmod((sizes - 1) * p, 100)
    a = v[starts + lo]
    b = v[starts + np.minimum(lo + 1, sizes - 1)]
    if v.dtype.kind == "f":
        between = (100 * a + r.astype(np.float64) * (b - a)) / 100
        return np.where(r == 0, a, between)
    wide = (np.abs(a) >= _WIDE) | (np.abs(b) >= _WIDE)
    numerator = 100 * np.where(wide, 0, a) + r * np.where(wide, 0, b - a)
    out = numerator / 100  # exact numerators below 2**53 divide as Python's int / int does
    inexact = np.flatnonzero(wide | (np.abs(numerator) >= EXACT_FLOAT))
    for i in inexact.tolist():
        x, y, k = int(a[i]), int(b[i]), int(r[i])
        out[i] = (100 * x + k * (y - x)) / 100
    return np.where(r == 0, a.astype(np.float64), out)


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


def stored_distributions(
    capture: Capture, warmup: WarmUp, counters: Sequence[str]
) -> DistributionTable:
    """distributions.distribution_table from the stored columns."""
    gathered = IdentityColumns(counters)
    for batch in instance_batches(capture, counters, dictionaries=True):
        keys, inverse = frame_groups(batch)
        gathered.add(batch, ~warm_rows(warmup, keys, inverse))
    return gathered.result()
