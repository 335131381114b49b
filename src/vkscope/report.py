"""A readable summary of a capture: a header, then each frame's workloads queue by queue.

Only what the capture holds is shown; timing columns come with GPU timestamps.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Iterator
from typing import Any

from rich.console import Console, Group
from rich.panel import Panel
from rich.table import Table
from rich.text import Text

from .capture import Capture, WorkloadInstance

_STATUS_STYLE = {"complete": "green", "incomplete": "yellow", "capturing": "red"}
_SKIP = {"device", "type", "api"}


def _num(value: Any) -> str:
    return f"{value:,}" if isinstance(value, int) and not isinstance(value, bool) else "?"


def _count(value: Any, noun: str) -> str:
    return f"{_num(value)} {noun}" + ("" if value == 1 and not isinstance(value, bool) else "s")


def _dim(value: Any) -> str:
    return str(value) if isinstance(value, int) and not isinstance(value, bool) else "?"


def _dims(*values: Any) -> str:
    return "x".join(_dim(v) for v in values)


def _list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else [value]


def _bytes(value: Any) -> str:
    if not isinstance(value, int) or isinstance(value, bool):
        return "? bytes"
    size, unit = float(value), "bytes"
    for bigger in ("KiB", "MiB", "GiB"):
        if size < 1024:
            break
        size, unit = size / 1024, bigger
    return f"{value:,} bytes" if unit == "bytes" else f"{size:.1f} {unit}"


def _renderpass(md: dict[str, Any]) -> str:
    parts = [_dims(md.get("width"), md.get("height"))]
    if isinstance(md.get("layers"), int) and md["layers"] > 1:
        parts[0] += f", {md['layers']} layers"
    parts.append(_count(md.get("draws"), "draw"))
    attachments = md.get("attachments")
    if isinstance(attachments, list):
        kinds = Counter(str(a.get("kind", "?")) for a in attachments if isinstance(a, dict))
        detail = ", ".join(f"{n} {k}" for k, n in kinds.items())
        parts.append(_count(len(attachments), "attachment") + (f" ({detail})" if detail else ""))
    if md.get("split"):
        parts.append("split")
    return ", ".join(parts)


def _dispatch(md: dict[str, Any]) -> str:
    groups, local = md.get("groups"), md.get("local_size")
    if groups is None:
        text = "indirect, group count not known"
    else:
        text = f"{_dims(*_list(groups))} groups"
        if local is not None:
            text += f" of {_dims(*_list(local))}"
    if md.get("invocations") is not None:
        text += " = " + _count(md.get("invocations"), "invocation")
    return text


def describe(w: WorkloadInstance) -> str:
    """The workload's key numbers in a few words."""
    md = w.metadata
    if w.type == "renderpass":
        return _renderpass(md)
    if w.type == "dispatch":
        return _dispatch(md)
    if w.type == "trace_rays":
        return f"{_dims(md.get('width'), md.get('height'), md.get('depth'))} rays"
    if w.type == "buffer_transfer":
        return f"{md.get('kind', '?')} {_bytes(md.get('bytes'))}"
    if w.type == "image_transfer":
        return f"{md.get('kind', '?')} {_count(md.get('pixels'), 'pixel')}"
    if w.type == "acceleration_structure":
        return f"{md.get('kind', '?')}, {_count(md.get('count'), 'structure')}"
    scalars = (f"{k}={v}" for k, v in md.items() if k not in _SKIP and not isinstance(v, dict))
    return ", ".join(scalars)


