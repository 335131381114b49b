"""bench/workload_cost.py's page (docs/bench/workload-cost.md) and the device page's block of the
same measurement: what each configuration adds per workload, beside the floor, the verdicts and
the instruction counts."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from bench.resultfile import (
    banner,
    load,
    median,
    median_interval,
    met,
    not_run,
    provenance,
    spread,
)
from bench.workload_configs import (
    BY_KEY,
    COMMAND,
    CONFIGS,
    FLOOR_TARGETS,
    FRAME_TARGET_PERCENT,
    NAME,
    SUBMIT_TARGETS_US,
    Rounds,
)

METRICS = (("frame_us", "frame"), ("submit_us", "vkQueueSubmit call"), ("record_us", "recording"))
# Each instrument beside its floor: the same queries written by the application itself.
FLOORS = (
    ("run_timing_none", "floor_timestamps"),
    ("run_timing_queue", "floor_timestamps"),
    ("run_timing_full", "floor_timestamps"),
    ("run_statistics", "floor_statistics"),
)
EXAMPLE_WORKLOADS = 2000  # the frame the page's prediction is worked out for


def us(v: float) -> str:
    return f"{v:.1f} µs"


def signed(v: float) -> str:
    return f"{v:+.2f} µs"


def added(rounds: Rounds, key: str, metric: str, per: float = 1) -> list[float]:
    """Each round's run of `key` against the run without the layer of the same round, / `per`."""
    return [(a[metric] - b[metric]) / per for a, b in zip(rounds[key], rounds["none"], strict=True)]


def floor_ratios(rounds: Rounds, key: str, floor: str) -> list[float]:
    """What `key` adds to the frame over what `floor` adds, round by round."""
    return [
        (a["frame_us"] - n["frame_us"]) / (f["frame_us"] - n["frame_us"])
        for a, f, n in zip(rounds[key], rounds[floor], rounds["none"], strict=True)
        if f["frame_us"] != n["frame_us"]
    ]


def titled(rounds: Mapping[str, Any]) -> list[tuple[str, str]]:
    """The configurations measured, in table order, with their titles."""
    return [(c.key, c.title) for c in CONFIGS if c.key in rounds]


def method_line(block: Mapping[str, Any]) -> str:
    n = block["workloads"]
    thread = ", recorded on a thread of its own" if block.get("record_thread") else ""
    return (
        f"`vkscope-workload --scenario game_scale --workloads {n}`: {n} workloads a frame (a "
        "clear, then render passes of three draws, dispatches and buffer copies, each waiting for "
        "the one before through a barrier, then two copies to host memory), one vkQueueSubmit a "
        "frame"
        f"{thread}{pinned(block)}; frames end at {block['frame_end']}. Each run times "
        f"{block['frames']} frames "
        f"after {block['warmup']} (medians; the sampler's runs a fifth of them, its handovers "
        f"make its frames far longer); {len(block['rounds']['none'])} interleaved rounds. "
        "*Added* compares each run with the run without the layer of the same round, divided by "
        f"the {n} workloads: the median of the rounds, and their range."
    )


def pinned(block: Mapping[str, Any]) -> str:
    """How the method line says where the program ran: pinned (pinned_cpus()) or not."""
    cpus = block.get("cpus")
    if not cpus:
        return ""
    return f", pinned to CPUs {','.join(map(str, cpus))} in every run (taskset)"


def per_workload_table(block: Mapping[str, Any]) -> list[str]:
    rounds = block["rounds"]
    n = block["workloads"]
    head = "| configuration |"
    for _, name in METRICS:
        head += f" {name} | added per workload |"
    lines = [head, "|---" * (1 + 2 * len(METRICS)) + "|"]
    for key, title in titled(rounds):
        cells = []
        for metric, _ in METRICS:
            cells.append(spread([r[metric] for r in rounds[key]], us))
            cells.append("" if key == "none" else spread(added(rounds, key, metric, n), signed))
        lines.append(f"| {title} | " + " | ".join(cells) + " |")
    return lines


