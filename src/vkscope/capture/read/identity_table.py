"""Every identity's distributions (distributions.py) from its instances' values in numpy arrays,
in as little memory as an exact answer allows: numpy only (no Arrow), so that both ways of
reading a capture use it (distribution_columns.py from the stored columns, IdentityValues from
the values stream).

An identity is one code per instance, its scope's rank times the ordinals' span plus its
ordinal: an int32 where every code fits (a capture of up to 2**31 identities' worth of scopes
and ordinals), else an int64. The instances are sorted once, by code and GPU time, and what is
kept is each identity's values in order (`SortedValues`: 8 bytes a value, 8 an identity); its
statistics (quantiles.py's, to the last bit: integer GPU times in exact integer arithmetic,
float counters in the same operations in the same order as `percentile`) are computed when its
row is read, a chunk of rows at a time. A one-frame capture of a million instances has a million
identities: its table takes about 28 MB instead of 64, and sorting it about 28 MB more.
"""

from __future__ import annotations

from array import array
from collections.abc import Sequence
from typing import Any, Final

import numpy as np
import numpy.typing as npt

from .distributions import EXACT_FLOAT, DistributionTable, Statistics, whole_number
from .identity import labels_of
from .quantiles import PERCENTILES, Distribution

Ints = npt.NDArray[np.int64]
Codes = npt.NDArray[np.signedinteger[Any]]  # int32 where the numbers fit, else int64
Values = npt.NDArray[np.int64] | npt.NDArray[np.float64]
NULL: Final = -(2**63)  # a NULL integer (an untimed instance's GPU time), as the arrays hold it
_WIDE: Final = 2**53  # integer values from here on are interpolated in Python (no overflow)
_RANKED: Final = 65_536  # identities whose statistics are computed at once


class SortedValues:
    """One value (GPU time or a counter) of every identity: its values in ascending order,
    identity after identity, and where each identity's begin (`bounds`, one more than there are
    identities). `floats`: the values are floats that stand for the capture's numbers (a whole
    one is an int). Reads as distribution.ValueStats does."""

    __slots__ = ("bounds", "floats", "values")

    def __init__(self, values: Values, bounds: Ints, floats: bool = False) -> None:
        self.values = values
        self.bounds = bounds
        self.floats = floats

    def _stats(
        self, start: int, stop: int
    ) -> tuple[Ints, Values, Values, list[npt.NDArray[np.float64]], Ints]:
        """The count, min, max and percentiles of the identities from `start` to `stop` that
        have a value, and which they are (their places from `start`)."""
        begin = self.bounds[start:stop]
        sizes = self.bounds[start + 1 : stop + 1] - begin
        has = np.flatnonzero(sizes)
        begin, sizes = begin[has], sizes[has]
        v = self.values
        ps = [percentiles(v, begin, sizes, p) for p in PERCENTILES]
        return sizes, v[begin], v[begin + sizes - 1], ps, has

    def rows(self, start: int, stop: int) -> list[Distribution | None]:
        sizes, low, high, ps, has = self._stats(start, stop)
        out: list[Distribution | None] = [None] * (stop - start)
        lows, highs = low.tolist(), high.tolist()
        if self.floats:
            lows, highs = [whole_number(x) for x in lows], [whole_number(x) for x in highs]
        for at, n, lo, a, b, c, hi in zip(
            has.tolist(), sizes.tolist(), lows, *(p.tolist() for p in ps), highs, strict=True
        ):
            out[at] = Distribution(n, lo, a, b, c, hi)
        return out

    def columns(self) -> tuple[Ints, list[npt.NDArray[Any]]]:
        """rows() of every identity as columns, no object per identity: each one's count of
        values, and its min, percentiles (PERCENTILES) and max (0 where it has no value; the
        percentiles as floats, the min and max in the values' type). Computed a chunk of
        identities at a time, so that the temporary arrays stay a few MB."""
        count = len(self.bounds) - 1
        counts = np.zeros(count, np.int64)
        kinds = (self.values.dtype, *(np.float64 for _ in PERCENTILES), self.values.dtype)
        out: list[npt.NDArray[Any]] = [np.zeros(count, kind) for kind in kinds]
        for start in range(0, count, _RANKED):
            sizes, low, high, ps, has = self._stats(start, min(start + _RANKED, count))
            at = has + start
            counts[at] = sizes
            for column, found in zip(out, (low, *ps, high), strict=True):
                column[at] = found
        return counts, out

    def highest_median(self, n: int) -> list[int]:
        """The `n` identities (their places) with the highest p50, those without a value last
        (as if it were -1), ties in identity order: as heapq.nlargest ranks them. The medians
        are computed a chunk at a time, each chunk's best `n` kept."""
        count = len(self.bounds) - 1
        places: list[Ints] = []
        keys: list[npt.NDArray[np.float64]] = []
        for start in range(0, count, _RANKED):
            stop = min(start + _RANKED, count)
            key = np.full(stop - start, -1.0)
            _, _, _, (p50, *_), has = self._stats(start, stop)
            key[has] = p50
            best = np.argsort(-key, kind="stable")[:n]
            places.append(best + start)
            keys.append(key[best])
        if not places:
            return []
        place, key = np.concatenate(places), np.concatenate(keys)
        return [int(place[i]) for i in np.lexsort((place, -key))[:n]]


