"""The page's workload identities (docs/html.md, `identities`) as columns, with numpy.

Each instance's identity is kept as two integers (its scope's number and its ordinal); at the end
the identities are numbered (each instance's `ix`), and each one's steady frames and GPU time over
them summed up by identity_table's grouping. No Python object is made per identity: a one-frame
capture of a million workloads has a million identities, and a dict and a list of times for each
took about a gigabyte where these arrays take a few dozen MB.
"""

from __future__ import annotations

from array import array
from collections.abc import Iterable
from typing import Any, Final

import numpy as np
import numpy.typing as npt

from ..capture.read.coverage import IdentityCoverage
from ..capture.read.identity import WorkloadIdentity
from ..capture.read.identity_table import NULL, sorted_values

Ints = npt.NDArray[np.int64]
Bools = npt.NDArray[np.bool_]
Scope = tuple[str, tuple[str, ...], str | None]  # queue, labels, type
_STATISTICS: Final = ("min", "p50", "p90", "p99", "max")


class PageIdentities:
    """Gathers each instance's identity (`add`, in the order of the page's workload columns),
    then numbers the identities (`number`) and sums them up (`columns`, `coverage`)."""

    def __init__(self) -> None:
        self.scopes: dict[Scope | None, int] = {}  # None: an instance without an identity
        self._scope = array("q")
        self._ordinal = array("q")
        self._codes: Ints = np.zeros(0, np.int64)  # each identity's, ascending (`number`)
        self._span = 1

    def add(self, identity: WorkloadIdentity | None) -> None:
        key = None if identity is None else (identity.queue, identity.labels, identity.type)
        self._scope.append(self.scopes.setdefault(key, len(self.scopes)))
        self._ordinal.append(0 if identity is None else identity.ordinal)

    def number(self) -> Ints:
        """Numbers the identities (in the order of their scopes' numbers, then ordinals) and
        returns each instance's number."""
        scope = np.frombuffer(self._scope, np.int64)
        ordinal = np.frombuffer(self._ordinal, np.int64)
        # Ordinals and scopes are each fewer than the instances: the codes fit in int64.
        self._span = int(ordinal.max()) + 1 if len(ordinal) else 1
        codes = scope * self._span + ordinal
        del scope, ordinal
        self._scope, self._ordinal = array("q"), array("q")
        self._codes, ix = np.unique(codes, return_inverse=True)
        return np.asarray(ix, np.int64).reshape(-1)

    def columns(
        self, ix: Ints, steady: Bools, gpu_ns: Ints, label_index: dict[tuple[str, ...], int]
    ) -> dict[str, Any]:
        """The page's `identities`: each identity's scope (an index into `scopes`, each one
        [queue, label stack, type]), ordinal, steady frames it ran in and the count, min,
        percentiles and max of its GPU time over them (null where none was timed), from every
        instance's identity number, whether it ran in a steady frame and its GPU time (NULL:
        untimed). Columns are numpy arrays, NULL (or NaN) standing for null."""
        count = len(self._codes)
        frames = np.bincount(ix[steady], minlength=count)
        timed = steady & (gpu_ns != NULL)
        values = sorted_values(ix[timed], gpu_ns[timed], np.arange(count, dtype=np.int64))
        del timed
        n, statistics = values.columns()
        del values
        none = n == 0
        gpu: dict[str, Any] = {"count": n}
        for name, column in zip(_STATISTICS, statistics, strict=True):
            column[none] = NULL if column.dtype.kind == "i" else np.nan
            gpu[name] = column
        scope, ordinal = np.divmod(self._codes, self._span)
        scopes: list[list[Any]] = []
        for key in self.scopes:  # in their numbers' order
            if key is None:
                scopes.append([None, 0, None])
            else:
                queue, labels, type_ = key
                scopes.append([queue, label_index.setdefault(labels, len(label_index)), type_])
        if None in self.scopes:
            ordinal[scope == self.scopes[None]] = NULL
        return {
            "count": count,
            "scopes": scopes,
            "scope": scope,
            "ordinal": ordinal,
            "frames": frames,
            "gpu": gpu,
        }

    def coverage(self, found: Iterable[IdentityCoverage]) -> dict[str, Any]:
        """A budgeted capture's coverage by identity number (docs/html.md, `budget.coverage`):
        the frames each identity ran in, those that measured it, its median GPU time over them
        and why none did; null for an identity the coverage does not name."""
        count = len(self._codes)
        frames = np.full(count, NULL, np.int64)
        measured = np.full(count, NULL, np.int64)
        median = np.full(count, np.nan)
        reason: list[str | None] = [None] * count
        for c in found:
            at = self.index_of(c.identity)
            if at is not None:
                frames[at], measured[at] = c.frames, c.measured
                if c.median is not None:
                    median[at] = c.median
                reason[at] = c.reason
        return {"frames": frames, "measured": measured, "median": median, "reason": reason}

    def index_of(self, identity: WorkloadIdentity) -> int | None:
        """The identity's number; None for one no instance of the page has."""
        scope = self.scopes.get((identity.queue, identity.labels, identity.type))
        if scope is None or identity.ordinal >= self._span:
            return None
        code = scope * self._span + identity.ordinal
        at = int(np.searchsorted(self._codes, code))
        return at if at < len(self._codes) and self._codes[at] == code else None
