#!/usr/bin/env python3
"""Measure what vkscope adds to each frame of an application whose frames are short (about 1 ms).

Two applications: vkcube (one render pass with one draw a frame, presented to an Xvfb server this
script starts) and the workload program's `small_frame` scenario (one submission a frame with a
fill, four small dispatches and a copy; no window system, so it also runs on the device machines:
the `frame_cost` device check). Each runs in every configuration of CONFIGS: without the layer;
with the layer loaded and every feature off; the timeline, timing `none` and timing `queue` with
no capture server (what the layer does in the application); the timeline streaming to a bare
reader that discards what it reads (the layer's messages, without the capture server's work); and
`vkscope run` with the timeline and with `--timing queue` (the same plus the capture server
writing the capture beside the application). The workload program times its own frames after a
warm-up (`--time-frames`); vkcube's cost per frame is the difference between a long and a short
run divided by the frames in between, so process start-up, device creation and what
`vkscope run` does before and after the application cancel out (the application alone is timed,
bench/child_time.py). Both run in two placements (PLACEMENTS): on shared cores, and split, the
application pinned to one core and the host to the others. The configurations are interleaved,
several rounds; every run is kept: bench/results/frame_cost.json, and docs/bench/frame-cost.md
(`render`).

It runs against the installed package (the .venv's layer, workload program and vkscope command):

  .venv/bin/python bench/frame_cost.py [--runs 9] [--warmup-frames 200] [--timed-frames 3000]
      [--short-frames 200] [--long-frames 1200]
"""

from __future__ import annotations

import argparse
import os
import re
import resource
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager, nullcontext
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from bench.bare_reader import BareReader
from bench.resultfile import (
    DOCS_DIR,
    banner,
    median,
    median_interval,
    met,
    new,
    not_run,
    provenance,
    publish,
    results_path,
    spread,
)
from harness.env import base_env, layer_env

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


@dataclass(frozen=True)
class App:
    key: str
    command: Callable[[int], list[str]]  # the command line for N frames
    settings: Mapping[str, str] = field(default_factory=dict)  # layer settings it needs
    env: Mapping[str, str] = field(default_factory=dict)
    frame_end: str = ""  # how its frames end, for the page
    # The application times its own frames after the first N, given these arguments and N, and
    # prints `frame time: X ms per frame` (the workload program's --time-frames): one run per
    # configuration, none of its start-up in it.
    timing_args: Callable[[int], list[str]] | None = None


# Where the processes run. `shared` is how an application runs: the system schedules its threads
# and vkscope's host over every core. `split` pins the application (every thread of it, the
# layer's included) to one core and vkscope's host to the others: the host's CPU no longer
# competes with the application, and threads no longer move between cores, which on a small
# virtual machine is most of the run-to-run spread.
PLACEMENTS = ("shared", "split")


def cpu_split() -> tuple[int, set[int]] | None:
    """(the application's CPU, the host's CPUs) for `split`; None on a single CPU."""
    cpus = sorted(os.sched_getaffinity(0))
    if len(cpus) < 2:
        return None
    return cpus[-1], set(cpus[:-1])


@dataclass(frozen=True)
class Tools:
    """The installed package's parts."""

    layer_dir: Path
    workload: Path
    vkscope: tuple[str, ...] = (sys.executable, "-m", "vkscope")

    @classmethod
    def installed(cls) -> Tools:
        from vkscope import paths

        return cls(paths.layer_dir(), paths.workload_program())