def percentiles(v: Values, starts: Ints, sizes: Ints, p: int) -> npt.NDArray[np.float64]:
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


def _bounds(sizes: Ints) -> Ints:
    bounds = np.zeros(len(sizes) + 1, np.int64)
    np.cumsum(sizes, out=bounds[1:])
    return bounds


class Instances:
    """Instances' identities and values, gathered batch by batch (`add`) into arrays made once
    for `capacity` instances (grown where more come): the scope's number (int32), the ordinal
    (int32 while it fits), the GPU time (NULL: untimed) and per counter the instances that have
    it and their values. Arrays made once leave no holes in the heap between the batches'
    temporary arrays, and the pages of a capacity never reached are never touched."""

    def __init__(self, counters: Sequence[str] = (), capacity: int = 0) -> None:
        self.scope_of: dict[tuple[str, str, str], int] = {}  # (queue, labels JSON, type or "")
        self._scope = np.empty(capacity, np.int32)
        self._ordinal: Codes = np.empty(capacity, np.int32)
        self._gpu = np.empty(capacity, np.int64)
        self._counters: dict[str, list[tuple[Ints, npt.NDArray[np.float64]]]] = {
            n: [] for n in counters
        }
        self.count = 0

    @classmethod
    def of(
        cls,
        scope_of: dict[tuple[str, str, str], int],
        scope: array[int],
        ordinal: array[int],
        gpu: array[int],
    ) -> Instances:
        """Instances gathered already: int64 arrays of each one's scope number, ordinal and GPU
        time (NULL: untimed), taken as they are (not copied; the scopes made int32)."""
        found = cls()
        found.scope_of = scope_of
        found._scope = np.frombuffer(scope, np.int64).astype(np.int32)
        found._ordinal = np.frombuffer(ordinal, np.int64)
        found._gpu = np.frombuffer(gpu, np.int64)
        found.count = len(found._gpu)
        return found

    def add(
        self,
        scope: npt.NDArray[np.int32],
        ordinal: Ints,
        gpu: Ints,
        counters: dict[str, tuple[Ints, npt.NDArray[np.float64]]] | None = None,
    ) -> None:
        """Instances `count` on: their scopes' numbers, ordinals and GPU times; per counter the
        places among them of those that have it, and its values."""
        at, n = self.count, len(scope)
        if at + n > len(self._gpu):
            size = max(2 * len(self._gpu), at + n)
            self._scope, self._ordinal, self._gpu = (
                _grown(a, size) for a in (self._scope, self._ordinal, self._gpu)
            )
        if n and self._ordinal.dtype == np.int32 and ordinal.max() >= 2**31:
            self._ordinal = self._ordinal.astype(np.int64)
        for name, (places, values) in (counters or {}).items():
            self._counters[name].append((places + at, values))
        self._scope[at : at + n] = scope
        self._ordinal[at : at + n] = ordinal
        self._gpu[at : at + n] = gpu
        self.count += n

    def table(self) -> DistributionTable:
        """Every identity gathered, in identity order (the arrays are let go as they are
        read)."""
        n = self.count
        keys = sorted(self.scope_of)
        rank = np.zeros(len(keys), np.int64)
        for r, key in enumerate(keys):
            rank[self.scope_of[key]] = r
        scope, ordinal, gpu = self._scope[:n], self._ordinal[:n], self._gpu[:n]
        self._scope, self._ordinal, self._gpu = (
            np.empty(0, a.dtype) for a in (scope, ordinal, gpu)
        )
        span = int(ordinal.max()) + 1 if n else 1
        narrow = len(keys) * span < 2**31
        codes: Codes = scope if narrow else np.empty(n, np.int64)
        for start in range(0, n, _RANKED):  # in place where they fit: no array of n temporaries
            part = slice(start, start + _RANKED)
            codes[part] = rank[scope[part]] * span + ordinal[part]
        del scope, ordinal
        originals: Codes | None = codes.copy() if any(self._counters.values()) else None
        order = np.lexsort((gpu, codes))  # by identity, then GPU time (untimed first)
        codes = codes[order]
        gpu = gpu[order]
        del order
        starts = run_starts(codes)
        identities: Codes = codes[starts]
        frames = np.diff(np.append(starts, len(codes))).astype(np.int32)
        del codes
        timed = gpu != NULL
        counts = np.add.reduceat(timed, starts, dtype=np.int64) if len(starts) else starts
        del starts
        stats = SortedValues(gpu[timed], _bounds(counts))
        del gpu, timed, counts
        counters: dict[str, Statistics] = {}
        for name, parts in self._counters.items():
            counters[name] = _counter(originals, parts, identities)
        self._counters = {}
        scope_of, ordinals = np.divmod(identities, span)
        scopes = [(q, labels_of(labels), t or None) for q, labels, t in keys]
        return DistributionTable(
            scopes, scope_of.astype(np.int32), ordinals, frames, stats, counters
        )


