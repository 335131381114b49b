"""bench/frame_cost.py's page (docs/bench/frame-cost.md), and the tables and verdicts other pages
borrow from it: what each configuration adds to the frame, the host's own CPU, the run-queue wait
and the system calls per frame."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from bench.frame_configs import (
    COMMAND,
    NAME,
    QUEUE_TARGET_PERCENT,
    SYSCALL_FLOOR,
    TIMELINE_TARGET_PERCENT,
    TITLES,
)
from bench.resultfile import banner, median, median_interval, met, not_run, provenance, spread


def percent(v: float) -> str:
    return f"{v:+.1f}%"


def added_percent(samples: Mapping[str, Sequence[float]], key: str) -> list[float]:
    """Each run against the run without the layer of the same round."""
    return [(a - b) / b * 100 for a, b in zip(samples[key], samples["none"], strict=True)]


def app_table(
    samples: Mapping[str, Sequence[float]], cpu: Mapping[str, Sequence[float]] | None = None
) -> list[str]:
    """Wall-clock ms per frame by configuration, each run against the run without the layer of
    its round; with `cpu`, the application's CPU per frame beside it (the host's is not in it)."""
    head = "| configuration | ms per frame | added | added per frame |"
    rule = "| --- | --- | --- | --- |"
    if cpu is not None:
        head += " application CPU per frame | added CPU per frame |"
        rule += " --- | --- |"
    lines = [head, rule]
    base = samples["none"]
    for key, runs in samples.items():
        ms = spread(runs, lambda v: f"{v:.3f}")
        if key == "none":
            cells = [ms, "", ""]
        else:
            us = [(a - b) * 1e3 for a, b in zip(runs, base, strict=True)]
            added = spread(added_percent(samples, key), percent)
            cells = [ms, added, spread(us, lambda v: f"{v:+.0f} µs")]
        if cpu is not None:
            cpu_runs = cpu[key]
            cells.append(spread(cpu_runs, lambda v: f"{v:.3f} ms"))
            if key == "none":
                cells.append("")
            else:
                cpu_us = [(a - b) * 1e3 for a, b in zip(cpu_runs, cpu["none"], strict=True)]
                cells.append(spread(cpu_us, lambda v: f"{v:+.0f} µs"))
        lines.append(f"| {TITLES.get(key, key)} | " + " | ".join(cells) + " |")
    return lines


def verdict_lines(
    samples: Mapping[str, Sequence[float]], more: Mapping[str, Sequence[float]] | None = None
) -> list[str]:
    """Each target judged on the median of the rounds' added percent, with the 95% confidence
    interval of that median, which says whether the rounds settle the verdict: a median under
    the target by less than the rounds can resolve is not a target shown met. `more`: the
    rounds of the target's configurations alone (VERDICT_CONFIGS), judged with the others, and
    said first (verdict_rounds_lines)."""
    lines = verdict_rounds_lines(samples, more)
    for key, target in (("run_queue", QUEUE_TARGET_PERCENT), ("run", TIMELINE_TARGET_PERCENT)):
        if key not in samples:
            continue
        rounds = added_percent(samples, key)
        if more and key in more:
            rounds += added_percent(more, key)
        added = median(rounds)
        interval = median_interval(rounds)
        if interval is None:
            settled = f"{len(rounds)} rounds are too few for a 95% interval of the median"
        else:
            lo, hi = interval
            where = (
                "all of it within the target" if hi <= target
                else "all of it over the target" if lo > target
                else "the target inside it: these rounds do not settle the verdict"
            )  # fmt: skip
            settled = f"95% interval of the median {percent(lo)} to {percent(hi)}, {where}"
        lines.append(
            f"- {TITLES[key]}: at most {target:+.0f}% per frame over no layer, judged on the "
            f"median of {len(rounds)} rounds: {met(added <= target)} ({percent(added)}; "
            f"{settled})."
        )
    return lines


PLACEMENT_TEXT = {
    "shared": "Shared cores: the application and vkscope's host scheduled over every core, as "
    "an application runs.",
    "split": "Split cores: the application (every thread of it, the layer's included) pinned to "
    "one core, vkscope's host to the others, so the host's CPU does not compete with the "
    "application and threads do not move between cores.",
}


def method_text(block: Mapping[str, Any]) -> str:
    """How a block's frames were timed, for its section."""
    if block.get("times_itself"):
        return (
            f"The application times its own frames {block['short']:,} to {block['long']:,} "
            "(`--time-frames`): start-up, device creation and pipeline compilation are not in "
            "it; one run per configuration and round."
        )
    return (
        f"{block['long']:,} frames against {block['short']:,}: a frame's cost is the difference "
        "of the two runs over the frames in between."
    )


