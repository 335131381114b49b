"""Distributions over frames: per workload identity, how its GPU time and each of its counters
spread over the frames it ran in (count, min, p50, p90, p99, max; quantiles.py), warm-up frames
left out (warmup.py).

An identity names one instance per frame (identity.py), so an identity's values are one per
frame, and a capture of one long frame has as many identities as instances. So nothing here
holds a Python object per identity or per value: the result is a `DistributionTable`, columns of
numbers in identity order (8 bytes per statistic), whose rows are made as they are read. It is
gathered one of two ways, which tests/test_report_summary.py holds to the same answer:

- from the instance columns a capture stored when it was finalized (stored_columns.py), with
  numpy, when the `fleet` extra is installed (distribution_columns.py): no Python work per
  instance;
- else from a values stream (values.py) in one pass: `IdentityValues` keeps each instance's
  scope, ordinal and values in typed arrays (24 bytes an instance) and sorts them by identity at
  the end, with numpy (identity_table.py) where they have no counters.
"""

from __future__ import annotations

import heapq
from array import array
from bisect import bisect_left
from collections.abc import Iterator, Mapping, Sequence
from typing import Any, Final, Protocol

import msgspec

from .identity import WorkloadIdentity, labels_of
from .quantiles import Distribution
from .reader import Capture
from .timer_floor import QueueFloors, TimerFloor, near_floor
from .values import InstanceValue, instance_values
from .warmup import WarmUp, warmup_frames

GPU_NS: Final = "gpu_ns"
_CHUNK: Final = 4096  # rows made at once as a table is read
_NO_TIME: Final = -(2**63)  # an untimed instance's GPU time in IdentityValues' array
EXACT_FLOAT: Final = 2**53  # integers up to this are exact as float64


class IdentityDistribution(msgspec.Struct, frozen=True):
    """One workload identity over the steady frames of a capture."""

    identity: WorkloadIdentity
    frames: int  # steady frames it ran in
    gpu_ns: Distribution | None  # over the frames it was timed in; None: never timed
    counters: dict[str, Distribution]  # per counter, over the frames it has a value in
    # The timer's floor of its queue family (timer_floor.py): what its GPU time may hold of the
    # timer's own cost, and the time up to which a GPU time is near the floor; None: unknown.
    gpu_ns_uncertainty: float | None = None
    near_floor_ns: float | None = None

    @property
    def near_floor(self) -> bool | None:
        """Whether its median GPU time is near the timer's floor; None when either is unknown."""
        return near_floor(self.gpu_ns.p50 if self.gpu_ns else None, self.near_floor_ns)

    def value(self, name: str) -> Distribution | None:
        """The distribution of GPU time (`gpu_ns`) or of one counter."""
        return self.gpu_ns if name == GPU_NS else self.counters.get(name)


class Numbers(Protocol):
    """A column of numbers: an array.array, a numpy array or a list."""

    def __len__(self) -> int: ...
    def __getitem__(self, at: slice) -> Any: ...


def _listed(column: Numbers, start: int, stop: int) -> list[Any]:
    part = column[start:stop]
    return part.tolist() if hasattr(part, "tolist") else list(part)


def whole_number(value: int | float) -> int | float:
    """A counter's value as the capture's JSON gave it: the layer writes a whole number without a
    fraction, which reads back as an int (a float column holds it as a float)."""
    if isinstance(value, float) and value.is_integer() and abs(value) <= EXACT_FLOAT:
        return int(value)
    return value


class ValueStats:
    """One value (GPU time or a counter) summed up per identity: its count (0: the identity has
    none) and statistics, a column each, in the table's identity order. `floats`: the min and
    max columns are floats that stand for the capture's numbers (a whole one is an int)."""

    __slots__ = ("columns", "floats")

    def __init__(self, columns: Sequence[Numbers], floats: bool = False) -> None:
        self.columns = tuple(columns)  # count, min, p50, p90, p99, max
        self.floats = floats

    def rows(self, start: int, stop: int) -> list[Distribution | None]:
        count, low, p50, p90, p99, high = (_listed(c, start, stop) for c in self.columns)
        if self.floats:
            low, high = [whole_number(v) for v in low], [whole_number(v) for v in high]
        return [
            Distribution(n, lo, a, b, c, hi) if n else None
            for n, lo, a, b, c, hi in zip(count, low, p50, p90, p99, high, strict=True)
        ]

    def highest_median(self, n: int) -> list[int]:
        """The `n` identities (their places) with the highest p50, those without a value last
        (as if it were -1), ties in identity order: as heapq.nlargest ranks them."""
        count, p50 = self.columns[0], self.columns[2]
        if hasattr(p50, "argsort"):  # numpy's columns: one sort, no Python object per identity
            import numpy as np

            keys = np.where(np.asarray(count) > 0, np.asarray(p50), -1.0)
            return [int(i) for i in np.argsort(-keys, kind="stable")[:n]]
        medians = [m if c else -1.0 for c, m in zip(count, p50, strict=True)]  # type: ignore[call-overload]
        return heapq.nlargest(n, range(len(medians)), key=medians.__getitem__)


