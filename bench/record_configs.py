"""What bench/record_cost.py measures and its page (bench/record_cost_page.py) judges: the layer
stacks it times each command through, the commands, the thread counts and the targets."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from bench.resultfile import DOCS_DIR

NAME = "record_cost"
DOC = DOCS_DIR / "record-cost.md"
VKSCOPE_LAYER = "VK_LAYER_VKSCOPE_profiler"
COUNTING_LAYER = "VK_LAYER_VKSCOPE_counting"
COMMANDS = ("draw", "dispatch")
THREADS = (1, 2)
DIRECT_TARGET_NS = 3.0
TIMELINE_DRAW_TARGET_NS = 6.0
# Two threads on two cores share caches, memory bandwidth and the VM's scheduling; a per-call time
# within this factor of the single-thread time counts as "no slowdown".
THREAD_TOLERANCE = 1.10
DEFAULTS = {"runs": 5, "calls": 2_000_000, "batch": 10_000}


@dataclass(frozen=True)
class Config:
    key: str
    title: str
    column: str
    layers: tuple[str, ...]
    env: Mapping[str, str] = field(default_factory=dict)


CONFIGS = (
    Config("none", "no vkscope", "no vkscope", (COUNTING_LAYER,)),
    Config(
        "direct",
        "vkscope, features off",
        "features off",
        (VKSCOPE_LAYER, COUNTING_LAYER),
        {"VK_VKSCOPE_PASSTHROUGH": "direct"},
    ),
    Config(
        "wrapped",
        "vkscope, wrapped pass-through",
        "wrapped",
        (VKSCOPE_LAYER, COUNTING_LAYER),
        {"VK_VKSCOPE_PASSTHROUGH": "wrapped"},
    ),
    Config(
        "timeline",
        "vkscope, timeline on",
        "timeline",
        (VKSCOPE_LAYER, COUNTING_LAYER),
        {"VK_VKSCOPE_TIMELINE": "true"},
    ),
)
# The stack without vkscope and the one with its timeline, which the timing and counters
# benchmarks measure beside their own stacks.
BASELINE, TIMELINE = CONFIGS[0], CONFIGS[3]
# Timing on, with a frame selection that captures nothing: what an application pays between the
# frames it profiles. Measured by bench/timing_cost.py and by the device checks.
IDLE_FRAMES = "1000000-"
IDLE_TARGET_NS = 5.0
IDLE_CONFIG = Config(
    "idle",
    "vkscope, timing queue, frame not captured",
    "timing (idle)",
    (VKSCOPE_LAYER, COUNTING_LAYER),
    {"VK_VKSCOPE_TIMING": "queue", "VK_VKSCOPE_FRAMES": IDLE_FRAMES},
)
