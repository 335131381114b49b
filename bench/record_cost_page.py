"""bench/record_cost.py's page (docs/bench/record-cost.md) and the tables the device page borrows:
ns per call per layer stack, command and thread count, their spread, and the verdicts."""

from __future__ import annotations

import textwrap
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from bench.record_configs import (
    BASELINE,
    COMMANDS,
    CONFIGS,
    COUNTING_LAYER,
    DEFAULTS,
    DIRECT_TARGET_NS,
    IDLE_CONFIG,
    IDLE_TARGET_NS,
    NAME,
    THREAD_TOLERANCE,
    TIMELINE_DRAW_TARGET_NS,
    VKSCOPE_LAYER,
    Config,
)
from bench.resultfile import banner, median, met, not_run, provenance, spread


def fmt(ns: float) -> str:
    return f"{ns:.2f}"


def fmt_added(ns: float) -> str:
    # Adding 0.0 turns a rounded -0.0 into 0.0, so no-change never reads as "-0.00".
    return f"{round(ns, 2) + 0.0:+.2f}"


def api(command: str) -> str:
    return f"vkCmd{command.capitalize()}"


@dataclass(frozen=True)
class Grid:
    """Every run of every (stack, command, threads) point, from a results file."""

    samples: Mapping[tuple[str, str, int], Sequence[float]]
    configs: Sequence[Config]
    threads: Sequence[int]

    @classmethod
    def of(
        cls,
        entries: Sequence[Mapping[str, Any]],
        configs: Sequence[Config] = (*CONFIGS, IDLE_CONFIG),
    ) -> Grid:
        samples = {
            (e["config"], e["command"].removeprefix("vkCmd").lower(), e["threads"]): e[
                "samples_ns_per_call"
            ]
            for e in entries
        }
        threads = sorted({t for _, _, t in samples})
        present = [c for c in configs if any(k == c.key for k, _, _ in samples)]
        return cls(samples, present, threads)

    def runs(self, config: Config, command: str, threads: int) -> Sequence[float]:
        return self.samples[(config.key, command, threads)]

    def median(self, config: Config, command: str, threads: int) -> float:
        return median(self.runs(config, command, threads))

    def added(self, config: Config, command: str, threads: int) -> list[float]:
        """Per run, the time added over the stack without vkscope measured in the same round
        (the runs are interleaved, so each round saw the machine in one state)."""
        base = self.runs(BASELINE, command, threads)
        return [a - b for a, b in zip(self.runs(config, command, threads), base, strict=True)]


def results_table(grid: Grid) -> list[str]:
    head = ["Command", "Threads"]
    for config in grid.configs:
        head.append(config.column)
        if config is not BASELINE:
            head.append("added")
    rows = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for command in COMMANDS:
        for threads in grid.threads:
            base = grid.median(BASELINE, command, threads)
            cells = [api(command), str(threads)]
            for config in grid.configs:
                value = grid.median(config, command, threads)
                cells.append(fmt(value))
                if config is not BASELINE:
                    cells.append(fmt_added(value - base))
            rows.append("| " + " | ".join(cells) + " |")
    return rows


def spread_table(grid: Grid) -> list[str]:
    rows = ["| Stack | Command | Threads | min | median | max |", "|---|---|---|---|---|---|"]
    for config in grid.configs:
        for command in COMMANDS:
            for threads in grid.threads:
                runs = grid.runs(config, command, threads)
                rows.append(
                    f"| {config.column} | {api(command)} | {threads} | {fmt(min(runs))} "
                    f"| {fmt(median(runs))} | {fmt(max(runs))} |"
                )
    return rows


def thread_table(grid: Grid) -> list[str]:
    rows = [
        "| Stack | Command | 1 thread | 2 threads | 2 / 1 |",
        "|---|---|---|---|---|",
    ]
    for config in grid.configs:
        for command in COMMANDS:
            one = grid.median(config, command, 1)
            two = grid.median(config, command, 2)
            rows.append(
                f"| {config.column} | {api(command)} | {fmt(one)} | {fmt(two)} | {two / one:.3f} |"
            )
    return rows