class Statistics(Protocol):
    """One value summed up per identity, its rows made as they are read: ValueStats, or
    identity_table.SortedValues."""

    def rows(self, start: int, stop: int) -> list[Distribution | None]: ...
    def highest_median(self, n: int) -> list[int]: ...


class DistributionTable:
    """Every identity's distributions, in identity order (identity.ORDER_SQL's), as columns; it
    reads as a sequence of IdentityDistribution, each made when it is read."""

    def __init__(
        self,
        scopes: Sequence[tuple[str, tuple[str, ...], str | None]],
        scope: Numbers,
        ordinal: Numbers,
        frames: Numbers,
        gpu: Statistics,
        counters: Mapping[str, Statistics],
    ) -> None:
        self._scopes = scopes  # (queue, labels, type) of each scope number
        self._scope = scope  # per identity: its scope's number
        self._ordinal = ordinal
        self._frames = frames
        self._gpu = gpu
        self._counters = dict(sorted(counters.items()))
        self._floors: QueueFloors | None = None

    def with_floors(self, floors: QueueFloors) -> DistributionTable:
        """The table whose rows carry the timer's floor of their queue's family."""
        self._floors = floors
        return self

    def _floor(self, queue: str) -> TimerFloor | None:
        return None if not self._floors else self._floors.of_identity_queue(queue)

    @classmethod
    def empty(cls) -> DistributionTable:
        return cls([], [], [], [], ValueStats([[] for _ in range(6)]), {})

    def __len__(self) -> int:
        return len(self._frames)

    def __bool__(self) -> bool:
        return len(self) > 0

    def __iter__(self) -> Iterator[IdentityDistribution]:
        for start in range(0, len(self), _CHUNK):
            yield from self._rows(start, min(start + _CHUNK, len(self)))

    def __getitem__(self, at: int) -> IdentityDistribution:
        if not -len(self) <= at < len(self):
            raise IndexError(at)
        at %= len(self)
        return self._rows(at, at + 1)[0]

    def _rows(self, start: int, stop: int) -> list[IdentityDistribution]:
        scopes = self._scopes
        gpu = self._gpu.rows(start, stop)
        counters = [(n, s.rows(start, stop)) for n, s in self._counters.items()]
        out = []
        for k, (scope, ordinal, frames) in enumerate(
            zip(
                _listed(self._scope, start, stop),
                _listed(self._ordinal, start, stop),
                _listed(self._frames, start, stop),
                strict=True,
            )
        ):
            queue, labels, type_ = scopes[scope]
            values = {}
            for name, column in counters:
                if (found := column[k]) is not None:
                    values[name] = found
            identity = WorkloadIdentity(queue, labels, type_, ordinal)
            floor = self._floor(queue)
            out.append(
                IdentityDistribution(
                    identity,
                    frames,
                    gpu[k],
                    values,
                    floor.uncertainty_ns if floor else None,
                    floor.near_ns if floor else None,
                )
            )
        return out

    def highest_median_gpu(self, n: int) -> list[IdentityDistribution]:
        """The `n` identities with the highest median GPU time (those never timed last), ties in
        identity order."""
        return [self[i] for i in self._gpu.highest_median(n)]


class IdentityValues:
    """Gathers the values of each identity from a values stream, one instance at a time (`add`),
    in typed arrays, and sums them up at the end (`result`)."""

    def __init__(self) -> None:
        self._scopes: dict[tuple[str, str, str], int] = {}  # (queue, labels JSON, type or "")
        self._scope = array("q")  # per instance
        self._ordinal = array("q")
        self._gpu = array("q")  # _NO_TIME: untimed
        self._counters: dict[str, tuple[array[int], list[int | float]]] = {}  # instance, value

    def __len__(self) -> int:
        return len(self._scope)

    def add(self, v: InstanceValue) -> None:
        queue, labels, type_text, ordinal = v.order
        key = (queue, labels, type_text)
        scope = self._scopes.get(key)
        if scope is None:
            scope = self._scopes[key] = len(self._scopes)
        at = len(self._scope)
        self._scope.append(scope)
        self._ordinal.append(ordinal)
        self._gpu.append(_NO_TIME if v.gpu_ns is None else v.gpu_ns)
        if v.counters:
            for name, value in v.counters.items():
                found = self._counters.get(name)
                if found is None:
                    found = self._counters[name] = (array("q"), [])
                found[0].append(at)
                found[1].append(value)

    def label_totals(self) -> Iterator[tuple[tuple[str, ...], int, int, int]]:
        """Per label path: its labels, its instances, the timed ones and their GPU time."""
        totals: dict[str, list[int]] = {}
        per_scope = [[0, 0, 0] for _ in self._scopes]
        for scope, ns in zip(self._scope, self._gpu, strict=True):
            found = per_scope[scope]
            found[0] += 1
            if ns != _NO_TIME:
                found[1] += 1
                found[2] += ns
        for (_, labels, _), scope in self._scopes.items():
            found = totals.setdefault(labels, [0, 0, 0])
            for k in range(3):
                found[k] += per_scope[scope][k]
        for labels, (n, timed, ns) in totals.items():
            yield labels_of(labels), n, timed, ns

    def result(self) -> DistributionTable:
        """Every identity gathered, in identity order: with numpy (identity_table.py, sorted in
        place of the arrays) where there are no counters, else one identity at a time."""
        if not self._counters:
            from .identity_table import Instances

            gathered = Instances.of(self._scopes, self._scope, self._ordinal, self._gpu)
            self._scope, self._ordinal, self._gpu = array("q"), array("q"), array("q")
            return gathered.table()
        keys = sorted(self._scopes)
        rank = array("q", bytes(8 * len(keys)))
        for r, key in enumerate(keys):
            rank[self._scopes[key]] = r
        span = max(self._ordinal, default=0) + 1
        pairs = zip(self._scope, self._ordinal, strict=True)
        codes = array("q", (rank[s] * span + o for s, o in pairs))
        scope, ordinal, frames = array("q"), array("q"), array("q")
        identities = array("q")  # each identity's code, ascending
        gpu = _StatColumns()
        for code, instances in _grouped(codes):
            identities.append(code)
            s, o = divmod(code, span)
            scope.append(s)
            ordinal.append(o)
            frames.append(len(instances))
            gpu.add(Distribution.of([v for i in instances if (v := self._gpu[i]) != _NO_TIME]))
        counters = {}
        for name, (at, values) in self._counters.items():
            column = _StatColumns()
            for code, instances in _grouped(array("q", (codes[i] for i in at))):
                column.skip_to(bisect_left(identities, code))
                column.add(Distribution.of([values[i] for i in instances]))
            column.skip_to(len(identities))
            counters[name] = column.stats()
        scopes = [(q, labels_of(labels), t or None) for q, labels, t in keys]
        return DistributionTable(scopes, scope, ordinal, frames, gpu.stats(), counters)