def percent_range(runs: Sequence[float]) -> str:
    mid = median(runs)
    return f"{percent((min(runs) - mid) / mid * 100)} to {percent((max(runs) - mid) / mid * 100)}"


def placement_samples(block: Mapping[str, Any]) -> dict[str, Mapping[str, Any]]:
    """By placement, its `samples_ms` (and `cpu_ms` where measured); results made before
    placements have `samples_ms` alone, on shared cores."""
    if "placements" in block:
        return dict(block["placements"])
    return {"shared": {"samples_ms": block["samples_ms"]}}


def app_section(block: Mapping[str, Any]) -> list[str]:
    if "skipped" in block:
        return [f"Not measured: {block['skipped']}."]
    by_placement = placement_samples(block)
    rounds = len(next(iter(by_placement.values()))["samples_ms"]["none"])
    lines = [
        f"{block['description']} Frames end at {block['frame_end']}. {method_text(block)} "
        f"{rounds} interleaved rounds; *added* compares each run with the run without the layer "
        "of the same round and placement: their median, and their range.",
    ]
    spreads = [f"{p} {percent_range(b['samples_ms']['none'])}" for p, b in by_placement.items()]
    lines += ["", "Runs without the layer, lowest and highest against their median: "
              + "; ".join(spreads) + "."]  # fmt: skip
    for placement, b in by_placement.items():
        lines += [
            "",
            f"**{PLACEMENT_TEXT[placement]}**",
            "",
            *app_table(b["samples_ms"], b.get("cpu_ms")),
            "",
            *verdict_lines(b["samples_ms"], b.get("verdict_ms")),
        ]
    return [
        *lines,
        *host_cpu_lines(block.get("host_cpu_ms"), block["short"], block["long"]),
        *run_queue_lines(block.get("run_queue_us"), block["short"], block["long"]),
        *syscall_lines(block.get("syscalls_per_frame")),
    ]


def verdict_rounds_lines(
    samples: Mapping[str, Sequence[float]], more: Mapping[str, Sequence[float]] | None
) -> list[str]:
    """What the verdicts rest on, where rounds of their configurations alone were added."""
    if not more or not more.get("none"):
        return []
    added = {key: spread(added_percent(more, key), percent) for key in more if key != "none"}
    parts = "; ".join(f"{TITLES[key]} {text}" for key, text in added.items())
    return [
        f"Each verdict rests on the {len(samples['none'])} rounds above and "
        f"{len(more['none'])} more rounds of no layer and the two `vkscope run` configurations "
        f"alone, interleaved in the same way, added in those: {parts}.",
        "",
    ]


def host_cpu_lines(
    per_config: Mapping[str, Sequence[float]] | None, short: int, long: int
) -> list[str]:
    if not per_config:
        return []
    parts = [
        f"{TITLES[key]} {spread([v * 1e3 for v in runs], lambda v: f'{v:.0f} µs')}"
        for key, runs in per_config.items()
    ]
    return [
        "",
        "CPU of vkscope's own process per frame under `vkscope run` (shared cores; the capture "
        "thread, the rest of the process and finalizing the capture after the application "
        f"exits; the difference between runs of {long:,} and {short:,} frames): "
        + "; ".join(parts)
        + ".",
    ]


def run_queue_lines(
    per_config: Mapping[str, Sequence[float]] | None, short: int, long: int
) -> list[str]:
    """The application's run-queue wait per frame by configuration, and what each adds to the
    wait without the layer (medians)."""
    if not per_config:
        return []
    base = median(per_config["none"])
    lines = [
        "",
        "Time the application's threads (the layer's included) were ready to run but waited for "
        "a CPU, per frame, on shared cores: the kernel's scheduler statistics of every thread "
        f"(bench/child_time.py `--run-queue`), the difference between runs of {long:,} and "
        f"{short:,} frames, {len(per_config['none'])} interleaved rounds. Every thread that "
        "wants the CPU while the application's do, the host's and the layer's own, shows here as "
        "the application's threads waiting; the frame times above spread more than this wait.",
        "",
        "| configuration | waited per frame | more than without the layer (medians) |",
        "| --- | --- | --- |",
    ]
    for key, runs in per_config.items():
        more = "" if key == "none" else f"{median(runs) - base:+.1f} µs"
        lines.append(f"| {TITLES[key]} | {spread(runs, lambda v: f'{v:.1f} µs')} | {more} |")
    return lines


