"""The fleet analyses, defined once as SQL that DuckDB and Spark SQL both run unchanged.

Why SQL text and not an expression layer (Ibis, say): the analyses are a handful of GROUP BY
and window statements, and the subset of SQL both engines accept covers them: joins, window
functions with ROWS frames, `percentile_cont(q) WITHIN GROUP (ORDER BY x)` (exact in both, so
the two engines give the same numbers), `greatest`, map subscripts for tags. An expression layer
would add a large dependency whose generated SQL differs per engine in ways the tests would have
to pin down anyway; this way the tests run these very statements on both (tests/test_fleet_*).
One aggregate is spelled per engine (Dialect: three percentiles at once, for speed), and keeping
an intermediate result is the engine's job (engines.py: `keep`).

The statements read the documented views (`captures`, `frames`, `instances`) and the small
table `fleet_run_order` (each value of the ordering key and its rank: the ranking is done in
Python, numbers as numbers, so builds 9 and 10 come in that order). Each analysis is a list of
(name, SELECT) steps kept in that order; the last is the result.

Regressions: per workload identity and group, one point per run (a value of the ordering key):
the median of the metric over every instance of that identity in the run's captures. A point is
*slower* when it exceeds the median of the `window` runs before it by more than the noise of
those runs (`k` times their median absolute deviation, scaled to a standard deviation) and by
at least `min_change` of it; *faster* likewise. The first slower point after one that was not is
where a regression appeared; it *held* when the `confirm` runs after it were all slower too, is
*transient* when one of them was not, and *new* when fewer runs have come since (all slower).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Final

from ..tags import TagError, check_name

# The median absolute deviation of a normal distribution, times this, is its standard deviation.
MAD_TO_SIGMA: Final = 1.4826
_COLUMN: Final = re.compile(r"[a-z_][a-z0-9_]*")


@dataclass(frozen=True)
class Key:
    """A key of the captures table to group or order by: one of its columns, or a tag."""

    name: str
    is_tag: bool

    def sql(self, alias: str = "c") -> str:
        if self.is_tag:
            return f"{alias}.tags['{self.name}']"
        return f"CAST({alias}.{self.name} AS STRING)"


def check_tag_name(name: str) -> str:
    """Tag names are what analyses group and order by, so they read as SQL text safely
    (tags.py keeps them to letters, digits and `_ . : -`). Values may hold anything."""
    try:
        return check_name(name)
    except TagError as exc:
        raise ValueError(str(exc)) from None


def check_column(name: str) -> str:
    if not _COLUMN.fullmatch(name):
        raise ValueError(f"{name!r} is not a column name")
    return name


@dataclass(frozen=True)
class Params:
    """What a regression is (module docstring); the defaults are the CLI's."""

    window: int = 10  # runs before a point that give its baseline
    min_runs: int = 5  # a point with fewer runs before it is not judged
    k: float = 5.0  # noise multiples beyond which a change counts
    min_change: float = 0.05  # and the least relative change that counts
    confirm: int = 2  # runs after the first slower one that say whether it held


@dataclass(frozen=True)
class Grouping:
    order: Key  # runs are its values, ranked
    groups: tuple[Key, ...]  # each group has its own history
    metric: str = "gpu_ns"  # an instances column: gpu_ns or a counter_ column

    @property
    def group_columns(self) -> list[str]:
        return [f"g{n}" for n in range(len(self.groups))]


PERCENTILES: Final = (0.5, 0.9, 0.99)


@dataclass(frozen=True)
class Dialect:
    """The one thing spelled per engine: p50, p90 and p99 of a value in one aggregate. Three
    `percentile_cont ... WITHIN GROUP` (which both engines accept) keep three copies of the
    values and sort each: on 20 million rows DuckDB took 35 s for the three against 12 s for
    its one aggregate of a list of percentiles. Both spellings are exact, with the same
    interpolation as percentile_cont."""

    name: str
    aggregate: str  # of {value} and {fractions}, giving an array of percentiles
    fractions: str  # the array of fractions: {items}
    first_item: int  # the index of an array's first item

    def percentiles(self, value: str, fractions: tuple[float, ...] = PERCENTILES) -> str:
        listed = self.fractions.format(items=", ".join(str(q) for q in fractions))
        return self.aggregate.format(value=value, fractions=listed)

    def item(self, array: str, n: int) -> str:
        """Item `n` (from 0) of an array."""
        return f"{array}[{n + self.first_item}]"


DUCKDB: Final = Dialect("duckdb", "quantile_cont({value}, {fractions})", "[{items}]", 1)
SPARK: Final = Dialect("spark", "percentile({value}, {fractions})", "array({items})", 0)


def _percentile_columns(dialect: Dialect, array: str) -> str:
    return ", ".join(
        f"{dialect.item(array, n)} AS p{round(q * 100)}" for n, q in enumerate(PERCENTILES)
    )


