"""The tables a report is made of, column by column, as raw values that every format shares.

CSV and JSON write the raw values (times in integer nanoseconds, shares as fractions of 1);
terminal and Markdown tables show them for people (`1.25 ms`, `12.5%`) and leave out the columns
marked `wide`, which their headings or the details column already say.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Any, Final

import msgspec

from ..capture import CommandBufferCounters, WorkloadInstance
from ..capture.read.distributions import IdentityDistribution
from ..capture.read.gpu_join import StateSpan, WorkloadState
from ..capture.read.quantiles import Distribution
from ..counters.derived import derived_metrics
from ..shown_text import terminal_text
from .context import ReportContext
from .coverage import identity_rows
from .describe import describe, duration_text, key_fields, share_text
from .frames import FrameKey, FrameWork, QueueWork
from .summary import Costly, LabelRow, QueueSummary, Summary


@dataclass(frozen=True, slots=True)
class Column:
    name: str
    # text, int, ns (a duration), time (a timestamp), share, object (JSON only: a mapping),
    # counter (one counter's value: a column for people and CSV; JSON has the `counters` object),
    # near (whether a GPU time is near the timer's floor: NEAR_MARK for people, else empty)
    kind: str = "text"
    wide: bool = False  # in CSV and JSON only
    title: str = ""  # heading for people; the name when empty

    @property
    def heading(self) -> str:
        return self.title or self.name


# What people's tables show for a GPU time near the timer's floor (the report explains it).
NEAR_MARK: Final = "near"


def show(column: Column, value: Any) -> str:
    """A value as people read it."""
    if value is None:
        return ""
    if column.kind == "ns":
        return duration_text(value)
    if column.kind == "share":
        return share_text(value)
    if column.kind in ("int", "counter") and isinstance(value, int) and not isinstance(value, bool):
        return f"{value:,}"
    if column.kind == "counter" and isinstance(value, float):
        return f"{value:,.0f}" if value.is_integer() else f"{value:,.3g}"
    if column.kind == "near":
        return NEAR_MARK if value else ""
    if isinstance(value, bool):
        return "yes" if value else "no"
    return str(value)


_CONTEXT: Final = (
    Column("frame", "int", wide=True),
    Column("process", "int", wide=True),
    Column("device", "int", wide=True),
    Column("queue", "int", wide=True),
)

WORKLOADS: Final = (
    *_CONTEXT,
    Column("index", "int", title="#"),
    Column("id", "int", wide=True),
    Column("submit_id", "int", wide=True),
    Column("tag_id", "int", wide=True),
    Column("type"),
    Column("label_path", title="labels"),
    Column("size", wide=True),
    Column("draws", "int", wide=True),
    Column("dispatch", wide=True),
    Column("bytes", "int", wide=True),
    Column("details"),
    Column("gpu_begin_ns", "time", wide=True),
    Column("gpu_end_ns", "time", wide=True),
    Column("gpu_ns", "ns", title="GPU time"),
    # What the GPU time may hold of the timer's own cost, and whether it is near the timer's
    # floor (capture/read/timer_floor.py): empty where its queue family's floor is unknown.
    Column("gpu_ns_uncertainty", "ns", wide=True),
    Column("near_floor", "near", title="floor"),
    Column("share", "share", title="share"),
    Column("timing", wide=True),
    Column("timing_reason", wide=True),
    Column("serialization", wide=True),
    Column("counters", "object", wide=True),
    Column("counters_reason", wide=True),
    Column("counters_missing", "object", wide=True),
    Column("derived", "object", wide=True),
    # The GPU's sampled state around it (docs/gpu-state.md): empty where it was not sampled.
    Column("gpu_clock_min_mhz", wide=True),
    Column("gpu_clock_max_mhz", wide=True),
    Column("clock_changed", wide=True),
    Column("energy_mj", wide=True),
    Column("power_w", wide=True),
    Column("energy_note", wide=True),
)

# Short headings for people's tables; CSV and JSON use the names.
_SHORT: Final = {
    "input_assembly_vertices": "IA vertices",
    "input_assembly_primitives": "IA prims",
    "vertex_shader_invocations": "VS inv",
    "geometry_shader_invocations": "GS inv",
    "geometry_shader_primitives": "GS prims",
    "clipping_invocations": "clip in",
    "clipping_primitives": "clip out",
    "fragment_shader_invocations": "FS inv",
    "tessellation_control_shader_patches": "TCS patches",
    "tessellation_evaluation_shader_invocations": "TES inv",
    "compute_shader_invocations": "CS inv",
    "task_shader_invocations": "task inv",
    "mesh_shader_invocations": "mesh inv",
}


# Marks, in people's headings, a counter whose value other work running at the same time
# affects (performance_query's CONCURRENTLY_IMPACTED); the report explains it below.
IMPACTED_MARK: Final = " *"


def counter_columns(
    names: tuple[str, ...], impacted: frozenset[str] = frozenset()
) -> tuple[Column, ...]:
    """One column per counter, after a table's own."""
    return tuple(
        Column(n, "counter", title=_SHORT.get(n, n) + (IMPACTED_MARK if n in impacted else ""))
        for n in names
    )


