"""How a diff is shown: rich tables that fit the console, or one JSON document (docs/diff.md).

Both read the verdicts back from the diff's scratch database as they write, so a diff of huge
captures prints without holding its rows in memory.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from typing import IO, Any, Final

import msgspec
from rich import box
from rich.console import Console
from rich.table import Table
from rich.text import Text

from ..shown_text import terminal_text, visible
from .compare import ADDED, GPU_NS, MATCHED, REMOVED, CaptureFacts, Diff, Row, Side
from .stats import (
    BUDGETED,
    IMPROVEMENT,
    ONE_SIDE,
    REGRESSION,
    TOO_FEW_FRAMES,
    WITHIN_NOISE,
    Summary,
    Verdict,
)

JSON_FORMAT: Final = "vkscope-diff"
JSON_VERSION: Final = 1
_NARROW: Final = 76  # below this console width, tables leave out noise and frame counts
_WIDE: Final = 110  # from this console width, tables add each side's p99
_CHANGE_COLUMNS: Final = ("base", "new", "change", "%", "noise", "frames", "p99 base", "p99 new")

_STATUS_TEXT: Final = {
    REGRESSION: ("slower", "bold red"),
    IMPROVEMENT: ("faster", "green"),
    WITHIN_NOISE: ("within noise", "dim"),
    TOO_FEW_FRAMES: ("too few frames", "yellow"),
    ONE_SIDE: ("measured in one", "yellow"),
    BUDGETED: ("not compared", "yellow"),
}


# -- numbers ------------------------------------------------------------------------------------


def duration(ns: float | None, signed: bool = False) -> str:
    """Three significant digits at most: `123 ns`, `4.56 µs`, `78.9 ms`, `1.23 s`."""
    if ns is None:
        return "-"
    sign = ("+" if ns > 0 else "-" if ns < 0 else "±") if signed else ("-" if ns < 0 else "")
    value, unit = abs(ns), "ns"
    for bigger in ("µs", "ms", "s"):
        if round(value) < 1000:
            break
        value, unit = value / 1000, bigger
    if unit == "ns" or round(value, 1) >= 100:
        return f"{sign}{value:.0f} {unit}"
    return f"{sign}{value:.{1 if round(value, 2) >= 10 else 2}f} {unit}"


def amount(value: float | None, signed: bool = False) -> str:
    """A counter's value: whole numbers grouped, others to three significant digits."""
    if value is None:
        return "-"
    sign = "+" if signed and value > 0 else ""
    if float(value).is_integer():
        return f"{sign}{value:,.0f}"
    return f"{sign}{value:,.3g}"


Format = Callable[[float | None, bool], str]


def _format(diff: Diff) -> Format:
    """How the diff's metric is written: GPU times as durations, counters as numbers."""
    return duration if diff.metric == GPU_NS else amount


def _status_text(diff: Diff, status: str) -> tuple[str, str]:
    text, style = _STATUS_TEXT.get(status, ("", ""))
    if diff.metric != GPU_NS:
        text = {"slower": "higher", "faster": "lower"}.get(text, text)
    return text, style


def percent(pct: float | None) -> str:
    return "" if pct is None else f"{pct:+.1f}%"


def _round(value: float | None, digits: int = 1) -> float | None:
    return None if value is None else round(value, digits)


# -- JSON -----------------------------------------------------------------------------------------


def _summary_json(s: Summary) -> dict[str, Any]:
    return {
        "samples": s.samples,
        "median_ns": _round(s.median_ns),
        "noise_ns": _round(s.noise_ns),
        "min_ns": _round(s.min_ns),
        "p90_ns": _round(s.p90_ns),
        "p99_ns": _round(s.p99_ns),
        "max_ns": _round(s.max_ns),
    }


def _side_json(side: Side) -> dict[str, Any]:
    out = {"frames": side.frames, **_summary_json(side.summary)}
    if side.left_out:  # a cost budget left it out of some frames
        out["left_out"] = side.left_out
    if side.near_floor is not None:
        out["near_floor"] = side.near_floor
    return out


def unmeasured(side: Side) -> str:
    """Why a capture has no value of a workload it ran (docs/diff.md)."""
    if side.left_out and side.left_out == side.frames:
        return f"the cost budget left it out of all {side.frames:,} frames it ran in"
    return f"no value in any of the {side.frames:,} frames it ran in"