def worst(
    points: Sequence[tuple[str, int]], value: Callable[[str, int], Sequence[float]]
) -> tuple[str, int, Sequence[float]]:
    """The point whose median is the highest, with its runs."""
    return max(((c, t, value(c, t)) for c, t in points), key=lambda p: median(p[2]))


def verdicts(grid: Grid) -> list[str]:
    """Each target, judged on the median of the runs, with their spread."""
    keys = {c.key for c in grid.configs}
    lines = []
    every = [(c, t) for c in COMMANDS for t in grid.threads]
    if "direct" in keys:
        c, t, runs = worst(every, lambda c, t: grid.added(CONFIGS[1], c, t))
        lines.append(
            f"- Features off, at most {DIRECT_TARGET_NS:g} ns/call added: "
            f"{met(median(runs) <= DIRECT_TARGET_NS)} (worst point {api(c)}, {t} thread(s): "
            f"{spread(runs, fmt_added)} ns/call)."
        )
    if 1 in grid.threads and 2 in grid.threads:

        def ratio(cfg: Config, c: str) -> list[float]:
            one, two = grid.runs(cfg, c, 1), grid.runs(cfg, c, 2)
            return [b / a for a, b in zip(one, two, strict=True)]

        ratios = [(cfg, c, ratio(cfg, c)) for cfg in grid.configs for c in COMMANDS]
        cfg, c, runs = max(ratios, key=lambda r: median(r[2]))
        lines.append(
            f"- Two threads no slower per call than one (within {THREAD_TOLERANCE - 1:.0%}): "
            f"{met(median(runs) <= THREAD_TOLERANCE)} (worst {cfg.column} {api(c)}: ratio "
            f"{spread(runs, lambda v: f'{v:.3f}')})."
        )
    if "timeline" in keys:
        draws = [("draw", t) for t in grid.threads]
        _, t, runs = worst(draws, lambda c, t: grid.added(CONFIGS[3], c, t))
        lines.append(
            f"- Timeline on, at most {TIMELINE_DRAW_TARGET_NS:g} ns added per vkCmdDraw: "
            f"{met(median(runs) <= TIMELINE_DRAW_TARGET_NS)} (worst {t} thread(s): "
            f"{spread(runs, fmt_added)} ns/call). A dispatch is a whole workload (tag labels, a"
            " command-stream entry), so its cost is per workload, not per call of a hot loop."
        )
    if "idle" in keys and "direct" in keys:
        for command in COMMANDS:
            base = grid.runs(CONFIGS[1], command, 1)
            idle = grid.runs(IDLE_CONFIG, command, 1)
            runs = [a - b for a, b in zip(idle, base, strict=True)]
            lines.append(
                f"- Timing on outside captured frames, at most {IDLE_TARGET_NS:g} ns/call over "
                f"features off: {api(command)} {met(median(runs) <= IDLE_TARGET_NS)} "
                f"({spread(runs, fmt_added)} ns/call, 1 thread)."
            )
    return lines


def wrap(text: str, first: str = "", rest: str = "") -> list[str]:
    """One Markdown paragraph or list item, wrapped like the rest of the docs."""
    return textwrap.wrap(
        text, width=100, initial_indent=first, subsequent_indent=rest, break_on_hyphens=False
    )


