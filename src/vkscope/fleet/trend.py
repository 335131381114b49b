"""Runs the analyses of analyses.py on an engine: resolves the keys a user names, ranks the
ordering key's values, keeps each step and hands back the results as Arrow tables."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Final

import pyarrow as pa

from . import analyses
from .analyses import Grouping, Key, Params
from .engines import Engine

# Columns of `captures` that analyses may group or order by; anything else is a tag.
CAPTURE_KEYS: Final = (
    "date", "device", "driver", "application", "status", "vkscope_version", "api_version",
    "partition", "source",
)  # fmt: skip


class AnalysisError(Exception):
    """An analysis that cannot run as asked: one line saying why."""


def resolve_key(engine: Engine, name: str) -> Key:
    """A tag of that name where some capture has one, else the captures column; `tag:NAME`
    forces the tag."""
    forced = name.startswith("tag:")
    tag = name[4:] if forced else name
    try:
        analyses.check_tag_name(tag)
    except ValueError as exc:
        raise AnalysisError(str(exc)) from None
    found = engine.sql(f"SELECT count(*) AS n FROM capture_tags WHERE key = '{tag}'")
    if forced or found.column("n")[0].as_py() > 0 or name not in CAPTURE_KEYS:
        if not forced and found.column("n")[0].as_py() == 0:
            known = engine.sql("SELECT DISTINCT key FROM capture_tags ORDER BY key")
            tags = ", ".join(known.column("key").to_pylist()) or "none"
            raise AnalysisError(
                f"no capture has a tag {name!r} (tags in the dataset: {tags}; "
                f"capture columns: {', '.join(CAPTURE_KEYS)})"
            )
        return Key(tag, is_tag=True)
    return Key(name, is_tag=False)


def check_metric(engine: Engine, metric: str) -> str:
    columns = engine.sql("SELECT * FROM instances LIMIT 0").column_names
    if metric not in columns or not (metric == "gpu_ns" or metric.startswith("counter_")):
        counters = [c for c in columns if c.startswith("counter_")]
        raise AnalysisError(
            f"no metric {metric!r}: gpu_ns or a counter column "
            f"({', '.join(counters) or 'this dataset has none'})"
        )
    return metric


def _rank_key(value: str) -> tuple[int, float, str]:
    """Numbers as numbers (build 9 before build 10), before anything else in text order."""
    try:
        number = float(value)
    except ValueError:
        return (1, 0.0, value)
    return (0, number, value) if math.isfinite(number) else (1, 0.0, value)


def rank_order(engine: Engine, grouping: Grouping) -> int:
    """Registers fleet_run_order: each value of the ordering key and its rank; returns how
    many values there are."""
    values = engine.sql(analyses.order_values(grouping)).column("order_value").to_pylist()
    ordered = sorted((v for v in values if v is not None), key=_rank_key)
    table = pa.table(
        {
            "order_value": pa.array(ordered, pa.string()),
            "order_rank": pa.array(range(1, len(ordered) + 1), pa.int64()),
        }
    )
    engine.register("fleet_run_order", table)
    return len(ordered)


@dataclass(frozen=True)
class TrendResult:
    grouping: Grouping
    params: Params
    runs: int  # values of the ordering key
    changes: pa.Table  # analyses.changes: where a change appeared
    points: pa.Table | None  # analyses.judged: every point, when asked for

    def regressions(self) -> list[dict[str, object]]:
        """The slower changes that held or are new: what a gate fails on."""
        rows = self.changes.to_pylist()
        return [r for r in rows if r["direction"] == "slower" and r["status"] in ("held", "new")]


def run_trend(
    engine: Engine, grouping: Grouping, params: Params, *, with_points: bool = False
) -> TrendResult:
    runs = rank_order(engine, grouping)
    steps = analyses.trend_steps(grouping, params, engine.dialect)
    for name, sql in steps[:-1]:
        engine.keep(name, sql)
    order = ", ".join(["order_rank", "identity", *grouping.group_columns])
    changes = engine.sql(f"SELECT * FROM ({steps[-1][1]}) c ORDER BY {order}")
    points = None
    if with_points:
        keys = ", ".join(["identity", *grouping.group_columns, "run_index"])
        points = engine.sql(f"SELECT * FROM fleet_judged ORDER BY {keys}")
    return TrendResult(grouping, params, runs, changes, points)


def run_summary(engine: Engine, groups: tuple[Key, ...], metric: str) -> pa.Table:
    """Count and percentiles of `metric` per identity and group; each group's column is named
    after its key."""
    order = ", ".join(["identity", *(f"g{n}" for n in range(len(groups)))])
    summary = analyses.summary(groups, metric, engine.dialect)
    table = engine.sql(f"SELECT * FROM ({summary}) s ORDER BY {order}")
    names = {f"g{n}": key.name for n, key in enumerate(groups)}
    return table.rename_columns([names.get(c, c) for c in table.column_names])