def workload_columns(
    counters: tuple[str, ...], impacted: frozenset[str] = frozenset()
) -> tuple[Column, ...]:
    return WORKLOADS + counter_columns(counters, impacted)


FRAMES: Final = (
    Column("frame", "int"),
    Column("process", "int", wide=True),
    Column("device", "int", wide=True),
    Column("queue", "int"),
    Column("queue_flags", wide=True),
    Column("captured", wide=True),
    Column("workloads", "int"),
    Column("timed", "int", wide=True),
    Column("gpu_sum_ns", "ns", title="sum"),
    Column("busy_begin_ns", "time", wide=True),
    Column("busy_end_ns", "time", wide=True),
    Column("busy_span_ns", "ns", title="span"),
    Column("busy_ns", "ns", wide=True),
    Column("idle_ns", "ns", title="idle"),
    Column("gaps", "int"),
    Column("largest_gap_ns", "ns", wide=True),
    Column("overlap_ns", "ns", title="overlap"),
    Column("counters", "object", wide=True),
    Column("warmup", wide=True),  # why the frame is a warm-up frame; empty for a steady one
    # Its device's GPU as the host sampled it during the frame (docs/gpu-state.md).
    Column("gpu_clock_mhz", wide=True),  # the median
    Column("gpu_clock_min_mhz", wide=True),
    Column("gpu_clock_max_mhz", wide=True),
    Column("memory_clock_mhz", wide=True),
    Column("power_w", wide=True),  # the median
    Column("energy_mj", wide=True),
    Column("temperature_c", wide=True),  # the highest
    Column("throttle_reasons", wide=True),
)

# A distribution's columns (capture/read/quantiles.py), after `prefix`.
_STATISTICS = ("min", "p50", "p90", "p99", "max")


def _distribution_columns(prefix: str, wide: tuple[str, ...] = ()) -> tuple[Column, ...]:
    return tuple(Column(f"{prefix}_{s}_ns", "ns", wide=s in wide, title=s) for s in _STATISTICS)


# Each queue over the steady frames: its work, and its GPU time per frame.
QUEUES: Final = (
    Column("process", "int", wide=True),
    Column("device", "int", wide=True),
    Column("queue", "int"),
    Column("queue_flags", title="flags"),
    Column("frames", "int"),
    Column("workloads", "int"),
    Column("timed", "int", wide=True),
    *_distribution_columns("gpu_per_frame", wide=("min",)),
    Column("warmup_frames", "int", title="warm-up"),
)

# Each workload identity over the steady frames: its GPU time, and (JSON, CSV) every counter's
# distribution as {counter: {count, min, p50, p90, p99, max}}.
DISTRIBUTIONS: Final = (
    Column("queue", title="queue"),
    Column("label_path", title="labels"),
    Column("type"),
    Column("ordinal", "int", title="#"),
    Column("frames", "int"),
    Column("timed", "int", wide=True),
    *_distribution_columns("gpu"),
    Column("gpu_ns_uncertainty", "ns", wide=True),
    Column("near_floor", "near", title="floor"),  # of its median
    Column("counters", "object", wide=True),
)

