"""What every report format says about a capture before its frames: file, status, processes,
devices and their clocks, and how it was timed."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from functools import partial
from typing import Any

from ..capture import Capture, CommandBufferCounters, Device, Diagnostic, Process
from ..capture.read.coverage import BudgetSummary, IdentityCoverage, budget_summary
from ..capture.read.coverage import identity_coverage as read_identity_coverage
from ..capture.read.gpu_join import GpuJoin, GpuSummary
from ..capture.read.gpu_state import DeviceGpu, GpuSampling
from ..capture.read.queries import frame_counts
from ..capture.read.records import CounterDetail
from ..capture.read.timer_floor import NEAR_FLOOR_FACTOR, TimerFloor
from ..capture.read.warmup import WarmUp
from .coverage import CoverageCounts, coverage_counts
from .selection import Selection, SelectionError
from .timing_info import TimingInfo, timing_info


@dataclass(frozen=True, slots=True)
class GpuReport:
    """The GPUs the host sampled during the capture (docs/gpu-state.md)."""

    join: GpuJoin
    summaries: list[GpuSummary]
    unmatched: list[DeviceGpu]  # devices whose GPU was not sampled, with why
    sampling: GpuSampling | None

    def as_json(self) -> dict[str, Any]:
        s = self.sampling
        return {
            "gpus": [g.as_json() for g in self.summaries],
            "not_sampled": [
                {"process": d.process, "device": d.device, "pci": d.pci, "reason": d.reason}
                for d in self.unmatched
            ],
            "sampling": None
            if s is None
            else {
                "interval_ns": s.interval_ns,
                "samples": s.samples,
                "late": s.late,
                "cpu_ns": s.cpu_ns,
                "wall_ns": s.wall_ns,
            },
        }


def gpu_report(capture: Capture) -> GpuReport | None:
    """The capture's sampled GPUs; None where the host sampled none (an older capture, or
    `vkscope run --no-gpu-state`)."""
    join = GpuJoin(capture)
    if not join:
        return None
    return GpuReport(join, join.summaries(), join.unmatched(), capture.gpu_sampling())


@dataclass(frozen=True, slots=True)
class ReportContext:
    path: str
    status: str
    schema_version: int
    vkscope_version: str | None
    processes: list[Process]
    devices: list[Device]
    timing: TimingInfo
    workloads: int
    frames_with_work: int
    frames_ended: int
    dropped: int
    messages: int
    bad_messages: int
    skipped_messages: int
    diagnostics: list[Diagnostic]
    tables: frozenset[str]  # which tables the report holds (rows.TABLES)
    queue_flags: dict[tuple[int, int | None, int | None], str]
    counters: tuple[str, ...] = ()  # the counters shown as columns
    sort: str = "gpu_ns"  # what the costliest workloads are ranked by
    clock_changes: int = 0  # workloads during which a sampler saw the clocks change
    counter_info: dict[str, CounterDetail] = field(default_factory=dict)  # of every counter
    # performance_query's COMMAND_BUFFER-scope counters of the selected frames and queues, and
    # their names.
    command_buffers: tuple[CommandBufferCounters, ...] = ()
    command_buffer_counters: tuple[str, ...] = ()
    warmup: WarmUp = field(default_factory=lambda: WarmUp("first 0"))
    everything: bool = False  # people's formats: every row (--all), not the first ones
    gpu: GpuReport | None = None  # the GPU's clocks and power, sampled by the host
    # Under a cost budget (docs/budget.md): its controllers summed up, and the coverage of the
    # capture's workload identities.
    budget: BudgetSummary | None = None
    coverage: CoverageCounts | None = None
    # Each identity with its coverage, streamed anew at each call; None when the report has no
    # identities table (one is shown for a capture under a budget, or when asked for alone).
    identities: Callable[[], Iterator[IdentityCoverage]] | None = None
    # The timer's floor of each device's queue families (docs/timing.md).
    timer_floors: tuple[TimerFloor, ...] = ()

    def impacted(self) -> frozenset[str]:
        """The counters whose values other work running at the same time affects."""
        return frozenset(n for n, d in self.counter_info.items() if d.concurrently_impacted)

    @property
    def has_floor(self) -> bool:
        """Some queue family's floor is known: GPU times can be near it."""
        return any(f.near_ns is not None for f in self.timer_floors)

    @property
    def ranked(self) -> bool:
        """The costliest table has something to rank by."""
        return self.timing.any if self.sort == "gpu_ns" else True

    def sort_columns(self) -> tuple[str, ...]:
        """The counter columns of the costliest table: the one it is ranked by."""
        return () if self.sort == "gpu_ns" else (self.sort,)

    def flags(self, process: int, device: int | None, queue: int | None) -> str:
        return self.queue_flags.get((process, device, queue), "")

    def as_json(self) -> dict[str, Any]:
        t = self.timing
        return {
            "path": self.path,
            "status": self.status,
            "schema_version": self.schema_version,
            "vkscope_version": self.vkscope_version,
            "workloads": self.workloads,
            "frames_with_work": self.frames_with_work,
            "frames_ended": self.frames_ended,
            "dropped": self.dropped,
            "messages": self.messages,
            "bad_messages": self.bad_messages,
            "skipped_messages": self.skipped_messages,
            "diagnostics": [
                {"connection": d.connection, "offset": d.offset, "kind": d.kind, "reason": d.reason}
                for d in self.diagnostics
            ],
            "processes": [
                {"id": p.id, "process": p.process, "name": p.name, "pid": p.pid, "state": p.state}
                for p in self.processes
            ],
            "devices": [
                {
                    "process": d.process,
                    "id": d.id,
                    "name": d.name,
                    "driver": d.driver_name,
                    "clock_domain": d.clock_domain,
                    "clock_max_deviation_ns": d.clock_max_deviation_ns,
                }
                for d in self.devices
            ],
            "counters": list(self.counters),
            "clock_changes": self.clock_changes,
            "gpu_state": self.gpu.as_json() if self.gpu else None,
            "counter_info": {n: d.as_json() for n, d in self.counter_info.items()},
            "command_buffer_counters": list(self.command_buffer_counters),
            "sort": self.sort,
            "warmup": {
                "rule": self.warmup.rule,
                "frames": [
                    {"process": p, "device": d, "frame": f, "why": why}
                    for (p, d, f), why in sorted(self.warmup.frames.items(), key=_frame_order)
                ],
                "kept": [{"process": p, "device": d} for p, d in self.warmup.kept],
            },
            "timer_floors": [f.as_json() for f in self.timer_floors],
            "near_floor_factor": NEAR_FLOOR_FACTOR,
            "budget": self.budget.as_json() if self.budget else None,
            "coverage": self.coverage.as_json() if self.coverage else None,
            "timing": {
                "timed": t.timed,
                "serialization": t.serialization,
                "status": t.status,
                "reasons": [{"reason": r, "workloads": n} for r, n in t.reasons],
            },
        }