def _grown(array: Codes, size: int) -> Codes:
    grown = np.empty(size, array.dtype)
    grown[: len(array)] = array
    return grown


def _counter(
    codes: Codes | None,
    parts: list[tuple[Ints, npt.NDArray[np.float64]]],
    identities: Codes,
) -> SortedValues:
    """One counter's values per identity, from the places of the instances that have it."""
    if not parts or codes is None:
        return SortedValues(np.zeros(0), np.zeros(len(identities) + 1, np.int64), True)
    at = np.concatenate([a for a, _ in parts])
    values = np.concatenate([v for _, v in parts])
    parts.clear()
    return sorted_values(codes[at], values, identities, floats=True)


def run_starts(codes: Codes) -> Ints:
    """Where each run of equal codes begins in sorted `codes`."""
    first = np.empty(len(codes), bool)
    first[:1] = True
    np.not_equal(codes[1:], codes[:-1], out=first[1:])
    return np.flatnonzero(first)


def sorted_values(
    codes: Codes, values: Values, identities: Codes, floats: bool = False
) -> SortedValues:
    """The `values` of each identity of `identities` (ascending codes), those whose `codes` are
    its own, in order; none for an identity without. `floats`: as SortedValues'."""
    order = np.lexsort((values, codes))
    c, v = codes[order], values[order]
    del order
    starts = run_starts(c)
    sizes = np.zeros(len(identities), np.int64)
    sizes[np.searchsorted(identities, c[starts])] = np.diff(np.append(starts, len(c)))
    return SortedValues(v, _bounds(sizes), floats)