def floor_lines(block: Mapping[str, Any]) -> list[str]:
    rounds = block["rounds"]
    n = block["workloads"]
    pairs = [(k, f) for k, f in FLOORS if k in rounds and f in rounds]
    if not pairs:
        return []
    lines = [
        "Beside the floor: what each instrument adds to the frame, per workload, against what the "
        "application's own queries add (the same timestamps after each workload, or a pipeline "
        "statistics query around it, read on the host), round by round.",
        "",
        "| configuration | added to the frame, per workload | the floor adds | ratio |",
        "| --- | --- | --- | --- |",
    ]
    for key, floor in pairs:
        ratios = floor_ratios(rounds, key, floor)
        lines.append(
            f"| {BY_KEY[key].title} | {spread(added(rounds, key, 'frame_us', n), signed)} "
            f"| {spread(added(rounds, floor, 'frame_us', n), signed)} ({BY_KEY[floor].title}) "
            f"| {spread(ratios, lambda v: f'{v:.2f}x') if ratios else 'n/a'} |"
        )
    return lines


def prediction_lines(block: Mapping[str, Any]) -> list[str]:
    """What a capture of a larger frame would cost on this device, from the medians."""
    rounds = block["rounds"]
    n = block["workloads"]
    parts = []
    for key, title in titled(rounds):
        if BY_KEY[key].layer:
            frame = median(added(rounds, key, "frame_us", n)) * EXAMPLE_WORKLOADS / 1e3
            submit = median(added(rounds, key, "submit_us", n)) * EXAMPLE_WORKLOADS / 1e3
            parts.append(
                f"{title} {frame:+.2f} ms to the frame ({submit:+.2f} ms of it in vkQueueSubmit)"
            )
    return [
        f"To predict a capture's cost: multiply the workloads of a frame by *added per workload*. "
        f"A frame of {EXAMPLE_WORKLOADS:,} such workloads on this device: "
        + "; ".join(parts)
        + ".",
    ]


def judged(values: Sequence[float], target: float, fmt: Callable[[float], str]) -> str:
    """A target judged on the median of the rounds, with the 95% interval of that median."""
    value = median(values)
    interval = median_interval(values)
    if interval is None:
        settled = f"{len(values)} rounds are too few for a 95% interval of the median"
    else:
        lo, hi = interval
        where = (
            "all of it within the target"
            if hi <= target
            else "all of it over the target"
            if lo > target
            else "the target inside it: these rounds do not settle the verdict"
        )
        settled = f"95% interval of the median {fmt(lo)} to {fmt(hi)}, {where}"
    return f"{met(value <= target)} ({fmt(value)}, median of {len(values)} rounds; {settled})"


def verdict_lines(block: Mapping[str, Any], cpu_device: bool) -> list[str]:
    rounds = block["rounds"]
    n = block["workloads"]
    lines = []
    if cpu_device:
        for key, target in SUBMIT_TARGETS_US.items():
            if key in rounds:
                values = added(rounds, key, "submit_us", n)
                lines.append(
                    f"- {BY_KEY[key].title}: the vkQueueSubmit call gains at most "
                    f"{target} µs per workload: {judged(values, target, signed)}."
                )
        lines.append("- The frame targets are for a GPU (the `workload_cost` device check).")
        return lines
    if "run" in rounds:
        values = [
            100 * a / r["frame_us"]
            for a, r in zip(added(rounds, "run", "frame_us"), rounds["none"], strict=True)
        ]
        lines.append(
            f"- {BY_KEY['run'].title}: adds at most {FRAME_TARGET_PERCENT:g}% to the "
            f"frame: {judged(values, FRAME_TARGET_PERCENT, lambda v: f'{v:+.1f}%')}."
        )
    for key, (floor, target) in FLOOR_TARGETS.items():
        if key in rounds and floor in rounds:
            lines.append(
                f"- {BY_KEY[key].title}: adds to the frame at most {target:g} times what "
                f"{BY_KEY[floor].title.removeprefix('floor: ')} add: "
                f"{judged(floor_ratios(rounds, key, floor), target, lambda v: f'{v:.2f}x')}."
            )
    return lines


