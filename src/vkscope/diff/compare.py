"""Matches the workloads of two captures by identity and judges every cost change.

Each capture hands its instances over sorted by identity (capture/read/queries.by_identity, the
one definition of identity: capture/read/identity.py, docs/diff.md "Identity"), the two streams
are joined identity by identity (merge_by_identity), and Python only ever holds the per-frame
values of one identity. Each identity's verdict goes into the verdict table (verdicts.py), which
the output then reads back in whatever order it needs. Nothing grows with the size of the
captures but temporary files: SQLite's sorts, and the verdict table.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

from ..capture import Capture, CaptureError, open_capture
from ..capture.read.identity import IdentityOrder, WorkloadIdentity, labels_of
from ..capture.read.queries import (
    COUNTER_NAME,
    GPU_NS,
    by_identity,
    frame_value_totals,
    merge_by_identity,
)
from ..capture.read.records import IdentifiedValue
from ..capture.read.timer_floor import QueueFloors, near_floor
from ..capture.read.warmup import WarmUp, warmup_frames
from .clocks import ClockError, Clocks, clocks_of
from .stats import (
    BUDGETED,
    IMPROVEMENT,
    REGRESSION,
    STATUSES,
    Rule,
    Summary,
    Verdict,
    judge,
    median,
    summarize,
)
from .verdicts import Verdicts

MATCHED: Final = "matched"
ADDED: Final = "added"
REMOVED: Final = "removed"
BASE, NEW = 0, 1

# A matched, added or removed workload is named by its identity.
Identity = WorkloadIdentity


class DiffInputError(Exception):
    """A capture that cannot be compared; the message says which file and why."""


@dataclass(frozen=True, slots=True)
class Side:
    frames: int  # frames it ran in, timed or not
    summary: Summary  # over the frames it was timed in
    left_out: int = 0  # frames a cost budget left it out of (docs/budget.md)
    # Its median GPU time is near the timer's floor (capture/read/timer_floor.py); None: no
    # floor known, or a counter compared.
    near_floor: bool | None = None


@dataclass(frozen=True, slots=True)
class Row:
    kind: str  # MATCHED, ADDED or REMOVED
    identity: Identity
    base: Side | None  # None when added
    new: Side | None  # None when removed
    verdict: Verdict | None  # for matched workloads only


@dataclass(frozen=True, slots=True)
class CaptureFacts:
    path: Path
    status: str
    schema_version: int
    workloads: int  # instances
    timed_workloads: int
    frames: int  # frames with submitted work
    timed_frames: int  # steady frames with at least one timed workload
    workloads_per_frame: float  # median over frames with work
    gpu_per_frame: Summary  # summed workload GPU time per timed steady frame
    warmup: WarmUp  # the warm-up frames, left out of every distribution and verdict
    warmup_frames: int  # of them, frames with work
    budget_percent: float | None = None  # the cost budget it was captured under


class Diff:
    """Two captures compared: facts about each, the frame totals, and the verdict table.

    Use as a context manager (or call close()): the verdicts live in a temporary database.
    """

    def __init__(
        self,
        base: Path | str,
        new: Path | str,
        rule: Rule,
        metric: str = GPU_NS,
        warmup: int | None = None,
        *,
        normalize_clock: bool = False,
    ) -> None:
        """`warmup`: leave out the first N frames of each capture as warm-up instead of the
        automatic rule (capture/read/warmup.py). `normalize_clock` scales the new capture's GPU
        times to the base's graphics clock (clocks.py: an approximation)."""
        self.rule = rule
        self.metric = metric
        if metric != GPU_NS and not COUNTER_NAME.fullmatch(metric):
            raise DiffInputError(
                f"--metric {metric!r}: gpu_ns or a counter name (docs/counters.md)"
            )
        if normalize_clock and metric != GPU_NS:
            raise DiffInputError("--normalize-clock scales GPU times: not with --metric")
        paths = (Path(base), Path(new))
        self._verdicts = Verdicts()
        captures: list[Capture] = []
        try:
            for path in paths:
                captures.append(open_capture(path))
            self.clocks: Clocks = clocks_of(captures[BASE], captures[NEW], normalize_clock)
            scale = self.clocks.new_scale
            warmups = [warmup_frames(c, warmup) for c in captures]
            self.base = self._facts(captures[BASE], warmups[BASE])
            self.new = self._facts(captures[NEW], warmups[NEW], scale)
            self.total = judge(self.base.gpu_per_frame, self.new.gpu_per_frame, rule)
            if self.base.budget_percent is not None or self.new.budget_percent is not None:
                self.total = Verdict(BUDGETED, None, None, None)
            streams = (
                w.steady(by_identity(c, metric)) for c, w in zip(captures, warmups, strict=True)
            )
            floors = [c.queue_floors() if metric == GPU_NS else None for c in captures]
            self._verdicts.fill(
                _verdict_rows(merge_by_identity(*streams), rule, scale, (floors[BASE], floors[NEW]))
            )
            self.counts = self._counts()
            self.queues = self._verdicts.queues()
        except (CaptureError, sqlite3.Error) as exc:
            self._verdicts.close()
            raise _problem(exc) from None
        except ClockError as exc:
            self._verdicts.close()
            raise DiffInputError(str(exc)) from None
        except BaseException:
            self._verdicts.close()
            raise
        finally:
            for capture in captures:
                capture.close()

    def __enter__(self) -> Diff:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        self._verdicts.close()

    @property
    def regressed(self) -> bool:
        return self.counts[REGRESSION] > 0 or self.total.status == REGRESSION

    # -- reading the verdicts back -------------------------------------------------------------

    def rows(
        self, kind: str, statuses: tuple[str, ...] = (), limit: int | None = None
    ) -> Iterator[Row]:
        """Matched workloads by |change| (largest first), added and removed ones by cost."""
        order = "delta" if kind == MATCHED else "n_median" if kind == ADDED else "b_median"
        for r in self._verdicts.rows(kind, order, statuses, limit):
            yield _row(r)

    # -- building -------------------------------------------------------------------------------

    def _facts(self, capture: Capture, warmup: WarmUp, scale: float = 1.0) -> CaptureFacts:
        path, meta = capture.path, capture.meta
        counts: list[int] = []
        totals: list[int] = []
        timed = 0
        left_out = 0
        for process, device, frame, n, n_timed, total in frame_value_totals(capture, self.metric):
            counts.append(n)
            timed += n_timed
            if (process, device, frame) in warmup:
                left_out += 1
            elif n_timed:
                totals.append(total if scale == 1.0 else round(total * scale))
        workloads = sum(counts)
        if not workloads:
            why = (
                "no application connected while it was recorded"
                if not meta.connections
                else f"status {meta.status}, {meta.connections} connection(s)"
            )
            raise DiffInputError(
                f"{path}: the capture holds no workloads ({why}): nothing to compare"
            )
        if not timed and self.metric != GPU_NS:
            raise DiffInputError(
                f"{path}: no values of counter {self.metric!r} in this capture "
                f"({workloads:,} workloads): record both captures with vkscope run --counters"
            )
        budget = capture.budget_percent()
        if not timed and budget is not None:
            raise DiffInputError(
                f"{path}: no GPU timings in this capture: its cost budget of {budget:g}% "
                f"measured none of its {workloads:,} workloads (docs/budget.md)"
            )
        if not timed:
            raise DiffInputError(
                f"{path}: no GPU timings in this capture ({workloads:,} workloads, none timed): "
                "costs can only be compared between captures recorded with the layer's timing "
                "setting on"
            )
        return CaptureFacts(
            path=path,
            status=meta.status,
            schema_version=meta.schema_version,
            workloads=workloads,
            timed_workloads=timed,
            frames=len(counts),
            timed_frames=len(totals),
            workloads_per_frame=median(counts),
            gpu_per_frame=summarize(totals),
            warmup=warmup,
            warmup_frames=left_out,
            budget_percent=budget,
        )

    def _counts(self) -> dict[str, int]:
        counts = dict.fromkeys((MATCHED, ADDED, REMOVED, *STATUSES), 0)
        for kind, status, n in self._verdicts.counts():
            counts[kind] += n
            if status is not None:
                counts[status] += n
        return counts