COSTLIEST: Final = (
    Column("rank", "int", title="#"),
    Column("frame", "int"),
    Column("process", "int", wide=True),
    Column("device", "int", wide=True),
    Column("queue", "int"),
    Column("id", "int", wide=True),
    Column("type"),
    Column("label_path", title="labels"),
    Column("details", wide=True),
    Column("gpu_ns", "ns", title="GPU time"),
    Column("gpu_ns_uncertainty", "ns", wide=True),
    Column("near_floor", "near", title="floor"),
    Column("share", "share", title="of frame"),
    Column("counters", "object", wide=True),
)

LABELS: Final = (
    Column("label_path", title="label subtree"),
    Column("depth", "int", wide=True),
    Column("workloads", "int"),
    Column("timed", "int", wide=True),
    Column("self_ns", "ns", title="self"),
    Column("inclusive_ns", "ns", title="inclusive"),
    Column("self_share", "share", title="self %"),
    Column("inclusive_share", "share", title="incl. %"),
)

# performance_query's COMMAND_BUFFER-scope counters: one row per submitted command buffer of the
# frames that collected them, then a column per counter.
COMMAND_BUFFERS: Final = (
    Column("frame", "int"),
    Column("process", "int", wide=True),
    Column("device", "int", wide=True),
    Column("queue", "int"),
    Column("submit_id", "int", title="submit"),
    Column("batch", "int", wide=True),
    Column("counters_pass", "int", wide=True),
    Column("counters", "object", wide=True),
    Column("counters_reason", wide=True),
)

# Each workload identity over the capture (a capture under a cost budget: docs/budget.md): the
# frames it ran in, those that measured it, its median GPU time over those, or why none did.
IDENTITIES: Final = (
    Column("queue", title="queue"),
    Column("type"),
    Column("ordinal", "int", title="#"),
    Column("label_path", title="labels"),
    Column("frames", "int", title="frames"),
    Column("measured", "int", title="measured in"),
    Column("left_out", "int", wide=True),
    Column("gpu_ns", "ns", title="GPU time (median)"),
    Column("reason", title="never measured"),
)

TABLES: Final = {
    "workloads": WORKLOADS,
    "frames": FRAMES,
    "costliest": COSTLIEST,
    "labels": LABELS,
    "command_buffers": COMMAND_BUFFERS,
    "queues": QUEUES,
    "distributions": DISTRIBUTIONS,
    "identities": IDENTITIES,
}


def _context(key: FrameKey, queue: int | None) -> tuple[Any, ...]:
    return (key.frame, key.process, key.device, queue)


def workload_rows(
    frame: FrameWork,
    queue: QueueWork,
    rows: Iterable[WorkloadInstance],
    counters: tuple[str, ...] = (),
) -> Iterator[tuple[Any, ...]]:
    """Rows of workload_columns(counters)."""
    context = _context(frame.key, queue.queue)
    sampled = frame.gpu
    for index, w in enumerate(rows, 1):
        size, draws, dispatch, nbytes = key_fields(w)
        values = w.counters
        gpu_ns = w.gpu_ns
        state = sampled.workload(w) if sampled is not None else None
        yield (
            *context, index, w.id, w.submit_id, w.tag_id, w.type or "unknown", w.label_path,
            size, draws, dispatch, nbytes, describe(w), w.gpu_begin_ns, w.gpu_end_ns, gpu_ns,
            w.gpu_ns_uncertainty, w.near_floor, frame.share(w), w.timing, w.timing_reason,
            w.serialization, values,
            w.counters_reason, w.counters_missing or None,
            derived_metrics(values, w.metadata, gpu_ns), *_workload_state(state),
            *(values.get(n) for n in counters),
        )  # fmt: skip


