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
from bench.frame_configs import (
    CHILD_TIME,
    CONFIGS,
    DOC,
    HOST_CPU_RUNS,
    NAME,
    PLACEMENTS,
    RUN_QUEUE_CONFIGS,
    RUN_QUEUE_RUNS,
    SYSCALL_FLOOR,
    VERDICT_CONFIGS,
    Config,
)
from bench.frame_cost_page import render
from bench.resultfile import (
    new,
    publish,
    results_path,
)
from harness.env import base_env, layer_env


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