def _verdict_json(v: Verdict) -> dict[str, Any]:
    return {
        "status": v.status,
        "delta_ns": _round(v.delta_ns),
        "delta_pct": _round(v.delta_pct, 3),
        "bound_ns": _round(v.bound_ns),
    }


def _row_json(row: Row) -> dict[str, Any]:
    ident = row.identity
    out: dict[str, Any] = {
        "type": ident.type,
        "labels": list(ident.labels),
        "ordinal": ident.ordinal,
        "queue": ident.queue,
    }
    if row.verdict is not None:
        out.update(_verdict_json(row.verdict))
        if row.verdict.status == ONE_SIDE and row.base is not None and row.new is not None:
            side, name = (row.new, "new") if row.base.summary.samples else (row.base, "base")
            out["not_compared"] = f"{name}: {unmeasured(side)}"
    if row.base is not None:
        out["base"] = _side_json(row.base)
    if row.new is not None:
        out["new"] = _side_json(row.new)
    return out


def _facts_json(facts: CaptureFacts, identities: int) -> dict[str, Any]:
    return {
        "path": str(facts.path),
        "status": facts.status,
        "schema_version": facts.schema_version,
        "workloads": facts.workloads,
        "timed_workloads": facts.timed_workloads,
        "frames": facts.frames,
        "timed_frames": facts.timed_frames,
        "warmup": {
            "rule": facts.warmup.rule,
            "frames": facts.warmup_frames,
            "said": facts.warmup.describe(),
        },
        "identities": identities,
        "budget_percent": facts.budget_percent,
    }


def _head_json(diff: Diff, exit_code: int) -> dict[str, Any]:
    c, rule = diff.counts, diff.rule
    return {
        "format": JSON_FORMAT,
        "version": JSON_VERSION,
        "verdict": "regression" if diff.regressed else "no_regression",
        "exit_code": exit_code,
        "settings": {
            "metric": diff.metric,
            "threshold_pct": rule.threshold_pct,
            "noise_k": rule.noise_k,
            "min_frames": rule.min_frames,
        },
        "clocks": diff.clocks.as_json(),
        "base": _facts_json(diff.base, c[MATCHED] + c[REMOVED]),
        "new": _facts_json(diff.new, c[MATCHED] + c[ADDED]),
        "totals": {
            "workloads_per_frame": {
                "base": diff.base.workloads_per_frame,
                "new": diff.new.workloads_per_frame,
            },
            "gpu_ns_per_frame": {
                "base": _summary_json(diff.base.gpu_per_frame),
                "new": _summary_json(diff.new.gpu_per_frame),
                **_verdict_json(diff.total),
            },
        },
        "counts": c,
    }


def _json_array(out: IO[str], rows: Iterable[Row]) -> None:
    out.write("[")
    first = True
    for row in rows:
        out.write("\n" if first else ",\n")
        out.write(msgspec.json.encode(_row_json(row)).decode())
        first = False
    out.write("]")


def write_json(diff: Diff, out: IO[str], exit_code: int) -> None:
    """The whole diff as one JSON object, written piece by piece."""
    head = msgspec.json.encode(_head_json(diff, exit_code)).decode()
    out.write(head[:-1])  # left open for the three lists
    for key, kind in (("changes", MATCHED), ("added", ADDED), ("removed", REMOVED)):
        out.write(f',\n"{key}":')
        _json_array(out, diff.rows(kind))
    out.write("}\n")


# -- tables ---------------------------------------------------------------------------------------


def _facts_line(label: str, f: CaptureFacts) -> Text:
    text = Text.assemble((f"{label:<5}", "bold"), f" {visible(str(f.path))} ")
    text.append(f"({f.status})", style="green" if f.status == "complete" else "yellow")
    text.append(
        f": {f.frames:,} frames ({f.timed_frames:,} timed), {f.workloads:,} workloads "
        f"({f.timed_workloads:,} timed)"
    )
    if f.budget_percent is not None:
        text.append(f", under a cost budget of {f.budget_percent:g}%", style="yellow")
    return text