def method(settings: Mapping[str, Any]) -> list[str]:
    none, direct, wrapped, timeline = CONFIGS
    calls, batch, runs = f"{settings['calls']:,}", f"{settings['batch']:,}", settings["runs"]
    return [
        *wrap(
            "An application records `vkCmdDraw` and `vkCmdDispatch` millions of times per"
            " second, so the layer must not make them measurably slower when no feature of"
            " vkscope needs them. `bench/record_cost.py` times one such call through these layer"
            " stacks, each enabled by the application in this order (the first layer is closest"
            " to the application):"
        ),
        "",
        *wrap(
            f"**{none.title}**: `{COUNTING_LAYER}` only. This test layer (`bench/counting_layer`)"
            " increments a per-thread counter and does not forward the command, so the driver's"
            " own recording cost is in none of the numbers and the floor is one indirect call"
            " into a trivial function.",
            "- ",
            "  ",
        ),
        *wrap(
            f"**{direct.title}**: `{VKSCOPE_LAYER}` above the counting layer with its default"
            " settings: no feature hooks these commands, so vkscope hands out the counting"
            " layer's own pointer.",
            "- ",
            "  ",
        ),
        *wrap(
            f"**{wrapped.title}**: the same with `VK_VKSCOPE_PASSTHROUGH=wrapped`, which routes"
            " every command through vkscope's generated entry points and their dispatch-table"
            " lookup: roughly the price of one intercepted command that does no work of its own.",
            "- ",
            "  ",
        ),
        *wrap(
            f"**{timeline.title}**: the same with `VK_VKSCOPE_TIMELINE=true` (no host): each draw"
            " is counted for its render pass through one lock-free lookup of the command"
            " buffer's state; each dispatch becomes a tracked workload with its `t<tagID>`"
            " labels written around it.",
            "- ",
            "  ",
        ),
        "",
        *wrap(
            "The harness (`bench/record_cost/main.cpp`) takes the commands from"
            " `vkGetDeviceProcAddr`, as an engine using volk does, so the loader's trampoline is"
            f" not measured. Each thread records {calls} calls into its own command"
            f" pool, in command buffers of {batch} calls (inside a render pass for"
            " draws), after warm-up batches; the threads start together on a latch and record"
            " concurrently. Only the calls are timed (`std::chrono::steady_clock` around each"
            " batch's loop; begin, bind, end and reset are the driver's and the same for every"
            f" stack), and nothing is submitted. Every point is the median of {runs}"
            " separate processes, run round-robin over the points, in nanoseconds per call and"
            " per thread."
        ),
    ]


def render(results: Mapping[str, Any] | None) -> str:
    lines = [
        "# What vkscope adds to command recording",
        "",
        banner("record_cost.py"),
        "",
        *method(results["settings"] if results else DEFAULTS),
        "",
        "## Targets",
        "",
        *wrap(
            f"Features off: at most {DIRECT_TARGET_NS:g} ns/call added over the stack without"
            " vkscope.",
            "- ",
            "  ",
        ),
        *wrap(
            "Two recording threads: no slowdown per call compared with one thread (nothing on"
            " this path may take a lock or write a cache line that another thread writes).",
            "- ",
            "  ",
        ),
        *wrap(
            f"Timeline on: at most {TIMELINE_DRAW_TARGET_NS:g} ns added per vkCmdDraw.", "- ", "  "
        ),
        "",
        "## Results",
        "",
    ]
    if results is None:
        lines += [*not_run(NAME, ".venv/bin/python bench/record_cost.py --build-dir build/dev")]
    else:
        grid = Grid.of(results["results"])
        lines += [
            *provenance(results, NAME),
            "",
            "Nanoseconds per call, median of the runs; *added* is the difference to the stack"
            " without vkscope.",
            "",
            *results_table(grid),
            "",
            "Two threads against one, nanoseconds per call and thread (medians):",
            "",
            *thread_table(grid),
            "",
            *verdicts(grid),
            "",
            f"Every point over its {results['settings']['runs']} runs, nanoseconds per call:",
            "",
            *spread_table(grid),
        ]
    lines += [
        "",
        "## Reproduce",
        "",
        "```sh",
        "cmake -S . -B build/dev -G Ninja -DVKSCOPE_BUILD_WORKLOADS=OFF",
        "cmake --build build/dev",
        ".venv/bin/python bench/record_cost.py --build-dir build/dev",
        "```",
        "",
        *wrap(
            "The driver sets `VK_ADD_LAYER_PATH` to `build/dev/layer` and"
            " `build/dev/bench/counting_layer` and `LP_NUM_THREADS=0`, removes"
            " `VK_INSTANCE_LAYERS` and every `VK_VKSCOPE_*` setting from the environment, and"
            " interleaves the runs so that a drifting machine affects every stack alike. Every"
            " run, per-thread times and the machine description go to"
            " `bench/results/record_cost.json`. One point by hand:"
        ),
        "",
        "```sh",
        "VK_ADD_LAYER_PATH=build/dev/layer:build/dev/bench/counting_layer LP_NUM_THREADS=0 \\",
        "  build/dev/bench/record_cost/vkscope-bench-record \\",
        f"  --layers {VKSCOPE_LAYER},{COUNTING_LAYER} --command draw --threads 2",
        "```",
        "",
    ]
    return "\n".join(lines)
