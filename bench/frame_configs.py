"""What bench/frame_cost.py measures and its page (bench/frame_cost_page.py) judges: the
configurations, the targets and where the processes run."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from bench.resultfile import DOCS_DIR

NAME = "frame_cost"
DOC = DOCS_DIR / "frame-cost.md"
COMMAND = ".venv/bin/python bench/frame_cost.py"
CHILD_TIME = Path(__file__).resolve().parent / "child_time.py"
QUEUE_TARGET_PERCENT = 10.0  # `vkscope run --timing queue`
TIMELINE_TARGET_PERCENT = 3.0  # `vkscope run` (the timeline)
SYSCALL_FLOOR = 0.05  # calls per frame below this are start-up noise, not per-frame work
HOST_CPU_RUNS = 3  # pairs of runs measuring vkscope's own CPU per frame
RUN_QUEUE_RUNS = 3  # pairs of runs measuring the application's run-queue wait per frame


@dataclass(frozen=True)
class Config:
    key: str
    title: str
    settings: Mapping[str, str] = field(default_factory=dict)
    layer: bool = True
    run: bool = False  # through `vkscope run`: a capture server writing a capture
    # Streaming to a bare reader (BareReader), which discards what it reads: what the layer's
    # messages cost the application, without the capture server's work beside it.
    sink: bool = False


CONFIGS = (
    Config("none", "no layer", layer=False),
    Config("off", "layer loaded, features off"),
    Config("timeline", "timeline, no host", {"timeline": "true"}),
    Config("timing_none", "timing none, no host", {"timing": "none"}),
    Config("timing_queue", "timing queue, no host", {"timing": "queue"}),
    Config("sink", "timeline, streaming to a bare reader", {"timeline": "true"}, sink=True),
    Config("run", "`vkscope run` (timeline)", run=True),
    Config("run_queue", "`vkscope run --timing queue`", {"timing": "queue"}, run=True),
)
# Measured for the application's run-queue wait only: the way of reading timestamps that `detect`
# does not take on a CPU device, against the one it takes (`timing queue, no host`).
IN_PLACE = Config(
    "timing_queue_in_place",
    "timing queue, no host, one-time recordings read in place (`timing_read=in_place`)",
    {"timing": "queue", "timing_read": "in_place"},
)
RUN_QUEUE_CONFIGS = (*CONFIGS, IN_PLACE)
# The configurations the targets compare, run again in rounds of their own (--verdict-runs): a
# target's verdict rests on more rounds than the whole table could afford, since a round of
# three configurations takes a third of the time of a round of all of them.
VERDICT_CONFIGS = tuple(c for c in CONFIGS if c.key in ("none", "run", "run_queue"))
TITLES = {c.key: c.title for c in RUN_QUEUE_CONFIGS}


# Where the processes run. `shared` is how an application runs: the system schedules its threads
# and vkscope's host over every core. `split` pins the application (every thread of it, the
# layer's included) to one core and vkscope's host to the others: the host's CPU no longer
# competes with the application, and threads no longer move between cores, which on a small
# virtual machine is most of the run-to-run spread.
PLACEMENTS = ("shared", "split")