def small_frame_app(tools: Tools, env: Mapping[str, str] | None = None) -> App:
    """The workload program's small_frame scenario, which times its own frames. Its frames end
    at VK_EXT_frame_boundary where the device has it, else at every submission (the layer's
    `frame_submits = 1`)."""
    probe = subprocess.run(
        [str(tools.workload), "--scenario", "small_frame", "--frames", "1"],
        env=dict(env or base_env()),
        capture_output=True,
        text=True,
        timeout=300,
    )
    if probe.returncode != 0:
        raise RuntimeError(f"small_frame failed without the layer:\n{probe.stderr[-2000:]}")
    boundary = "frame boundary yes" in probe.stderr
    return App(
        "small_frame",
        lambda n: [str(tools.workload), "--scenario", "small_frame", "--quiet", "--frames", str(n)],
        {} if boundary else {"frame_submits": "1"},
        frame_end="VK_EXT_frame_boundary" if boundary else "`frame_submits = 1`",
        timing_args=lambda warmup: ["--time-frames", str(warmup)],
    )


def vkcube_app(display: str) -> App:
    return App(
        "vkcube",
        lambda n: ["vkcube", "--c", str(n)],
        env={"DISPLAY": display},
        frame_end="vkQueuePresentKHR",
    )


def missing_tools(key: str) -> str | None:
    """Why application `key` cannot run on this machine; None when it can."""
    if key == "vkcube" and not (shutil.which("vkcube") and shutil.which("Xvfb")):
        return "needs vkcube and Xvfb"
    return None


@contextmanager
def started_app(key: str, tools: Tools) -> Iterator[App]:
    """Application `key` ready to run: vkcube with an Xvfb server of its own while the block
    lasts, or the workload program's small_frame."""
    if key == "vkcube":
        with xvfb() as display:
            yield vkcube_app(display)
    else:
        yield small_frame_app(tools)