def _same(a: str, b: str, columns: list[str]) -> str:
    return " AND ".join(f"{a}.{c} = {b}.{c}" for c in columns)


def order_values(grouping: Grouping) -> str:
    """The distinct values of the ordering key (for fleet_run_order, ranked in Python)."""
    expr = grouping.order.sql()
    return f"SELECT DISTINCT {expr} AS order_value FROM captures c WHERE {expr} IS NOT NULL"


# A point's series (its identity and group) as two numbers, which the steps after the points
# join and group by instead of the identity's and the groups' text: the same rows, found faster.
_SERIES: Final = ("identity_key", "group_key")


def runs(grouping: Grouping) -> str:
    """Each capture with a value of the ordering key: its run and groups; `group_key`, one
    number per group, and `run_key`, one per group and run. A group a capture has no value of
    is the empty string (so that it still joins)."""
    groups = "".join(
        f", coalesce({key.sql()}, '') AS g{n}" for n, key in enumerate(grouping.groups)
    )
    by_group = "".join(f"{g}, " for g in grouping.group_columns)
    within = f"PARTITION BY {by_group.rstrip(', ')}" if by_group else ""
    group_key = f"dense_rank() OVER (ORDER BY {by_group.rstrip(', ')})" if by_group else "1"
    return f"""
SELECT capture_id, order_value, order_rank{"".join(", " + g for g in grouping.group_columns)},
       dense_rank() OVER ({within} ORDER BY order_rank) AS run_index,
       count(*) OVER (PARTITION BY {by_group}order_rank) AS captures,
       {group_key} AS group_key,
       dense_rank() OVER (ORDER BY {by_group}order_rank) AS run_key
FROM (SELECT c.capture_id, o.order_value, o.order_rank{groups}
      FROM captures c JOIN fleet_run_order o ON o.order_value = {grouping.order.sql()}) t
"""


def values(grouping: Grouping, dialect: Dialect) -> str:
    """The one pass over every instance: per identity and run (`run_key`), the metric's count
    and percentiles. It groups by as little as it can: the run as one number, its own columns
    joined to the result afterwards (points). An identity is made of its type, label path and
    queue (identity.py), so grouping by them too makes no more groups than the identity alone,
    and costs less than taking the least of each."""
    value = f"CAST(i.{check_column(grouping.metric)} AS DOUBLE)"
    return f"""
SELECT i.identity, r.run_key, i.type, i.label_path, i.queue, count(*) AS n,
       {dialect.percentiles(value)} AS q
FROM instances i JOIN fleet_runs r ON r.capture_id = i.capture_id
WHERE i.{grouping.metric} IS NOT NULL
GROUP BY i.identity, r.run_key, i.type, i.label_path, i.queue
"""


def points(grouping: Grouping, dialect: Dialect) -> str:
    """One point per identity, group and run: the metric's count and percentiles, and the
    point's series as numbers (`identity_key`, `group_key`)."""
    groups = "".join(f", r.{g}" for g in grouping.group_columns)
    return f"""
SELECT t.identity{groups}, r.run_index, r.order_value, r.order_rank, t.n, r.captures,
       {_percentile_columns(dialect, "t.q")}, t.type, t.label_path, t.queue,
       k.identity_key, r.group_key
FROM fleet_values t
JOIN (SELECT DISTINCT run_key, run_index, order_value, order_rank, captures, group_key{groups}
      FROM fleet_runs r) r ON r.run_key = t.run_key
JOIN (SELECT identity, dense_rank() OVER (ORDER BY identity) AS identity_key
      FROM (SELECT DISTINCT identity FROM fleet_values) d) k ON k.identity = t.identity
"""


def _window_join(params: Params, left: str) -> str:
    """The points of the `window` runs before each point of `left`: one equality join per run
    back (a join on the series alone and a range of runs would pair each point with its whole
    series first)."""
    window = int(params.window)
    back = ", ".join(f"({n})" for n in range(1, max(window, 1) + 1))
    return (
        f"CROSS JOIN (VALUES {back}) AS o(back) "
        f"JOIN fleet_points b ON {_same('b', left, list(_SERIES))} "
        f"AND b.run_index = {left}.run_index - o.back AND o.back <= {window}"
    )


def baselines(params: Params) -> str:
    """Each point's baseline: the median of the points of the `window` runs before it."""
    keys = ", ".join(f"s.{k}" for k in (*_SERIES, "run_index"))
    return f"""
SELECT {keys}, percentile_cont(0.5) WITHIN GROUP (ORDER BY b.p50) AS base,
       count(*) AS base_runs
FROM fleet_points s {_window_join(params, "s")}
GROUP BY {keys}
"""