def instruction_lines(block: Mapping[str, Any]) -> list[str]:
    counted = block.get("instructions")
    if not counted:
        return []
    n = block["workloads"]
    per_frame = counted["per_frame"]
    base = per_frame.get("none", {"submit": 0.0, "record": 0.0})
    lines = [
        "Instructions per workload (valgrind's callgrind, counted inside the program's "
        "vkQueueSubmit call and inside its recording of the frame, from vkResetCommandPool to "
        "vkEndCommandBuffer, everything they call included; the difference between runs of "
        f"{counted['long']} and {counted['short']} frames over the frames in between). Unlike "
        "time, counts do not move with the machine's load. They are the calling thread's "
        "instructions only: time it spends switched out shows in the wall times above and not "
        "here. On a CPU device that is mostly the driver's thread, woken by vkQueueSubmit to run "
        "the frame, taking the application's core (docs/timeline.md).",
        "",
        "| configuration | vkQueueSubmit | added per workload | recording | added per workload |",
        "| --- | ---: | ---: | ---: | ---: |",
    ]
    for key, title in titled(per_frame):
        counts = per_frame[key]
        cells = []
        for part in ("submit", "record"):
            cells.append(f"{counts[part] / n:,.0f}")
            cells.append("" if key == "none" else f"{(counts[part] - base[part]) / n:+,.0f}")
        lines.append(f"| {title} | " + " | ".join(cells) + " |")
    return lines


def instruction_comparison_lines(
    counted: Mapping[str, Mapping[str, Mapping[str, float]]], workloads: int
) -> list[str]:
    """Instructions per workload in the vkQueueSubmit call and in recording, each layer beside the
    others, and what each configuration adds over the run without the layer."""
    lines = [
        "| configuration | layer | vkQueueSubmit | added | recording | added |",
        "| --- | --- | ---: | ---: | ---: | ---: |",
    ]
    first = next(iter(counted.values()))
    for key, title in titled(first):
        for side, per_frame in counted.items():
            base = per_frame.get("none", {"submit": 0.0, "record": 0.0})
            counts = per_frame[key]
            cells = []
            for part in ("submit", "record"):
                cells.append(f"{counts[part] / workloads:,.0f}")
                cells.append(f"{(counts[part] - base[part]) / workloads:+,.0f}")
            lines.append(f"| {title} | {side} | " + " | ".join(cells) + " |")
            if key == "none":
                break  # one program without the layer serves every side
    return lines


def dropped_lines(block: Mapping[str, Any]) -> list[str]:
    dropped = sorted(
        {BY_KEY[k].title for k, runs in block["rounds"].items() for r in runs if r.get("dropped")}
    )
    if not dropped:
        return []
    return [
        "",
        f"**Messages were dropped** in some runs of {', '.join(dropped)}: their cost is "
        "understated there.",
    ]


def block_lines(block: Mapping[str, Any], cpu_device: bool) -> list[str]:
    """A measurement's part of a page (this one, and docs/bench/device.md's)."""
    return [
        method_line(block),
        "",
        *per_workload_table(block),
        *dropped_lines(block),
        "",
        *prediction_lines(block),
        "",
        *floor_lines(block),
        "",
        "Targets:",
        "",
        *verdict_lines(block, cpu_device),
        "",
        *instruction_lines(block),
    ]