@contextmanager
def xvfb() -> Iterator[str]:
    """An Xvfb server of its own for the whole measurement: one start, not one per run."""
    read, write_end = os.pipe()
    proc = subprocess.Popen(
        ["Xvfb", "-displayfd", str(write_end), "-screen", "0", "1024x768x24", "-nolisten", "tcp"],
        pass_fds=(write_end,),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    os.close(write_end)
    try:
        with os.fdopen(read) as f:
            number = f.readline().strip()
        if not number:
            raise RuntimeError("Xvfb did not start")
        yield f":{number}"
    finally:
        proc.terminate()
        proc.wait(timeout=10)


def command_line(
    tools: Tools, app: App, config: Config, inner: list[str], tmp: Path, host: str = ""
) -> tuple[list[str], dict[str, str]]:
    """The command and environment that run `inner` (the application, wrapped) in `config`;
    `host`: the address of the bare reader a `sink` configuration streams to."""
    if config.run:
        env = base_env()
        cmd = [*tools.vkscope, "run", "--no-report", "--no-trace", "--no-html"]
        cmd += ["-o", str(tmp / "capture.vkscope")]
        if "timing" in config.settings:
            cmd += ["--timing", config.settings["timing"]]
        cmd += [f"-s{k}={v}" for k, v in app.settings.items()]
        cmd += ["--", *inner]
    else:
        settings = {**config.settings, **app.settings}
        if config.sink:
            settings["host"] = host
        env = layer_env(tools.layer_dir, **settings) if config.layer else base_env()
        cmd = inner
    env.update(app.env)
    return cmd, env


def run_app(
    tools: Tools,
    app: App,
    config: Config,
    inner: list[str],
    tmp: Path,
    what: str,
    host_cpus: set[int] | None = None,
) -> tuple[str, float]:
    """Runs `inner` in `config`; what it printed, and the CPU seconds of every process it
    started (vkscope's included). `host_cpus`: where `vkscope run` runs."""
    pin = None
    if host_cpus is not None and config.run:
        cpus = host_cpus

        def pin() -> None:
            os.sched_setaffinity(0, cpus)

    with BareReader(tmp, host_cpus) if config.sink else nullcontext("") as host:
        cmd, env = command_line(tools, app, config, inner, tmp, host)
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        res = subprocess.run(
            cmd, env=env, capture_output=True, text=True, timeout=600, preexec_fn=pin
        )
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime
    for f in tmp.glob("capture.vkscope*"):
        f.unlink()
    if res.returncode != 0:
        raise RuntimeError(
            f"{config.title}, {app.key}, {what}: exit {res.returncode}\n"
            f"{(res.stdout + res.stderr)[-2000:]}"
        )
    return res.stdout + res.stderr, cpu


@dataclass(frozen=True)
class TimedRun:
    wall: float  # seconds, the application alone
    cpu: float  # CPU seconds of the application's process, every thread
    out: str  # what it printed
    host_cpu: float  # CPU seconds of the rest: vkscope's host
    run_queue: float | None  # seconds its threads waited for a CPU, when asked for


def timed_run(
    tools: Tools,
    app: App,
    config: Config,
    frames: int,
    tmp: Path,
    placement: str,
    extra: Sequence[str] = (),
    run_queue: bool = False,
) -> TimedRun:
    """The application alone, for `frames` frames (`extra` added to its arguments), timed by
    child_time.py; with `run_queue`, its threads' run-queue wait too."""
    seconds = tmp / "seconds"
    seconds.unlink(missing_ok=True)
    split = cpu_split() if placement == "split" else None
    pin = ["--cpus", str(split[0])] if split else []
    wrapper = [*pin, "--run-queue"] if run_queue else pin
    inner = [sys.executable, str(CHILD_TIME), str(seconds), *wrapper, "--", *app.command(frames)]
    inner += extra
    out, everything = run_app(
        tools, app, config, inner, tmp, f"{frames} frames", split[1] if split else None
    )
    if not seconds.exists():
        raise RuntimeError(f"{config.title}, {app.key}: {CHILD_TIME.name} wrote no time")
    wall, cpu, timer, *waited = map(float, seconds.read_text().split())
    return TimedRun(wall, cpu, out, everything - cpu - timer, waited[0] if waited else None)


def short_and_long(
    tools: Tools,
    app: App,
    config: Config,
    short: int,
    long: int,
    tmp: Path,
    placement: str,
    run_queue: bool = False,
) -> tuple[TimedRun, TimedRun]:
    """timed_run of `short` frames, then of `long`: what a cost per frame is the difference of."""
    first = timed_run(tools, app, config, short, tmp, placement, run_queue=run_queue)
    return first, timed_run(tools, app, config, long, tmp, placement, run_queue=run_queue)


_FRAME_TIME = re.compile(
    r"^frame time: ([0-9.]+) ms per frame, CPU ([0-9.]+) ms per frame", re.MULTILINE
)


def frame_ms(
    tools: Tools, app: App, config: Config, short: int, long: int, tmp: Path, placement: str
) -> tuple[float, float]:
    """Wall-clock and CPU ms per frame of one configuration: as the application timed its frames
    after the first `short` (one run of `long`), or the difference between a run of `long` and
    one of `short`. CPU is the application's process, every thread of it (the layer's too)."""
    if app.timing_args is not None:
        out = timed_run(tools, app, config, long, tmp, placement, app.timing_args(short)).out
        found = _FRAME_TIME.search(out)
        if found is None:
            raise RuntimeError(f"{config.title}, {app.key}: no frame time in\n{out[-2000:]}")
        return float(found.group(1)), float(found.group(2))
    first, second = short_and_long(tools, app, config, short, long, tmp, placement)
    frames = long - short
    return (second.wall - first.wall) / frames * 1e3, (second.cpu - first.cpu) / frames * 1e3


def host_cpu_per_frame(
    tools: Tools, app: App, config: Config, short: int, long: int, tmp: Path
) -> float:
    """CPU ms per frame of vkscope's own process under `vkscope run` (its capture thread, the
    rest of it, and finalizing the capture after the application exits), on shared cores: the
    difference between runs of `long` and `short` frames."""
    first, second = short_and_long(tools, app, config, short, long, tmp, "shared")
    return (second.host_cpu - first.host_cpu) / (long - short) * 1e3


def run_queue_per_frame(
    tools: Tools, app: App, config: Config, short: int, long: int, tmp: Path
) -> float:
    """µs per frame that the application's threads (the layer's included) were ready to run but
    waited for a CPU, on shared cores: the difference between runs of `long` and `short` frames.
    What vkscope's host and the layer's own threads take of the CPU shows here as the
    application's threads waiting, with far less spread than the frame times, which the
    machine's load moves by more than the wait itself."""
    first, second = short_and_long(tools, app, config, short, long, tmp, "shared", run_queue=True)
    assert first.run_queue is not None and second.run_queue is not None
    return (second.run_queue - first.run_queue) / (long - short) * 1e6


def run_queue_rounds(
    tools: Tools, app: App, short: int, long: int, tmp: Path
) -> dict[str, list[float]]:
    """run_queue_per_frame of every configuration, RUN_QUEUE_RUNS interleaved rounds."""
    waits: dict[str, list[float]] = {c.key: [] for c in RUN_QUEUE_CONFIGS}
    for _ in range(RUN_QUEUE_RUNS):
        for c in RUN_QUEUE_CONFIGS:
            waits[c.key].append(run_queue_per_frame(tools, app, c, short, long, tmp))
    return waits


def syscall_counts(summary: str) -> dict[str, int]:
    """Calls per system call from `strace -c`'s table."""
    counts: dict[str, int] = {}
    for line in summary.splitlines():
        fields = line.split()
        # % time, seconds, usecs/call, calls, [errors,] syscall
        if (
            len(fields) in (5, 6)
            and fields[-1].isidentifier()
            and fields[-1] != "total"
            and fields[3].isdigit()
        ):
            counts[fields[-1]] = int(fields[3])
    return counts


def syscalls_per_frame(
    tools: Tools, app: App, config: Config, short: int, long: int, tmp: Path
) -> dict[str, float]:
    """System calls per frame of the application's process (every thread: the layer's included),
    from `strace -f -c` over two frame counts. Unlike time, counts do not depend on the machine's
    load: they show the wake-ups (futex) and socket calls each configuration adds to a frame."""
    totals = []
    for frames in (short, long):
        out = tmp / "strace.txt"
        inner = ["strace", "-f", "-c", "-o", str(out), *app.command(frames)]
        run_app(tools, app, config, inner, tmp, f"strace, {frames} frames")  # counts only
        totals.append(syscall_counts(out.read_text()))
    names = sorted(set(totals[0]) | set(totals[1]))
    per = {n: (totals[1].get(n, 0) - totals[0].get(n, 0)) / (long - short) for n in names}
    return {n: round(v, 3) for n, v in per.items() if v >= SYSCALL_FLOOR}


Samples = dict[str, dict[str, dict[str, list[float]]]]  # application, placement, configuration


def measure(
    tools: Tools,
    apps: Sequence[App],
    runs: int,
    short: int,
    long: int,
    configs: Sequence[Config] = CONFIGS,
    progress: Callable[[str], None] | None = None,
    placements: Sequence[str] = ("shared",),
) -> tuple[Samples, Samples]:
    """Wall-clock and CPU ms per frame of every run, by application, placement and
    configuration; interleaved, so a change in the machine's load hits every configuration
    alike."""

    def empty() -> Samples:
        return {a.key: {p: {c.key: [] for c in configs} for p in placements} for a in apps}

    wall, cpu = empty(), empty()
    with tempfile.TemporaryDirectory(prefix="vkscope-frame-cost-") as tmp:
        for r in range(runs):
            for app in apps:
                for placement in placements:
                    for c in configs:
                        ms, cpu_ms = frame_ms(tools, app, c, short, long, Path(tmp), placement)
                        wall[app.key][placement][c.key].append(ms)
                        cpu[app.key][placement][c.key].append(cpu_ms)
            if progress:
                progress(f"round {r + 1} of {runs} done")
    return wall, cpu


# -- the page ------------------------------------------------------------------------------------


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


def printer(what: str) -> Callable[[str], None]:
    """Progress of `what`, on the terminal."""
    return lambda text: print(f"{what}: {text}", flush=True)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--runs", type=int, default=9, help="interleaved rounds")
    parser.add_argument("--short-frames", type=int, default=200, help="vkcube's short run")
    parser.add_argument("--long-frames", type=int, default=1200, help="vkcube's long run")
    parser.add_argument("--warmup-frames", type=int, default=200,
                        help="small_frame's frames before those it times")  # fmt: skip
    parser.add_argument("--timed-frames", type=int, default=3000,
                        help="small_frame's frames it times")  # fmt: skip
    parser.add_argument("--apps", nargs="+", choices=("vkcube", "small_frame"),
                        default=["vkcube", "small_frame"])  # fmt: skip
    parser.add_argument("--verdict-runs", type=int, default=0,
                        help="more rounds of the targets' configurations alone")  # fmt: skip
    parser.add_argument("--results", type=Path, default=results_path(NAME))
    parser.add_argument("--docs", type=Path, default=DOC)
    args = parser.parse_args(argv)
    if min(args.runs, args.short_frames, args.timed_frames) < 1 or args.warmup_frames < 0:
        parser.error("--runs, --short-frames and --timed-frames must be positive")
    if args.verdict_runs < 0:
        parser.error("--verdict-runs must not be negative")
    if args.long_frames <= args.short_frames:
        parser.error("--long-frames must be more than --short-frames")
    tools = Tools.installed()
    settings = {
        "runs": args.runs,
        "verdict_runs": args.verdict_runs,
        "short_frames": args.short_frames,
        "long_frames": args.long_frames,
        "warmup_frames": args.warmup_frames,
        "timed_frames": args.timed_frames,
        "LP_NUM_THREADS": "0",
    }
    results = new(NAME, settings, vulkan=True)
    results["apps"] = {}
    placements = PLACEMENTS if cpu_split() else ("shared",)
    for key in args.apps:
        missing = missing_tools(key)
        if missing:
            results["apps"][key] = {"skipped": missing}
            continue
        with started_app(key, tools) as app:
            times_itself = app.timing_args is not None
            short, long = args.short_frames, args.long_frames
            if times_itself:
                short, long = args.warmup_frames, args.timed_frames + args.warmup_frames
            block: dict[str, Any] = {"short": short, "long": long, "frame_end": app.frame_end,
                                     "times_itself": times_itself}  # fmt: skip
            wall, cpu = measure(
                tools, [app], args.runs, short, long, placements=placements,
                progress=printer(key),
            )  # fmt: skip
            block["placements"] = {
                p: {"samples_ms": v, "cpu_ms": cpu[key][p]} for p, v in wall[key].items()
            }
            if args.verdict_runs:
                more, _ = measure(
                    tools, [app], args.verdict_runs, short, long, VERDICT_CONFIGS,
                    placements=placements, progress=printer(f"{key}, verdict"),
                )  # fmt: skip
                for p, v in more[key].items():
                    block["placements"][p]["verdict_ms"] = v
            with tempfile.TemporaryDirectory(prefix="vkscope-frame-cost-") as tmp:
                block["host_cpu_ms"] = {
                    c.key: [
                        host_cpu_per_frame(tools, app, c, short, long, Path(tmp))
                        for _ in range(HOST_CPU_RUNS)
                    ]
                    for c in CONFIGS
                    if c.run
                }
                block["run_queue_us"] = run_queue_rounds(tools, app, short, long, Path(tmp))
            if shutil.which("strace"):
                with tempfile.TemporaryDirectory(prefix="vkscope-frame-cost-") as tmp:
                    block["syscalls_per_frame"] = {
                        c.key: syscalls_per_frame(
                            tools, app, c, args.short_frames, args.long_frames, Path(tmp)
                        )
                        for c in CONFIGS
                    }
        results["apps"][key] = block
    publish(results, render, args.results, args.docs)
    return 0


if __name__ == "__main__":
    sys.exit(main())
