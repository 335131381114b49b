"""What bench/budget.py measures and the page judges: its configurations, which of them run
under a budget and against which they are judged, when a per-identity GPU time agrees, and the
frames a budget implies."""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from bench.resultfile import DOCS_DIR
from bench.workload_configs import Config

NAME = "budget"
DOC = DOCS_DIR / "budget.md"
COMMAND = ".venv/bin/python bench/budget.py"


@dataclass(frozen=True)
class Budgeted:
    """A budgeted configuration, the unbudgeted one it is judged against, and its budget."""

    key: str
    full: str
    percent: float
    idle: str  # the same instruments under a budget of 0%


CONFIGS = (
    Config("run", "`vkscope run` (timeline)", run=()),
    Config("timing", "`--timing queue`", run=("--timing", "queue")),
    Config(
        "timing_budget", "`--timing queue --budget 5%`", run=("--timing", "queue", "--budget", "5%")
    ),
    Config(
        "timing_idle",
        "`--timing queue --budget 0%`",
        run=("--timing", "queue", "--budget", "0%"),
    ),
    Config(
        "statistics",
        "`--timing queue --counters pipeline_statistics`",
        run=("--timing", "queue", "--counters", "pipeline_statistics"),
    ),
    Config(
        "statistics_budget",
        "`--timing queue --counters pipeline_statistics --budget 10%`",
        run=("--timing", "queue", "--counters", "pipeline_statistics", "--budget", "10%"),
    ),
    Config(
        "statistics_idle",
        "`--timing queue --counters pipeline_statistics --budget 0%`",
        run=("--timing", "queue", "--counters", "pipeline_statistics", "--budget", "0%"),
    ),
)
BY_KEY = {c.key: c for c in CONFIGS}
BUDGETED = (
    Budgeted("timing_budget", "timing", 5.0, "timing_idle"),
    Budgeted("statistics_budget", "statistics", 10.0, "statistics_idle"),
)
# A per-identity GPU time agrees with the unbudgeted capture's within this share, or within this
# many ns where that is more: the `accuracy` device check's target (2% for dispatches over
# 100 µs), and for the few-µs workloads of this frame about what `queue` timing adds to each
# dispatch there (0.4 to 0.7 µs on an H200) with room for its spread from run to run.
AGREE_PERCENT = 2.0
AGREE_NS = 1000.0


def added(rounds: Mapping[str, Any], key: str, metric: str) -> list[float]:
    """What `key` adds to the frame beyond the timeline's own cost (the run of the timeline
    alone of the same round), in percent of that run's frame."""
    return [percent_over(a, b, metric) for a, b in zip(rounds[key], rounds["run"], strict=True)]


def percent_over(run: Mapping[str, Any], timeline: Mapping[str, Any], metric: str) -> float:
    """What `run` adds to `timeline`'s `metric`, in percent of it."""
    return float((run[metric] - timeline[metric]) / timeline[metric] * 100)


def implied(rounds: Mapping[str, Any], b: Budgeted) -> list[int]:
    """The frames the budget implies, round by round: the full cost (the unbudgeted run's median
    frame beyond the timeline's) over the budget, rounded up, plus one."""
    return [implied_frames(f, b) for f in added(rounds, b.full, "period_median_us")]


def implied_frames(full_percent: float, b: Budgeted) -> int:
    """The full cost (percent of the frame) over the budget, rounded up, plus one."""
    return max(1, math.ceil(max(0.0, full_percent) / b.percent)) + 1