def _header(capture: Capture) -> Panel:
    meta = capture.meta
    grid = Table.grid(padding=(0, 2))
    grid.add_column(style="bold")
    grid.add_column()
    status = Text(meta.status, style=_STATUS_STYLE.get(meta.status, ""))
    processes = capture.processes()
    if meta.status == "incomplete":
        lost = [p for p in processes if p.state not in ("goodbye", "empty")]
        if lost:
            status.append(f": {len(lost)} connection(s) ended without GOODBYE (crashed or killed)")
    elif meta.status == "capturing":
        status.append(": not finalized (still capturing, or vkscope itself was stopped)")
    grid.add_row("status", status)
    for p in processes:
        if p.state != "empty":
            grid.add_row("process", f"{p.name or '?'} (pid {p.pid or '?'}, {p.state})")
    for d in capture.devices():
        grid.add_row("device", f"{d.name or '?'} ({d.driver_name or '?'} {d.driver_info or ''})")
    submitted = capture.submitted_frames()
    grid.add_row("frames", f"{len(submitted):,} with work, {len(capture.frames()):,} ended")
    grid.add_row("workloads", f"{capture.workload_count():,} executed")
    grid.add_row("dropped", f"{meta.dropped:,} messages dropped by the layer")
    bad = f"{meta.bad_messages:,} bad, {meta.skipped_messages:,} of unknown types skipped"
    grid.add_row("messages", f"{meta.messages:,} received; {bad}")
    diagnostics = capture.diagnostics()
    for diag in diagnostics[:5]:
        where = f" (byte {diag.offset:,} of connection {diag.connection})" if diag.offset else ""
        grid.add_row("diagnostic", Text(f"{diag.reason}{where}", style="yellow"))
    if len(diagnostics) > 5:
        grid.add_row("", f"… {len(diagnostics) - 5} more diagnostics")
    return Panel(grid, title=f"vkscope capture {capture.path.name}", title_align="left")


def _queue_names(capture: Capture) -> dict[tuple[int, int, int], str]:
    return {(q.process, q.device, q.id): "/".join(q.flags) for q in capture.queues()}


def _by_queue(rows: Iterable[WorkloadInstance]) -> dict[int | None, list[WorkloadInstance]]:
    out: dict[int | None, list[WorkloadInstance]] = {}
    for w in rows:
        out.setdefault(w.queue, []).append(w)
    return out


def _queue_table(title: str, rows: list[WorkloadInstance], limit: int | None) -> Table:
    table = Table(title=title, title_justify="left", expand=False, pad_edge=False)
    table.add_column("#", justify="right", no_wrap=True, style="dim")
    table.add_column("submit", justify="right", no_wrap=True, style="dim")
    table.add_column("type", no_wrap=True)
    table.add_column("labels", overflow="fold", ratio=1)
    table.add_column("details", overflow="fold", ratio=2)
    shown = rows if limit is None else rows[:limit]
    for n, w in enumerate(shown, 1):
        kind = w.type or Text("unknown", style="red")
        table.add_row(str(n), str(w.submit_id), kind, w.label_path, describe(w))
    if len(rows) > len(shown):
        table.add_row("…", "", "", "", Text(f"{len(rows) - len(shown):,} more", style="dim"))
    return table


def _frames(capture: Capture, max_frames: int | None, limit: int | None) -> Iterator[Group]:
    queues = _queue_names(capture)
    devices = {(d.process, d.id): d.name for d in capture.devices()}
    several = len({p for p, _, _ in capture.submitted_frames()}) > 1
    for index, (process, device, frame) in enumerate(capture.submitted_frames()):
        if max_frames is not None and index >= max_frames:
            return
        rows = capture.workloads(frame=frame, process=process, device=device)
        tables = []
        for queue, work in _by_queue(rows).items():
            flags = queues.get((process, device or 0, queue or 0), "")
            where = f"device {devices.get((process, device or 0), device)}"
            who = f"process {process}, " if several else ""
            title = f"Frame {frame} · queue {queue} ({flags}) · {who}{where}"
            tables.append(_queue_table(title, work, limit))
        yield Group(*tables)


def render_report(
    capture: Capture,
    console: Console,
    *,
    max_frames: int | None = None,
    max_workloads_per_queue: int | None = None,
) -> None:
    """Prints the capture's header and its workloads, frame by frame and queue by queue."""
    console.print(_header(capture))
    total = len(capture.submitted_frames())
    for group in _frames(capture, max_frames, max_workloads_per_queue):
        console.print(group)
    if max_frames is not None and total > max_frames:
        console.print(Text(f"… {total - max_frames:,} more frames not shown", style="dim"))