def _problem(exc: CaptureError | sqlite3.Error) -> DiffInputError:
    """What an error met while reading the captures, or writing the verdicts, means."""
    text = str(exc)
    if "full" in text or "temporary" in text:
        said = exc.reason if isinstance(exc, CaptureError) else repr(text)
        return DiffInputError(
            "out of room for the comparison's temporary files (SQLITE_TMPDIR, /var/tmp or /tmp): "
            f"SQLite says {said}"
        )
    return DiffInputError(text)


def _verdict_rows(
    identities: Iterator[tuple[IdentityOrder, list[list[IdentifiedValue]]]],
    rule: Rule,
    new_scale: float = 1.0,
    floors: tuple[QueueFloors | None, QueueFloors | None] = (None, None),
) -> Iterator[tuple[Any, ...]]:
    """One verdict row per identity (verdicts.COLUMNS), each summed up the moment the next
    identity starts; the new capture's values times `new_scale`; each side's median judged
    against the timer's floor of its queue family in `floors` (GPU times only)."""
    for key, (base_values, new_values) in identities:
        frames = (len(base_values), len(new_values))
        base = summarize([v.value for v in base_values if v.value is not None])  # type: ignore[misc]
        new_found = [v.value for v in new_values if v.value is not None]
        if new_scale != 1.0:
            new_found = [round(v * new_scale) for v in new_found]
        new = summarize(new_found)  # type: ignore[arg-type]
        left_out = (sum(v.left_out for v in base_values), sum(v.left_out for v in new_values))
        if frames[BASE] and frames[NEW]:
            kind = MATCHED
            v: Verdict | None = judge(base, new, rule)
        else:
            kind = ADDED if frames[NEW] else REMOVED
            v = None
        yield (
            kind, v.status if v else None, *key,
            frames[BASE], base.samples, base.median_ns, base.noise_ns, left_out[BASE],
            frames[NEW], new.samples, new.median_ns, new.noise_ns, left_out[NEW],
            v.delta_ns if v else None, v.delta_pct if v else None, v.bound_ns if v else None,
            base.min_ns, base.p90_ns, base.p99_ns, base.max_ns,
            new.min_ns, new.p90_ns, new.p99_ns, new.max_ns,
            _near(floors[BASE], base_values, base.median_ns),
            _near(floors[NEW], new_values, new.median_ns),
        )  # fmt: skip


