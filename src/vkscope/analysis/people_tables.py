"""The summary tables as people read them (terminal and Markdown): a title, the rows, and a line
for what was left out. Each shows a bounded number of rows, so a summary is as long for a capture
of a million workloads as for one of a hundred; `--all` shows every row, and JSON and CSV always
hold them all.
"""

from __future__ import annotations

import heapq
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from itertools import chain, islice
from typing import Any, Final

from ..capture.read.distributions import IdentityDistribution
from .context import ReportContext
from .coverage import identity_rows
from .rows import (
    COMMAND_BUFFERS,
    COSTLIEST,
    DISTRIBUTIONS,
    IDENTITIES,
    LABELS,
    QUEUES,
    Column,
    counter_columns,
    distribution_rows,
    label_rows,
    summary_rows,
)
from .summary import Summary

LABEL_ROWS: Final = 40  # label subtrees shown
COMMAND_BUFFER_ROWS: Final = 40
QUEUE_ROWS: Final = 40
MIN_DISTRIBUTION_ROWS: Final = 10  # identities shown, at the least (else --top)
IDENTITY_ROWS: Final = 20  # identities shown in each of the two lists of a budgeted capture


class Rows:
    """A table's rows for people: the first `limit` (None: all), then `more()` says what was
    left out, once they have been read."""

    def __init__(self, rows: Iterable[tuple[Any, ...]], limit: int | None, more: str = "") -> None:
        self._rows = iter(rows)
        self._limit = limit
        self._more = more
        self._left = 0

    def __iter__(self) -> Iterator[tuple[Any, ...]]:
        if self._limit is None:
            yield from self._rows
            return
        yield from islice(self._rows, self._limit)
        self._left = sum(1 for _ in self._rows)

    def more(self) -> str:
        """What was left out ("" when nothing was), with how many."""
        return self._more.format(n=f"{self._left:,}") if self._left else ""


@dataclass(frozen=True, slots=True)
class PeopleTable:
    name: str
    title: str
    columns: tuple[Column, ...]
    rows: Rows


def people_tables(summary: Summary, context: ReportContext) -> Iterator[PeopleTable]:
    """The summary tables the report holds, in order, as people see them."""
    tables = context.tables
    if "queues" in tables and summary.queues:
        yield PeopleTable(
            "queues",
            f"Queues over {summary_frames(summary)}"
            + (": GPU time per frame" if context.timing.any else ""),
            QUEUES,
            Rows(summary_rows("queues", summary, context), _limit(QUEUE_ROWS, context),
                 "… {n} more queues (--all: all)"),
        )  # fmt: skip
    # Without GPU times (or the counter sorted by) there is nothing to rank.
    if "costliest" in tables and context.ranked:
        columns = COSTLIEST + counter_columns(context.sort_columns(), context.impacted())
        if context.sort == "gpu_ns":
            title = (
                f"Costliest workloads (of {summary_frames(summary)}, "
                f"{summary.timed:,} timed workloads)"
            )
        else:
            title = f"Most {context.sort} (of {summary_frames(summary)})"
        yield PeopleTable(
            "costliest", title, columns, Rows(summary_rows("costliest", summary, context), None)
        )
    if "distributions" in tables and summary.distributions and context.timing.any:
        n = max(summary.costliest.n, MIN_DISTRIBUTION_ROWS)
        items: Iterable[IdentityDistribution] = summary.distributions
        if not context.everything:
            items = summary.distributions.highest_median_gpu(n)
        title = f"Distributions over {summary_frames(summary)}: " + (
            "every workload"
            if context.everything or len(summary.distributions) <= n
            else f"the {n} of {len(summary.distributions):,} workloads with the highest "
            "median GPU time"
        )
        rows = Rows(distribution_rows(items), None)
        yield PeopleTable("distributions", title, DISTRIBUTIONS, rows)
    if "labels" in tables and context.timing.any:
        labels = label_rows(summary.labels.rows())
        rows = Rows(labels, _limit(LABEL_ROWS, context), "… {n} more subtrees")
        yield PeopleTable("labels", "GPU time by label subtree", LABELS, rows)
    if "command_buffers" in tables and context.command_buffers:
        columns = COMMAND_BUFFERS + counter_columns(
            context.command_buffer_counters, context.impacted()
        )
        yield PeopleTable(
            "command_buffers",
            "Counters per command buffer (command_buffer scope)",
            columns,
            Rows(summary_rows("command_buffers", summary, context),
                 _limit(COMMAND_BUFFER_ROWS, context), "… {n} more command buffers (--all: all)"),
        )  # fmt: skip
    if "identities" in tables and context.identities is not None:
        yield from _identity_tables(context)


_MEASURED_COLUMNS: Final = tuple(c for c in IDENTITIES if c.name != "reason")
_NEVER_COLUMNS: Final = tuple(c for c in IDENTITIES if c.name not in ("gpu_ns", "measured"))
_MEDIAN: Final = next(i for i, c in enumerate(IDENTITIES) if c.name == "gpu_ns")
_REASON: Final = next(i for i, c in enumerate(IDENTITIES) if c.name == "reason")
_MEASURED: Final = next(i for i, c in enumerate(IDENTITIES) if c.name == "measured")


def _identity_tables(context: ReportContext) -> Iterator[PeopleTable]:
    """A capture under a cost budget: its costliest identities by their median over the frames
    that measured each, then those never measured, each cut at IDENTITY_ROWS unless --all (CSV
    and JSON have every one, with every column)."""
    identities = context.identities
    assert identities is not None
    costly: list[tuple[float, int, tuple[Any, ...]]] = []
    limit = _limit(IDENTITY_ROWS, context)
    for n, row in enumerate(identity_rows(identities())):
        if row[_REASON] is None and row[_MEDIAN] is not None:
            entry = (row[_MEDIAN], -n, row[:_REASON] + row[_REASON + 1 :])
            if limit is None or len(costly) < limit:
                heapq.heappush(costly, entry)
            else:
                heapq.heappushpop(costly, entry)
    title = "Costliest workloads by identity (median over the frames that measured each)"
    rows = Rows((r for _, _, r in sorted(costly, reverse=True)), None)
    yield PeopleTable("identities", title, _MEASURED_COLUMNS, rows)
    never = (
        tuple(v for i, v in enumerate(row) if i not in (_MEDIAN, _MEASURED))
        for row in identity_rows(identities())
        if row[_REASON] is not None
    )
    first = next(never, None)
    if first is not None:
        yield PeopleTable(
            "identities", "Workloads never measured", _NEVER_COLUMNS,
            Rows(chain((first,), never), limit, "… {n} more (--all: all)"),
        )  # fmt: skip


def summary_frames(summary: Summary) -> str:
    """`148 frames` or `148 frames, 2 warm-up frames left out`."""
    text = f"{summary.frames:,} frame" + ("" if summary.frames == 1 else "s")
    warm = len(summary.warmup_met)
    if warm:
        text += f", {warm:,} warm-up left out"
    return text


def _limit(rows: int, context: ReportContext) -> int | None:
    return None if context.everything else rows