def _grouped(codes: array[int]) -> Iterator[tuple[int, list[int]]]:
    """The positions of `codes` grouped by code, codes ascending, each group's positions
    ascending: one sort of a list of integers (a key each), no object per group kept."""
    n = len(codes)
    keyed = [c * n + i for i, c in enumerate(codes)]
    keyed.sort()
    group: list[int] = []
    current = None
    for k in keyed:
        code, at = divmod(k, n)
        if code != current:
            if group:
                yield current, group  # type: ignore[misc]
            current, group = code, []
        group.append(at)
    if group:
        yield current, group  # type: ignore[misc]


class _StatColumns:
    """ValueStats' columns, filled one identity at a time."""

    def __init__(self) -> None:
        self.count = array("q")
        self.low = _Numbers()
        self.high = _Numbers()
        self.p = (array("d"), array("d"), array("d"))

    def skip_to(self, identity: int) -> None:
        """No value for the identities up to `identity`."""
        while len(self.count) < identity:
            self.add(None)

    def add(self, d: Distribution | None) -> None:
        if d is None:
            self.count.append(0)
            self.low.append(0)
            self.high.append(0)
            for column in self.p:
                column.append(0.0)
            return
        self.count.append(d.count)
        self.low.append(d.min)
        self.high.append(d.max)
        for column, value in zip(self.p, (d.p50, d.p90, d.p99), strict=True):
            column.append(value)

    def stats(self) -> ValueStats:
        return ValueStats((self.count, self.low.values, *self.p, self.high.values))


class _Numbers:
    """A column of numbers as the values stream gave them: an int64 array (8 bytes a number, not
    a Python object) while they are integers that fit, a list from the first that is not."""

    def __init__(self) -> None:
        self.values: array[int] | list[int | float] = array("q")

    def append(self, value: int | float) -> None:
        values = self.values
        if isinstance(values, array):
            if type(value) is int and -(2**63) <= value < 2**63:
                values.append(value)
                return
            self.values = listed = list[int | float](values)
            listed.append(value)
        else:
            values.append(value)


def distributions(
    capture: Capture, warmup: WarmUp | None = None, *, counters: bool = True
) -> list[IdentityDistribution]:
    """Per identity of the capture, its GPU time and counters over the steady frames (warm-up
    frames by the automatic rule unless `warmup` says otherwise), in identity order."""
    return list(distribution_table(capture, warmup, counters=counters))


def distribution_table(
    capture: Capture,
    warmup: WarmUp | None = None,
    *,
    counters: bool = True,
    stored: bool = True,
) -> DistributionTable:
    """distributions() as a DistributionTable; from the stored columns where the capture has
    them and numpy is installed, unless `stored` is False."""
    warmup = warmup if warmup is not None else warmup_frames(capture)
    if stored:
        from .columnar import stored_columns_for

        names = capture.counter_names() if counters else ()
        if stored_columns_for(capture, names):
            from .distribution_columns import stored_distributions

            return stored_distributions(capture, warmup, names).with_floors(capture.queue_floors())
    gathered = IdentityValues()
    for v in warmup.steady(instance_values(capture, counters=counters)):
        gathered.add(v)
    return gathered.result().with_floors(capture.queue_floors())