def _near(
    floors: QueueFloors | None, values: list[IdentifiedValue], median_ns: float | None
) -> bool | None:
    """Whether an identity's median is near the timer's floor of its queue's family (the rule
    the distributions follow: QueueFloors.of_identity_queue)."""
    if not floors or not values:
        return None
    floor = floors.of_identity_queue(values[0].queue_key)
    return near_floor(median_ns, floor.near_ns if floor else None)


def _row(r: tuple[Any, ...]) -> Row:
    kind, status = r[0], r[1]
    identity = Identity(queue=r[2], labels=labels_of(r[3]), type=r[4] or None, ordinal=r[5])
    base = (
        Side(r[6], Summary(r[7], r[8], r[9], *r[19:23]), r[10], _bool(r[27]))
        if kind != ADDED
        else None
    )
    new = (
        Side(r[11], Summary(r[12], r[13], r[14], *r[23:27]), r[15], _bool(r[28]))
        if kind != REMOVED
        else None
    )
    verdict = Verdict(status, r[16], r[17], r[18]) if kind == MATCHED else None
    return Row(kind, identity, base, new, verdict)


def _bool(value: int | None) -> bool | None:
    return None if value is None else bool(value)


__all__ = [
    "ADDED",
    "GPU_NS",
    "IMPROVEMENT",
    "MATCHED",
    "REGRESSION",
    "REMOVED",
    "CaptureFacts",
    "Diff",
    "DiffInputError",
    "Identity",
    "Row",
    "Side",
]
