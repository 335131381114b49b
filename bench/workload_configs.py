"""What bench/workload_cost.py measures and its page (bench/workload_cost_page.py) judges: the
configurations it runs, the targets, and the functions callgrind counts in."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from bench.resultfile import DOCS_DIR

NAME = "workload_cost"
DOC = DOCS_DIR / "workload-cost.md"
COMMAND = ".venv/bin/python bench/workload_cost.py"
# The targets (issue: cost per workload at game scale). On a CPU device (lavapipe), what
# `vkscope run` adds to the application's vkQueueSubmit call, per workload, in µs:
SUBMIT_TARGETS_US = {"run": 0.2, "run_timing_queue": 0.4}
# On a GPU: what `vkscope run` adds to the frame, and what timing and pipeline statistics add
# against what the application's own queries add (the floor).
FRAME_TARGET_PERCENT = 3.0
FLOOR_TARGETS = {
    "run_timing_queue": ("floor_timestamps", 1.25),
    "run_statistics": ("floor_statistics", 1.15),
}


@dataclass(frozen=True)
class Config:
    key: str
    title: str
    settings: Mapping[str, str] = field(default_factory=dict)  # layer settings, no capture server
    layer: bool = True
    run: tuple[str, ...] | None = None  # `vkscope run` with these options
    floor: str = "none"  # what the program writes itself (--floor)
    # Of the frames the others time: a sampler's handovers make its frames far longer.
    frames_share: float = 1.0


CONFIGS = (
    Config("none", "no layer", layer=False),
    Config(
        "floor_timestamps", "floor: the program's own timestamps", layer=False, floor="timestamps"
    ),
    Config(
        "floor_statistics",
        "floor: the program's own pipeline statistics queries",
        layer=False,
        floor="pipeline_statistics",
    ),
    Config("timeline", "timeline, no capture server", {"timeline": "true"}),
    Config("run", "`vkscope run` (timeline)", run=()),
    Config("run_timing_none", "`vkscope run --timing none`", run=("--timing", "none")),
    Config("run_timing_queue", "`vkscope run --timing queue`", run=("--timing", "queue")),
    Config("run_timing_full", "`vkscope run --timing full`", run=("--timing", "full")),
    # A budget that leaves every workload out: what the instruments cost while idle, which should
    # be (nearly) the timeline's own cost.
    Config(
        "run_timing_queue_budget0",
        "`vkscope run --timing queue --budget 0%`",
        run=("--timing", "queue", "--budget", "0%"),
    ),
    Config(
        "run_statistics",
        "`vkscope run --counters pipeline_statistics`",
        run=("--counters", "pipeline_statistics"),
    ),
    Config(
        "run_sampler",
        "`vkscope run --counters sampler:cpu_time`",
        run=("--counters", "sampler:cpu_time"),
        frames_share=0.2,
    ),
)
BY_KEY = {c.key: c for c in CONFIGS}
# Counted with callgrind: the baseline and what the targets are about.
INSTRUCTION_CONFIGS = (
    "none",
    "timeline",
    "run",
    "run_timing_queue",
    "run_timing_queue_budget0",
    "run_statistics",
)
# What callgrind counts: the program's entry points around its vkQueueSubmit and around its
# recording of a frame (workloads/src/profiled.h), everything they call included.
PROFILED = {"submit": "wl_profiled_submit", "record": "wl_profiled_record"}

# Each configuration's runs, round by round, as bench/workload_cost.py measures them.
Rounds = dict[str, list[dict[str, Any]]]