def noise(params: Params) -> str:
    """Each point's noise: the median absolute deviation of those runs from their median."""
    keys = ", ".join(f"s.{k}" for k in (*_SERIES, "run_index"))
    return f"""
SELECT {keys}, min(s.base) AS base, min(s.base_runs) AS base_runs,
       percentile_cont(0.5) WITHIN GROUP (ORDER BY abs(b.p50 - s.base)) AS mad
FROM fleet_baselines s {_window_join(params, "s")}
GROUP BY {keys}
"""


def judged(grouping: Grouping, params: Params) -> str:
    """Every point with its baseline, threshold and whether it is slower or faster."""
    shown = ["identity", *grouping.group_columns, "run_index", "order_value", "order_rank", "n",
             "captures", *(f"p{round(q * 100)}" for q in PERCENTILES), "type", "label_path",
             "queue"]  # fmt: skip
    threshold = (
        f"greatest({float(params.k)} * {MAD_TO_SIGMA} * n.mad, "
        f"{float(params.min_change)} * abs(n.base))"
    )
    judge = f"n.base_runs >= {int(params.min_runs)}"
    return f"""
SELECT {", ".join(f"p.{c}" for c in shown)}, n.base, n.base_runs, n.mad,
       {threshold} AS threshold,
       CASE WHEN {judge} AND p.p50 - n.base > {threshold} THEN 1 ELSE 0 END AS slower,
       CASE WHEN {judge} AND n.base - p.p50 > {threshold} THEN 1 ELSE 0 END AS faster
FROM fleet_points p LEFT JOIN fleet_noise n ON {_same("n", "p", [*_SERIES, "run_index"])}
"""


def changes(grouping: Grouping, params: Params) -> str:
    """The points where a change appeared (slower or faster after one that was not), with
    what the runs after it said."""
    partition = ", ".join(["identity", *grouping.group_columns])
    confirm = int(params.confirm)
    after = f"ROWS BETWEEN 1 FOLLOWING AND {confirm} FOLLOWING"
    rows = "ROWS BETWEEN 1 PRECEDING AND 1 PRECEDING"
    window = f"PARTITION BY {partition} ORDER BY run_index"
    status = f"""CASE WHEN after_runs = {confirm} AND after_same = {confirm} THEN 'held'
                 WHEN after_same = after_runs THEN 'new' ELSE 'transient' END"""
    return f"""
SELECT t.*, {status} AS status FROM (
  SELECT j.*, CASE WHEN j.slower = 1 THEN 'slower' ELSE 'faster' END AS direction,
         coalesce(CASE WHEN j.slower = 1 THEN after_slower ELSE after_faster END, 0)
             AS after_same,
         coalesce(after_count, 0) AS after_runs
  FROM (
    SELECT f.*,
           coalesce(max(f.slower) OVER ({window} {rows}), 0) AS before_slower,
           coalesce(max(f.faster) OVER ({window} {rows}), 0) AS before_faster,
           sum(f.slower) OVER ({window} {after}) AS after_slower,
           sum(f.faster) OVER ({window} {after}) AS after_faster,
           count(*) OVER ({window} {after}) AS after_count
    FROM fleet_judged f
  ) j
  WHERE (j.slower = 1 AND j.before_slower = 0) OR (j.faster = 1 AND j.before_faster = 0)
) t
"""


def summary(groups: tuple[Key, ...], metric: str, dialect: Dialect) -> str:
    """Per identity and group, over the whole dataset: count and percentiles of the metric."""
    columns = [f"g{n}" for n in range(len(groups))]
    chosen = "".join(f", coalesce({key.sql()}, '') AS g{n}" for n, key in enumerate(groups))
    keys = "".join(f", {g}" for g in columns)
    value = f"CAST(i.{check_column(metric)} AS DOUBLE)"
    return f"""
SELECT identity{keys}, n, captures, {_percentile_columns(dialect, "q")}, type, label_path
FROM (
  SELECT identity{keys}, count(*) AS n, count(DISTINCT capture_id) AS captures,
         {dialect.percentiles("value")} AS q, min(type) AS type, min(label_path) AS label_path
  FROM (SELECT i.identity, i.capture_id, i.type, i.label_path, {value} AS value{chosen}
        FROM instances i JOIN captures c ON c.capture_id = i.capture_id
        WHERE i.{metric} IS NOT NULL) t
  GROUP BY identity{keys}
) s
"""


def trend_steps(grouping: Grouping, params: Params, dialect: Dialect) -> list[tuple[str, str]]:
    """The regression analysis: every step, kept by name in this order; the last is the
    changes found (fleet_judged holds the whole trend)."""
    return [
        ("fleet_runs", runs(grouping)),
        ("fleet_values", values(grouping, dialect)),
        ("fleet_points", points(grouping, dialect)),
        ("fleet_baselines", baselines(params)),
        ("fleet_noise", noise(params)),
        ("fleet_judged", judged(grouping, params)),
        ("fleet_changes", changes(grouping, params)),
    ]
