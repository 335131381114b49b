"""The sentences a report shows people (terminal and Markdown alike): header lines and titles.

Names that come from the application or the driver are shortened here when long; each writer
escapes the whole line as its format needs (shown_text.py)."""

from __future__ import annotations

from ..capture.read.timer_floor import NEAR_FLOOR_FACTOR, Spread
from ..capture_summary import FrameCounts
from ..shown_text import shortened
from .context import ReportContext
from .coverage import budget_lines
from .describe import duration_text
from .frames import FrameWork, QueueWork
from .gpu_text import gpu_lines
from .rows import IMPACTED_MARK, NEAR_MARK
from .spans import Span


def _status(context: ReportContext) -> str:
    text = context.status
    if context.status == "incomplete":
        lost = [p for p in context.processes if p.state not in ("goodbye", "empty")]
        if lost:
            text += f": {len(lost)} connection(s) ended without GOODBYE (crashed or killed)"
    elif context.status == "capturing":
        text += ": not finalized (still capturing, or vkscope itself was stopped)"
    return text


def _timing(context: ReportContext) -> list[tuple[str, str]]:
    t = context.timing
    if not t.any:
        return [("timing", "none: run with a timing setting to measure GPU time")]
    modes = ", ".join(f"{m} ({n:,})" for m, n in sorted(t.serialization.items()))
    clocks = ", ".join(sorted(t.clocks)) or "not said"
    lines = [
        ("timing", f"{t.timed:,} of {t.workloads:,} workloads timed; serialization {modes}"),
        ("GPU clock", clocks),
    ]
    for reason, n in t.reasons[:3]:
        lines.append(("not timed", f"{n:,}: {reason}"))
    if len(t.reasons) > 3:
        lines.append(("", f"… {len(t.reasons) - 3} more reasons"))
    return lines


def floor_lines(context: ReportContext) -> list[tuple[str, str]]:
    """The timer's floor of each queue family timed (docs/timing.md, "The timer's floor")."""
    lines: list[tuple[str, str]] = []
    several = len({(f.process, f.device) for f in context.timer_floors}) > 1
    for f in context.timer_floors:
        where = f"family {f.family}" + (f" of device {f.device}" if several else "")
        if f.empty is None or f.floor_ns is None:
            lines.append(("timer floor", f"{where}: not measured ({f.reason or 'no samples'})"))
            continue
        b2b = f.back_to_back
        pair = f"; back-to-back timestamps {_spread_text(b2b)}" if b2b else ""
        lines.append((
            "timer floor",
            f"{where}: {duration_text(f.floor_ns)} (an empty workload {_spread_text(f.empty)}"
            f"{pair}; period {duration_text(f.period_ns or 0)})",
        ))  # fmt: skip
    if any(f.near_ns is not None for f in context.timer_floors):
        lines.append((
            "",
            f"GPU times within {NEAR_FLOOR_FACTOR}x their family's floor are marked "
            f"`{NEAR_MARK}` (floor column): at least 1/{NEAR_FLOOR_FACTOR} of such a time is the "
            "timer's own; each time's uncertainty is in JSON and CSV (gpu_ns_uncertainty)",
        ))  # fmt: skip
    return lines


def _spread_text(s: Spread) -> str:
    low, mid, high = (duration_text(v) for v in (s.min_ns, s.median_ns, s.max_ns))
    return f"min {low}, median {mid}, max {high}"


def header_lines(context: ReportContext) -> list[tuple[str, str]]:
    lines = [("status", _status(context))]
    for p in context.processes:
        if p.state != "empty":
            lines.append(("process", f"{shortened(p.name or '?')} (pid {p.pid or '?'}, {p.state})"))
    for d in context.devices:
        driver = shortened(f"{d.driver_name or '?'} {d.driver_info or ''}".strip())
        lines.append(("device", f"{shortened(d.name or '?')} ({driver})"))
    frames = FrameCounts(context.frames_with_work, context.frames_ended)
    bad = f"{context.bad_messages:,} bad, {context.skipped_messages:,} of unknown types skipped"
    lines.append(("frames", frames.sentence()))
    if hint := frames.hint():
        lines.append(("", hint))
    lines.append(("warm-up", context.warmup.describe()))
    lines += [
        ("workloads", f"{context.workloads:,} executed"),
        ("dropped", f"{context.dropped:,} messages dropped by the layer"),
        ("messages", f"{context.messages:,} received; {bad}"),
        *_timing(context),
        *floor_lines(context),
        *gpu_lines(context.gpu),
    ]
    if context.budget is not None and context.coverage is not None:
        lines += budget_lines(context.budget, context.coverage)
    if context.clock_changes:
        lines.append((
            "clocks",
            f"changed during {context.clock_changes:,} workloads (a sampler's clock counters): "
            "serialization and sampling idle the GPU, and its power management may lower the "
            "clocks; compare workloads run at the same clocks",
        ))  # fmt: skip
    if marked := sorted(context.impacted() & set(context.counters)):
        lines.append(
            (
                "counters",
                f"marked{IMPACTED_MARK}: concurrently impacted (other work running on the GPU at "
                f"the same time affects their values): {', '.join(marked)}",
            )
        )
    for diag in context.diagnostics[:5]:
        at = f" (byte {diag.offset:,} of connection {diag.connection})" if diag.offset else ""
        lines.append(("diagnostic", f"{shortened(diag.reason, 1000)}{at}"))
    if len(context.diagnostics) > 5:
        lines.append(("", f"… {len(context.diagnostics) - 5} more diagnostics"))
    return lines


def where(context: ReportContext, frame: FrameWork) -> str:
    key = frame.key
    names: dict[tuple[int, int | None], str | None] = {
        (d.process, d.id): d.name for d in context.devices
    }
    text = f"device {shortened(names.get((key.process, key.device)) or str(key.device))}"
    if len({p.process for p in context.processes}) > 1:
        text = f"process {key.process}, {text}"
    return text


def frame_title(context: ReportContext, frame: FrameWork) -> str:
    title = f"Frame {frame.key.frame} · {where(context, frame)}"
    if frame.captured is False:
        title += " · not captured (no timing)"
    if frame.gpu_ns:
        title += f" · GPU time {duration_text(frame.gpu_ns)}"
    return title


def span_text(span: Span) -> str:
    """`12 workloads · sum 1.2 ms · busy span 1.5 ms · idle 300 µs in 4 gaps · overlap 0 ns`."""
    parts = [f"{span.workloads:,} workload" + ("" if span.workloads == 1 else "s")]
    if span.timed:
        gaps = span.gaps
        idle = f"idle {duration_text(span.idle_ns)} in {gaps} gap" + ("" if gaps == 1 else "s")
        parts += [
            f"sum {duration_text(span.sum_ns)}",
            f"busy span {duration_text(span.span_ns)}",
            idle if gaps else "no idle gaps",
        ]
        if span.overlap_ns:
            parts.append(f"overlap {duration_text(span.overlap_ns)}")
    if span.untimed and span.timed:
        parts.append(f"{span.untimed:,} untimed")
    return " · ".join(parts)


def queue_title(context: ReportContext, frame: FrameWork, queue: QueueWork) -> str:
    key = frame.key
    flags = context.flags(key.process, key.device, queue.queue)
    return f"Frame {key.frame} · queue {queue.queue} ({flags}) · {where(context, frame)}"


def queue_heading(context: ReportContext, frame: FrameWork, queue: QueueWork) -> str:
    """The queue alone, for a heading under its frame's."""
    key = frame.key
    return f"Queue {queue.queue} ({context.flags(key.process, key.device, queue.queue)})"