def syscall_lines(per_config: Mapping[str, Mapping[str, float]] | None) -> list[str]:
    if not per_config:
        return []
    names = sorted({n for calls in per_config.values() for n in calls})
    lines = [
        "",
        "System calls per frame of the application's process, every thread (`strace -f -c`, the "
        "difference between the two frame counts; calls under "
        f"{SYSCALL_FLOOR} a frame left out). They do not depend on the machine's load: `futex` "
        "counts the wake-ups between threads (the driver's, the layer's readback and sender "
        "threads), the socket calls what reaches the capture server.",
        "",
        "| configuration | " + " | ".join(f"`{n}`" for n in names) + " |",
        "|---" * (len(names) + 1) + "|",
    ]
    for key, calls in per_config.items():
        cells = [f"{calls[n]:.2f}" if n in calls else "" for n in names]
        lines.append(f"| {TITLES.get(key, key)} | " + " | ".join(cells) + " |")
    return lines


DESCRIPTIONS = {
    "vkcube": "vkcube under Xvfb: one render pass with one draw a frame, presented.",
    "small_frame": "`vkscope-workload --scenario small_frame`: one submission a frame (a fill, "
    "four small dispatches and a copy), waited for with a fence.",
}


def reproduce_command(settings: Mapping[str, Any]) -> str:
    """The command line that measured with `settings` (those of this script's options that
    were recorded; results made before --verdict-runs have none of those rounds)."""
    options = ("runs", "verdict_runs", "short_frames", "long_frames", "warmup_frames",
               "timed_frames")  # fmt: skip
    parts = [COMMAND]
    for key in options:
        if key in settings:
            parts.append(f"--{key.replace('_', '-')} {settings[key]}")
    return " ".join(parts)


def render(results: Mapping[str, Any] | None) -> str:
    lines = [
        "# What vkscope adds to a short frame",
        "",
        banner("frame_cost.py"),
        "",
        "`bench/frame_cost.py` measures the cost per frame of an application whose frames take "
        "about a millisecond, in each configuration: no layer; the layer loaded with every "
        "feature off; the timeline, timing `none` and timing `queue` without a capture server "
        "(what the layer does inside the application); the timeline streaming to a bare reader, "
        "a socket read and discarded by the benchmark (what sending its messages costs the "
        "application, without the capture server's work beside it); and `vkscope run`, with the "
        "timeline and with `--timing queue` (the same, plus the capture server receiving and "
        "storing everything while the application runs). The workload program times its own frames "
        "after a warm-up; vkcube's cost per frame is the difference between a long and a short "
        "run over the frames in between. Either way the application alone is timed, not what "
        "`vkscope run` does before it starts or after it exits. Each runs on shared cores (as an "
        "application runs) and split (the application on one core, vkscope's host on the "
        "others): on a small virtual machine, threads moving between cores spread the runs on "
        "shared cores more than the targets, which the split runs show without (each section "
        "gives both spreads). On "
        "lavapipe (LP_NUM_THREADS=0) the GPU's work is the CPU's, so this is the whole "
        "application. The same for the workload program on a real GPU is the `frame_cost` device "
        "check (docs/bench/device.md).",
        "",
        f"Targets: `vkscope run --timing queue` at most +{QUEUE_TARGET_PERCENT:.0f}% per frame "
        f"over no layer, `vkscope run` with the timeline at most +{TIMELINE_TARGET_PERCENT:.0f}%. "
        "Each is judged on the median of the rounds, and given with the 95% confidence interval "
        "of that median (from the order of the rounds, assuming nothing about their "
        "distribution): where the target lies inside the interval, the rounds cannot tell the "
        "cost from the target, whichever side of it the median falls.",
        "",
        "## Results",
        "",
    ]
    if results is None:
        return "\n".join([*lines, *not_run(NAME, COMMAND), ""])
    lines += provenance(results, NAME)
    lines += ["", f"Reproduce: `{reproduce_command(results.get('settings', {}))}`"]
    for key, block in results["apps"].items():
        lines += ["", f"### {key}", "", *app_section({**block, "description": DESCRIPTIONS[key]})]
    return "\n".join([*lines, ""])