def _totals(diff: Diff) -> Table:
    fmt = _format(diff)
    t = Table(box=box.SIMPLE_HEAD, pad_edge=False)
    t.add_column("", no_wrap=True)
    t.add_column("base", justify="right", no_wrap=True)
    t.add_column("new", justify="right", no_wrap=True)
    t.add_column("change", justify="right", no_wrap=True)
    t.add_column("", no_wrap=True)
    b, n = diff.base, diff.new
    t.add_row("frames (timed)", f"{b.timed_frames:,}", f"{n.timed_frames:,}", "", "")
    wb, wn = b.workloads_per_frame, n.workloads_per_frame
    t.add_row("workloads", f"{wb:,g}", f"{wn:,g}", f"{wn - wb:+,g}" if wn != wb else "", "")
    v = diff.total
    status, style = _status_text(diff, v.status)
    t.add_row(
        "GPU time (sum)" if diff.metric == GPU_NS else f"{diff.metric} (sum)",
        fmt(b.gpu_per_frame.median_ns, False),
        fmt(n.gpu_per_frame.median_ns, False),
        f"{fmt(v.delta_ns, True)} {percent(v.delta_pct)}".strip(),
        Text(status, style=style),
    )
    return t


def _identity(row: Row, queues: bool) -> Text:
    """Type and ordinal, with the label path on a line of its own below."""
    ident = row.identity
    text = Text(f"{ident.type or 'unknown'} #{ident.ordinal}")
    if queues:
        text.append(f" · queue {ident.queue}", style="dim")
    near = [n for n, side in (("base", row.base), ("new", row.new)) if side and side.near_floor]
    if near:
        text.append(f" · near the timer's floor ({' and '.join(near)})", style="yellow")
    text.append("\n")
    path = terminal_text(ident.label_path) if ident.labels else "(no labels)"
    text.append(path, style="cyan" if ident.labels else "dim")
    return text


def _table() -> Table:
    t = Table(box=box.SIMPLE_HEAD, pad_edge=False)
    t.add_column("workload / labels", overflow="fold", ratio=1, min_width=12)
    return t


def _changes(rows: Iterator[Row], queues: bool, width: int, fmt: Format = duration) -> Table:
    t = _table()
    names = _CHANGE_COLUMNS[: 4 if width < _NARROW else 6 if width < _WIDE else 8]
    for name in names:
        t.add_column(name, justify="right", no_wrap=True)
    for row in rows:
        assert row.base is not None and row.new is not None and row.verdict is not None
        v = row.verdict
        style = _STATUS_TEXT.get(v.status, ("", ""))[1]
        noise = max(row.base.summary.noise_ns or 0.0, row.new.summary.noise_ns or 0.0)
        cells: list[str | Text] = [
            _identity(row, queues),
            fmt(row.base.summary.median_ns, False),
            fmt(row.new.summary.median_ns, False),
            Text(fmt(v.delta_ns, True), style=style),
            Text(percent(v.delta_pct), style=style),
            fmt(noise, False),
            f"{row.base.summary.samples}/{row.new.summary.samples}",
            fmt(row.base.summary.p99_ns, False),
            fmt(row.new.summary.p99_ns, False),
        ]
        t.add_row(*cells[: len(names) + 1])
    return t


def _only(rows: Iterator[Row], queues: bool, fmt: Format = duration) -> Table:
    t = _table()
    t.add_column("median", justify="right", no_wrap=True)
    t.add_column("noise", justify="right", no_wrap=True)
    t.add_column("timed", justify="right", no_wrap=True)
    for row in rows:
        side = row.new if row.new is not None else row.base
        assert side is not None
        t.add_row(
            _identity(row, queues),
            fmt(side.summary.median_ns, False),
            fmt(side.summary.noise_ns, False),
            f"{side.summary.samples}/{side.frames}",
        )
    return t


def _one_side(rows: Iterator[Row], queues: bool, fmt: Format = duration) -> Table:
    t = _table()
    t.add_column("base", justify="right", no_wrap=True)
    t.add_column("new", justify="right", no_wrap=True)
    t.add_column("why not", overflow="fold", ratio=1)
    for row in rows:
        assert row.base is not None and row.new is not None
        side, name = (row.new, "new") if row.base.summary.samples else (row.base, "base")
        t.add_row(
            _identity(row, queues),
            fmt(row.base.summary.median_ns, False),
            fmt(row.new.summary.median_ns, False),
            f"{name}: {unmeasured(side)}",
        )
    return t