def _frame_order(item: tuple[tuple[int, int | None, int | None], str]) -> tuple[int, int, int]:
    p, d, f = item[0]
    return (p, -1 if d is None else d, -1 if f is None else f)


def chosen_counters(capture: Capture, counters: Sequence[str] | None, sort: str) -> tuple[str, ...]:
    """The counters to show: those asked for (each one the capture has), else all it has.
    Raises SelectionError for a name the capture has no values of, or a sort key it cannot
    rank by."""
    have = capture.counter_names()
    offer = ", ".join(have) if have else "none (run with --counters)"
    for name in [*(counters or ()), *([sort] if sort != "gpu_ns" else [])]:
        if name not in have:
            raise SelectionError(
                f"{capture.path}: no counter {name!r} in this capture; it has: {offer}"
            )
    return tuple(counters) if counters is not None else have


def report_context(
    capture: Capture,
    tables: frozenset[str],
    counters: Sequence[str] | None = None,
    sort: str = "gpu_ns",
    selection: Selection | None = None,
    warmup: WarmUp | None = None,
    everything: bool = False,
) -> ReportContext:
    meta = capture.meta
    selection = selection or Selection()
    command_buffers = tuple(
        c
        for c in capture.command_buffer_counters()
        if (selection.frames is None or c.frame in selection.frames)
        and (selection.queues is None or c.queue in selection.queues)
    )
    names = sorted({n for c in command_buffers for n in c.counters})
    budget = budget_summary(capture)
    coverage = coverage_counts(read_identity_coverage(capture)) if budget else None
    identities: Callable[[], Iterator[IdentityCoverage]] | None = None
    if "identities" in tables and (budget is not None or tables == {"identities"}):
        identities = partial(read_identity_coverage, capture)

    flags: dict[tuple[int, int | None, int | None], str] = {
        (q.process, q.device, q.id): "/".join(q.flags) for q in capture.queues()
    }
    with_work, ended = frame_counts(capture)
    return ReportContext(
        path=str(capture.path),
        status=meta.status,
        schema_version=meta.schema_version,
        vkscope_version=meta.vkscope_version,
        processes=capture.processes(),
        devices=capture.devices(),
        timing=timing_info(capture),
        workloads=capture.workload_count(),
        frames_with_work=with_work,
        frames_ended=ended,
        dropped=meta.dropped,
        messages=meta.messages,
        bad_messages=meta.bad_messages,
        skipped_messages=meta.skipped_messages,
        diagnostics=capture.diagnostics(),
        tables=tables,
        queue_flags=flags,
        counters=chosen_counters(capture, counters, sort),
        counter_info=capture.counter_details(),
        sort=sort,
        clock_changes=capture.clock_changes() if capture.counter_names() else 0,
        command_buffers=command_buffers,
        command_buffer_counters=tuple(names),
        warmup=warmup if warmup is not None else WarmUp("first 0"),
        everything=everything,
        gpu=gpu_report(capture),
        budget=budget,
        coverage=coverage,
        identities=identities,
        timer_floors=tuple(capture.timer_floors()),
    )