def devices_lines(results: Mapping[str, Any] | None) -> list[str]:
    """Per workload, on every device measured: this page's results and the `workload_cost` device
    check's (bench/results/device.json), one column per device."""
    blocks: list[tuple[str, Mapping[str, Any]]] = []
    if results is not None:
        blocks.append((results["machine"]["vulkan"]["device"], results))
    device = load("device")
    part = ((device or {}).get("checks") or {}).get("workload_cost") or {}
    for name, block in sorted((part.get("devices") or {}).items()):
        blocks.append((f"{name} ({(block.get('commit') or '?')[:10]})", block))
    if not blocks:
        return []
    lines = [
        "## Per workload on every device measured",
        "",
        "What each configuration adds per workload to the frame (and, after the slash, to the "
        "vkQueueSubmit call): medians of the rounds, in µs, on this machine's lavapipe (above) "
        "and on each GPU the `workload_cost` device check ran on (docs/bench/device.md, the "
        "commit measured in brackets). A capture of a frame of N such workloads costs about N "
        "times as much.",
        "",
        "| configuration | " + " | ".join(name for name, _ in blocks) + " |",
        "|---" * (len(blocks) + 1) + "|",
    ]
    for c in CONFIGS[1:]:
        if not any(c.key in block["rounds"] for _, block in blocks):
            continue  # a configuration newer than every measurement
        cells = []
        for _, block in blocks:
            rounds = block["rounds"]
            if c.key not in rounds:
                cells.append("")
                continue
            n = block["workloads"]
            frame = median(added(rounds, c.key, "frame_us", n))
            submit = median(added(rounds, c.key, "submit_us", n))
            cells.append(f"{frame:+.2f} / {submit:+.2f}")
        lines.append(f"| {c.title} | " + " | ".join(cells) + " |")
    return lines


def render(results: Mapping[str, Any] | None) -> str:
    lines = [
        "# What vkscope costs per workload",
        "",
        banner("workload_cost.py"),
        "",
        "`bench/workload_cost.py` measures what vkscope costs per workload on a frame of game size "
        "(hundreds of workloads), beside the floor: the same queries written by the application "
        "itself, with no layer. The workload program times its own frames: the frame from its "
        "vkQueueSubmit until its fence has signalled, the vkQueueSubmit call alone, and the "
        "recording of its command buffer. On lavapipe (LP_NUM_THREADS=0) the GPU's work is the "
        "CPU's, so what shows per workload is mostly CPU time: the submit call is the measure "
        "there. The same measurement on a real GPU is the `workload_cost` device check "
        "(docs/bench/device.md).",
        "",
        "Targets: on lavapipe, the vkQueueSubmit call of the 200-workload frame gains at most "
        f"{SUBMIT_TARGETS_US['run']} µs per workload under `vkscope run` and "
        f"{SUBMIT_TARGETS_US['run_timing_queue']} µs under `vkscope run --timing queue`; on a GPU, "
        f"`vkscope run` adds at most {FRAME_TARGET_PERCENT:g}% to the frame, `--timing queue` at "
        f"most {FLOOR_TARGETS['run_timing_queue'][1]:g} times what the application's own "
        "timestamps add, and `--counters pipeline_statistics` at most "
        f"{FLOOR_TARGETS['run_statistics'][1]:g} times what its own queries add. Each is judged on "
        "the median of the rounds, with the 95% confidence interval of that median.",
        "",
        "## Results",
        "",
    ]
    if results is None:
        return "\n".join([*lines, *not_run(NAME, COMMAND), "", *devices_lines(None), ""])
    settings = results["settings"]
    reproduce = f"{COMMAND} --runs {settings['runs']} --workloads {settings['workloads']}"
    reproduce += f" --frames {settings['frames']} --warmup {settings['warmup']}"
    if settings.get("record_thread"):
        reproduce += " --record-thread"
    lines += [*provenance(results, NAME), "", f"Reproduce: `{reproduce}`", ""]
    lines += block_lines(results, results.get("cpu_device", True))
    lines += ["", *devices_lines(results)]
    return "\n".join([*lines, ""]).replace("\n\n\n", "\n\n")