def _workload_state(s: WorkloadState | None) -> tuple[Any, ...]:
    if s is None:
        return (None,) * 6
    low, high = s.graphics_clock_mhz or (None, None)
    return (low, high, s.clock_changed, s.energy_mj, s.power_w, s.note)


def _frame_state(s: StateSpan | None) -> tuple[Any, ...]:
    if s is None:
        return (None,) * 8
    clock = s.graphics_clock_mhz
    memory, power, temperature = s.memory_clock_mhz, s.power_w, s.temperature_c
    return (
        clock.median if clock else None, clock.min if clock else None,
        clock.max if clock else None, memory.median if memory else None,
        power.median if power else None, s.energy_mj, temperature.max if temperature else None,
        ",".join(s.throttle) or None,
    )  # fmt: skip


def frame_row(
    frame: FrameWork, queue: QueueWork, flags: str, warmup: str | None = None
) -> tuple[Any, ...]:
    s = queue.span
    return (
        *_context(frame.key, queue.queue), flags, frame.captured, s.workloads, s.timed, s.sum_ns,
        s.begin_ns, s.end_ns, s.span_ns, s.busy_ns, s.idle_ns, s.gaps, s.largest_gap_ns,
        s.overlap_ns, queue.counters, warmup, *_frame_state(frame.gpu_state),
    )  # fmt: skip


def _statistics(d: Distribution | None) -> tuple[Any, ...]:
    if d is None:
        return (None,) * len(_STATISTICS)
    return (d.min, d.p50, d.p90, d.p99, d.max)


def queue_summary_rows(
    queues: Iterable[QueueSummary], flags: dict[tuple[int, int | None, int | None], str]
) -> Iterator[tuple[Any, ...]]:
    """Rows of QUEUES."""
    for q in queues:
        yield (
            q.process, q.device, q.queue, flags.get((q.process, q.device, q.queue), ""),
            q.frames, q.workloads, q.timed, *_statistics(q.gpu_per_frame), q.warmup_frames,
        )  # fmt: skip


def distribution_rows(items: Iterable[IdentityDistribution]) -> Iterator[tuple[Any, ...]]:
    """Rows of DISTRIBUTIONS."""
    for d in items:
        i = d.identity
        counters = {name: msgspec.structs.asdict(c) for name, c in d.counters.items()}
        yield (
            i.queue, i.label_path, i.type or "unknown", i.ordinal, d.frames,
            d.gpu_ns.count if d.gpu_ns else 0, *_statistics(d.gpu_ns), d.gpu_ns_uncertainty,
            d.near_floor, counters or None,
        )  # fmt: skip


def costliest_rows(
    items: list[Costly], counters: tuple[str, ...] = ()
) -> Iterator[tuple[Any, ...]]:
    """Rows of COSTLIEST + counter_columns(counters)."""
    for rank, c in enumerate(items, 1):
        w = c.workload
        values = w.counters
        yield (
            rank, c.key.frame, c.key.process, c.key.device, w.queue, w.id, w.type or "unknown",
            w.label_path, describe(w), w.gpu_ns, w.gpu_ns_uncertainty, w.near_floor, c.share,
            values,
            *(values.get(n) for n in counters),
        )  # fmt: skip


def label_rows(rows: Iterator[LabelRow]) -> Iterator[tuple[Any, ...]]:
    for r in rows:
        name = r.label_path if r.path else "(all workloads)"
        yield (
            name, r.depth, r.workloads, r.timed, r.self_ns, r.inclusive_ns, r.self_share,
            r.inclusive_share,
        )  # fmt: skip


def brief(columns: tuple[Column, ...], timed: bool = True, floors: bool = True) -> list[int]:
    """Indexes of the columns people see; without timing in the capture, no time columns, and
    without the timer's floor (`floors`), no near-floor column."""
    hidden = ("ns", "share", "near") if not timed else () if floors else ("near",)
    return [i for i, c in enumerate(columns) if not c.wide and c.kind not in hidden]


