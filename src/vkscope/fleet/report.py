"""What `vkscope trend` prints: the changes an analysis found, one row each, and a verdict."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any, Final, TextIO

from rich.console import Console

from ..analysis.query import write_rows
from .trend import TrendResult

_SHOWN: Final = ("held", "new")


def _rows(
    result: TrendResult, everything: bool, terminal: bool
) -> tuple[list[str], Iterator[tuple[Any, ...]]]:
    groups = [k.name for k in result.grouping.groups]
    order = result.grouping.order.name
    columns = [
        "identity", *groups, f"first {order}", "direction", "status", "baseline", "value",
        "change", "runs before",
    ]  # fmt: skip
    if not terminal:
        columns += ["type", "label_path", "queue"]

    def rows() -> Iterator[tuple[Any, ...]]:
        for r in result.changes.to_pylist():
            if not everything and r["status"] not in _SHOWN:
                continue
            base, value = r["base"], r["p50"]
            change = (value - base) / base if base else None
            shown: Any = change
            if change is not None:
                shown = f"{change:+.1%}" if terminal else round(change, 6)
            row = (
                r["identity"],
                *(r[g] for g in result.grouping.group_columns),
                r["order_value"],
                r["direction"],
                r["status"],
                round(base) if terminal else base,
                round(value) if terminal else value,
                shown,
                r["base_runs"],
            )
            yield row if terminal else (*row, r["type"], r["label_path"], r["queue"])

    return columns, rows()


def verdict(result: TrendResult, gate_new: bool) -> tuple[str, bool]:
    """One line on what was found, and whether a gate fails on it."""
    rows = result.changes.to_pylist()
    slower = [r for r in rows if r["direction"] == "slower"]
    held = sum(r["status"] == "held" for r in slower)
    new = sum(r["status"] == "new" for r in slower)
    transient = sum(r["status"] == "transient" for r in slower)
    faster = sum(r["direction"] == "faster" and r["status"] == "held" for r in rows)
    metric = result.grouping.metric
    line = (
        f"{result.runs} runs by {result.grouping.order.name}: regressions of {metric}: {held} "
        f"held, {new} new (not confirmed yet), {transient} transient; improvements: {faster} held"
    )
    fails = held > 0 or (gate_new and new > 0)
    return line, fails


def write(
    result: TrendResult,
    fmt: str,
    out: TextIO,
    *,
    everything: bool = False,
    console: Console | None = None,
    max_rows: int = 1000,
) -> int:
    columns, rows = _rows(result, everything, fmt == "table")
    return write_rows(columns, rows, fmt, out, console=console, max_rows=max_rows)