def _heading(console: Console, text: str) -> None:
    console.print(Text(text, style="bold"), highlight=False)


def _of(shown: int, total: int) -> str:
    return f"{total:,}" if shown >= total else f"largest {shown:,} of {total:,}"


def render_table(diff: Diff, console: Console, limit: int | None) -> None:
    c, rule = diff.counts, diff.rule
    queues = diff.queues > 1
    console.print(_facts_line("base", diff.base), soft_wrap=False)
    console.print(_facts_line("new", diff.new), soft_wrap=False)
    if (clocks := diff.clocks.sentence()) is not None:
        console.print(Text(clocks, style="yellow" if diff.clocks.differ else ""), highlight=False)
    _heading(console, "Per frame (medians over the timed frames)")
    for label, facts in (("base", diff.base), ("new", diff.new)):
        if facts.warmup_frames or facts.warmup.kept:
            console.print(f"warm-up ({label}): {facts.warmup.describe()}", highlight=False)
    console.print(_totals(diff))

    def shown(n: int) -> int:
        return n if limit is None else min(n, limit)

    fmt = _format(diff)
    gate = f"beyond {rule.threshold_pct:g}% and {rule.noise_k:g}x the noise"
    up, down = ("Slower", "Faster") if diff.metric == GPU_NS else ("Higher", "Lower")
    if diff.metric != GPU_NS:
        gate = f"in {diff.metric} {gate}"
    sections = (
        (REGRESSION, f"{up} {gate}"),
        (IMPROVEMENT, f"{down} {gate}"),
        (WITHIN_NOISE, "Within the threshold or the noise"),
        (TOO_FEW_FRAMES, f"Not judged: fewer than {rule.min_frames} timed frames in a capture"),
    )
    if diff.total.status == BUDGETED:
        console.print(
            Text(
                "Per-frame totals not compared: under a cost budget each frame measured a "
                "different share of its workloads; the workloads below are compared on the "
                "frames that measured them",
                style="yellow",
            ),
            highlight=False,
        )
    for status, title in sections:
        if c[status]:
            _heading(console, f"{title} ({_of(shown(c[status]), c[status])})")
            rows = diff.rows(MATCHED, (status,), limit)
            console.print(_changes(rows, queues, console.width, fmt))
    if c[ONE_SIDE]:
        n = _of(shown(c[ONE_SIDE]), c[ONE_SIDE])
        _heading(console, f"Not compared: measured in one capture only ({n})")
        console.print(_one_side(diff.rows(MATCHED, (ONE_SIDE,), limit), queues, fmt))
    if c[ADDED]:
        _heading(console, f"Added: only in new ({_of(shown(c[ADDED]), c[ADDED])}, costliest first)")
        console.print(_only(diff.rows(ADDED, limit=limit), queues, fmt))
    if c[REMOVED]:
        n = _of(shown(c[REMOVED]), c[REMOVED])
        _heading(console, f"Removed: only in base ({n}, costliest first)")
        console.print(_only(diff.rows(REMOVED, limit=limit), queues, fmt))
    console.print(
        f"{c[MATCHED]:,} matched workloads: {c[REGRESSION]:,} slower, {c[IMPROVEMENT]:,} faster, "
        f"{c[WITHIN_NOISE]:,} within noise, {c[TOO_FEW_FRAMES]:,} with fewer than "
        f"{rule.min_frames} timed frames, {c[ONE_SIDE]:,} measured in one capture only, "
        f"{c['untimed']:,} untimed; {c[ADDED]:,} added, "
        f"{c[REMOVED]:,} removed",
        highlight=False,
    )
    if diff.regressed:
        what = []
        if c[REGRESSION]:
            what.append(f"{c[REGRESSION]:,} workload(s) {up.lower()}")
        if diff.total.status == REGRESSION:
            what.append(
                "GPU time per frame up" if diff.metric == GPU_NS else f"{diff.metric} per frame up"
            )
        console.print(
            Text(f"REGRESSION: {' and '.join(what)} {gate}", style="bold red"), highlight=False
        )
    else:
        console.print(Text(f"No regression {gate}", style="green"), highlight=False)