def people_cells(columns: tuple[Column, ...], row: tuple[Any, ...], shown: list[int]) -> list[str]:
    """The shown cells of a row for people. A workload without a GPU time says why instead, and
    one without counters says why in its first counter column, and a khr counter its passes
    did not give says `missing` (JSON and CSV say why: counters_missing). A label or any other
    text is shown as a terminal may show it: its controls escaped, shortened when long
    (shown_text.py)."""
    cells = [terminal_text(show(columns[i], row[i])) for i in shown]
    if len(columns) > _GPU_NS and columns[_GPU_NS] is WORKLOADS[_GPU_NS]:
        at = {columns[i].name: n for n, i in enumerate(shown)}
        if "gpu_ns" in at and row[_GPU_NS] is None and row[_TIMING] not in (None, "ok"):
            cells[at["gpu_ns"]] = str(row[_TIMING])
        first = next((n for n, i in enumerate(shown) if columns[i].kind == "counter"), None)
        if first is not None and not row[_COUNTERS] and row[_REASON]:
            cells[first] = str(row[_REASON])
        elif row[_MISSING]:
            for n, i in enumerate(shown):
                if columns[i].kind == "counter" and columns[i].name in row[_MISSING]:
                    cells[n] = "missing"
    return cells


def json_object(columns: tuple[Column, ...], row: tuple[Any, ...]) -> dict[str, Any]:
    """A row as JSON has it: counters in their `counters` object, not one key each."""
    return {c.name: v for c, v in zip(columns, row, strict=True) if c.kind != "counter"}


_GPU_NS: Final = next(i for i, c in enumerate(WORKLOADS) if c.name == "gpu_ns")
_TIMING: Final = next(i for i, c in enumerate(WORKLOADS) if c.name == "timing")
_COUNTERS: Final = next(i for i, c in enumerate(WORKLOADS) if c.name == "counters")
_REASON: Final = next(i for i, c in enumerate(WORKLOADS) if c.name == "counters_reason")
_MISSING: Final = next(i for i, c in enumerate(WORKLOADS) if c.name == "counters_missing")


def command_buffer_rows(
    items: Iterable[CommandBufferCounters], counters: tuple[str, ...]
) -> Iterator[tuple[Any, ...]]:
    """Rows of COMMAND_BUFFERS + counter_columns(counters)."""
    for c in items:
        values = c.counters
        yield (
            c.frame, c.process, c.device, c.queue, c.submit_id, c.batch, c.counters_pass, values,
            c.counters_reason, *(values.get(n) for n in counters),
        )  # fmt: skip


_CB_COUNTERS: Final = next(i for i, c in enumerate(COMMAND_BUFFERS) if c.name == "counters")
_CB_REASON: Final = next(i for i, c in enumerate(COMMAND_BUFFERS) if c.name == "counters_reason")


def command_buffer_cells(
    columns: tuple[Column, ...], row: tuple[Any, ...], shown: list[int]
) -> list[str]:
    """The shown cells of a command buffer row for people: one without values says why in its
    first counter column."""
    cells = [terminal_text(show(columns[i], row[i])) for i in shown]
    first = next((n for n, i in enumerate(shown) if columns[i].kind == "counter"), None)
    if first is not None and not row[_CB_COUNTERS] and row[_CB_REASON]:
        cells[first] = str(row[_CB_REASON])
    return cells


# The tables only complete at the end of the report, in the order they are written.
SUMMARY_TABLES: Final = (
    "queues", "costliest", "distributions", "labels", "command_buffers", "identities",
)  # fmt: skip


def summary_rows(name: str, summary: Summary, context: ReportContext) -> Iterable[tuple[Any, ...]]:
    """The rows of one of SUMMARY_TABLES."""
    if name == "identities":
        return identity_rows(context.identities()) if context.identities else ()
    if name == "command_buffers":
        return command_buffer_rows(context.command_buffers, context.command_buffer_counters)
    if name == "costliest":
        return costliest_rows(summary.top, context.sort_columns())
    if name == "queues":
        return queue_summary_rows(summary.queues, context.queue_flags)
    if name == "distributions":
        return distribution_rows(summary.distributions)
    return label_rows(summary.labels.rows())
