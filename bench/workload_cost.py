#!/usr/bin/env python3
"""Measure what vkscope costs per workload on a frame of game size, beside the floor: what the
same queries cost when the application writes them itself.

The workload program's `game_scale` scenario renders frames of --workloads N workloads (200 by
default: render passes of three draws, compute dispatches and buffer copies, each waiting for the
one before through a barrier), one vkQueueSubmit a frame, and times every frame itself: the frame
from its vkQueueSubmit until its fence has signalled, the vkQueueSubmit call alone, and the
recording of its command buffer. It runs in every configuration of CONFIGS: no layer; the floor,
where the program itself writes a BOTTOM_OF_PIPE timestamp after each workload or a pipeline
statistics query around it (no layer); the timeline without a capture server; and `vkscope run`
with the timeline, with `--timing none|queue|full`, with `--counters pipeline_statistics` and with
a CPU-sampled counter (`sampler:cpu_time`). Configurations are interleaved over several rounds,
so a change in the machine's load hits every one alike; each round's runs are compared with the
run without the layer of the same round, and the difference divided by N: what each costs per
workload.

Wall time on a small shared machine spreads more than some of these costs, so the benchmark also
counts instructions (valgrind's callgrind) in vkQueueSubmit and in the recording commands for the
configurations that matter most: machine load moves those counts by nothing.

Every run is kept: bench/results/workload_cost.json, and docs/bench/workload-cost.md (`render`).
The same measurement on a real GPU is the `workload_cost` device check (docs/bench/device.md).

  .venv/bin/python bench/workload_cost.py [--runs 7] [--workloads 200] [--frames 150]
      [--warmup 30] [--record-thread] [--no-instructions]

To compare a change of the layer with the tree before it, in the same interleaved rounds (a
change's effect on a shared machine is smaller than the drift between two separate runs), copy
the other tree's installed package somewhere (`cp -r OTHER/.venv/lib/python3.11/site-packages/
vkscope DIR/`) and run `--baseline DIR [--configs none,run,run_timing_queue]`: every configuration
runs with both layers, the same workload program, and the comparison is printed (and written to
`--compare-out`), not published. `--instructions-only` counts instructions instead of timing
frames (with or without `--baseline`), which a loaded machine does not move: the quick check of
a change to the layer's hot paths.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from bench.frame_cost import Tools, printer
from bench.resultfile import (
    new,
    publish,
    results_path,
    spread,
)
from bench.workload_configs import (
    BY_KEY,
    CONFIGS,
    DOC,
    INSTRUCTION_CONFIGS,
    NAME,
    PROFILED,
    Config,
    Rounds,
)
from bench.workload_cost_page import added, instruction_comparison_lines, render, signed, titled
from harness.driver import probe
from harness.env import base_env, layer_env

# Per frame, as the program prints it (workloads/src/scenarios/game_scale.cpp).
_SUMMARY = re.compile(
    r"^workload cost: workloads (\d+) submits (\d+) floor (\S+) record_thread (\S+) frames (\d+) "
    r"frame_us ([0-9.]+) submit_us ([0-9.]+) record_us ([0-9.]+)(?: gpu_us ([0-9.]+))?$",
    re.MULTILINE,
)
_DROPPED = re.compile(r"([0-9,]+) dropped")
# A function's line in callgrind_annotate's output: its cost, share, file:function [object].
_ANNOTATED = re.compile(r"^\s*([0-9,]+) \(\s*[0-9.]+%\)\s+[^\s:]*:(\S+)", re.MULTILINE)


@dataclass(frozen=True)
class Program:
    """The workload program's game_scale scenario as one measurement runs it."""

    tools: Tools
    workloads: int
    record_thread: bool = False
    frame_submits: dict[str, str] = field(default_factory=dict)  # where frames end otherwise
    extra: tuple[str, ...] = ()  # more arguments (--compute-iterations)
    cpus: tuple[int, ...] = ()  # the CPUs every run of it is pinned to (pinned_cpus()); () for any

    def args(self, config: Config, frames: int, warmup: int | None) -> list[str]:
        out = [str(self.tools.workload), "--scenario", "game_scale", "--quiet"]
        out += ["--workloads", str(self.workloads), "--frames", str(frames)]
        out += ["--floor", config.floor, *self.extra]
        if warmup is not None:
            out += ["--time-frames", str(warmup)]
        if self.record_thread:
            out.append("--record-thread")
        return out


def frame_end(tools: Tools) -> tuple[str, dict[str, str]]:
    """How the scenario's frames end on this device, and the layer settings that need: at
    VK_EXT_frame_boundary where the device has it, else at every submission."""
    first = subprocess.run(
        [str(tools.workload), "--scenario", "game_scale", "--frames", "1"],
        env=base_env(),
        capture_output=True,
        text=True,
        timeout=600,
    )
    if first.returncode != 0:
        raise RuntimeError(f"game_scale failed without the layer:\n{first.stderr[-2000:]}")
    if "frame boundary yes" in first.stderr:
        return "VK_EXT_frame_boundary", {}
    return "`frame_submits = 1`", {"frame_submits": "1"}


def pinned_cpus(count: int = 4) -> tuple[int, ...]:
    """The last `count` CPUs this process may run on, where it may run on twice as many or more
    and `taskset` is there; () otherwise. The device checks pin the program (and with it the
    layer's threads) to them in every run: runs compared across processes then ran on the same
    cores. On the H200 machine's 16 virtual CPUs, left to the scheduler, the same configuration's
    median frame scattered more from run to run than pinned, in a probe of a few runs each; the
    capture server stays on the other CPUs."""
    allowed = sorted(os.sched_getaffinity(0))
    if len(allowed) < 2 * count or shutil.which("taskset") is None:
        return ()
    return tuple(allowed[-count:])


def command(
    program: Program, config: Config, inner: list[str], tmp: Path
) -> tuple[list[str], dict[str, str]]:
    """The command line and environment of `inner` (the program, maybe wrapped) in `config`."""
    if program.cpus:
        inner = ["taskset", "-c", ",".join(map(str, program.cpus)), *inner]
    if config.run is not None:
        cmd = [*program.tools.vkscope, "run", "--no-report", "--no-trace", "--no-html"]
        cmd += ["-o", str(tmp / "capture.vkscope"), *config.run]
        cmd += [f"-s{k}={v}" for k, v in program.frame_submits.items()]
        return [*cmd, "--", *inner], base_env()
    if not config.layer:
        return inner, base_env()
    return inner, layer_env(program.tools.layer_dir, **config.settings, **program.frame_submits)


def run_once(
    program: Program, config: Config, frames: int, warmup: int, tmp: Path
) -> dict[str, Any]:
    """One run of `config`: the program's medians over its timed frames (µs), and what
    `vkscope run` said it dropped."""
    timed = max(1, round((frames - warmup) * config.frames_share))
    cmd, run_env = command(program, config, program.args(config, warmup + timed, warmup), tmp)
    res = subprocess.run(cmd, env=run_env, capture_output=True, text=True, timeout=900)
    for f in tmp.glob("capture.vkscope*"):
        f.unlink()
    out = res.stdout + res.stderr
    found = _SUMMARY.search(out)
    if res.returncode != 0 or found is None:
        raise RuntimeError(f"{config.title}: exit {res.returncode}\n{out[-2000:]}")
    run: dict[str, Any] = {
        "frame_us": float(found.group(6)),
        "submit_us": float(found.group(7)),
        "record_us": float(found.group(8)),
    }
    if found.group(9):
        run["gpu_us"] = float(found.group(9))
    if config.run is not None:
        dropped = _DROPPED.search(res.stderr)
        run["dropped"] = int(dropped.group(1).replace(",", "")) if dropped else None
    return run


def measure(
    program: Program,
    configs: Sequence[Config],
    rounds: int,
    frames: int,
    warmup: int,
    progress: Callable[[str], None] | None = None,
) -> Rounds:
    """Every configuration once per round, interleaved."""
    out: Rounds = {c.key: [] for c in configs}
    with tempfile.TemporaryDirectory(prefix="vkscope-workload-cost-") as tmp:
        for r in range(rounds):
            for c in configs:
                out[c.key].append(run_once(program, c, frames, warmup, Path(tmp)))
            if progress:
                progress(f"round {r + 1} of {rounds} done")
    return out


def baseline_program(program: Program, package_parent: Path) -> Program:
    """`program` with the layer and `vkscope run` of the vkscope package in `package_parent` (a
    copy of another tree's installed package), the same workload program."""
    package = package_parent / "vkscope"
    if not (package / "_layer").is_dir():
        raise SystemExit(f"{package_parent}: no installed vkscope package (with _layer/) in it")
    run = ("env", f"PYTHONPATH={package_parent}", sys.executable, "-m", "vkscope")
    tools = dataclasses.replace(program.tools, layer_dir=package / "_layer", vkscope=run)
    return dataclasses.replace(program, tools=tools)


def compare(
    programs: Mapping[str, Program],
    configs: Sequence[Config],
    rounds: int,
    frames: int,
    warmup: int,
    progress: Callable[[str], None] | None = None,
) -> dict[str, Rounds]:
    """Every configuration with every program's layer once per round, interleaved (the order of
    the layers alternates from round to round)."""
    out: dict[str, Rounds] = {side: {c.key: [] for c in configs} for side in programs}
    sides = list(programs)
    with tempfile.TemporaryDirectory(prefix="vkscope-workload-cost-") as tmp:
        for r in range(rounds):
            for c in configs:
                order = sides if r % 2 == 0 else sides[::-1]
                for side in order if c.layer else sides[:1]:
                    out[side][c.key].append(run_once(programs[side], c, frames, warmup, Path(tmp)))
            if progress:
                progress(f"round {r + 1} of {rounds} done")
    for side in sides[1:]:
        for c in configs:
            if not c.layer:  # one run without the layer serves both
                out[side][c.key] = out[sides[0]][c.key]
    return out


def comparison_lines(measured: Mapping[str, Rounds], workloads: int) -> list[str]:
    """Per workload, each layer beside the others: what each configuration adds to the
    vkQueueSubmit call and to the frame (medians of the rounds, and their range)."""
    sides = list(measured)
    lines = [
        "| configuration | layer | vkQueueSubmit added per workload | frame added per workload |",
        "| --- | --- | --- | --- |",
    ]
    first = measured[sides[0]]
    for key, title in titled(first):
        if key == "none":
            continue
        for side in sides:
            rounds = measured[side]
            submit = spread(added(rounds, key, "submit_us", workloads), signed)
            frame = spread(added(rounds, key, "frame_us", workloads), signed)
            lines.append(f"| {title} | {side} | {submit} | {frame} |")
    return lines


# -- instruction counts --------------------------------------------------------------------------


def callgrind_counts(out_file: Path) -> dict[str, int]:
    """Instructions inside the submit and the recording entry points (inclusive), from a
    callgrind profile collected only inside them."""
    annotated = subprocess.run(
        ["callgrind_annotate", "--inclusive=yes", "--threshold=100", str(out_file)],
        capture_output=True,
        text=True,
        check=True,
        timeout=600,
    ).stdout
    counts = dict.fromkeys(PROFILED, 0)
    for found in _ANNOTATED.finditer(annotated):
        for part, name in PROFILED.items():
            if found.group(2) == name:
                counts[part] += int(found.group(1).replace(",", ""))
    return counts


def instructions(
    program: Program,
    configs: Sequence[Config],
    short: int,
    long: int,
    progress: Callable[[str], None] | None = None,
) -> dict[str, dict[str, float]]:
    """Instructions per frame in vkQueueSubmit and in recording, by configuration: runs of
    `long` and `short` frames under callgrind, their difference over the frames in between, so
    that the first frame's one-time work cancels out."""
    out: dict[str, dict[str, float]] = {}
    with tempfile.TemporaryDirectory(prefix="vkscope-workload-cost-") as tmp:
        for c in configs:
            totals = []
            for frames in (short, long):
                profile = Path(tmp) / f"callgrind-{c.key}-{frames}.out"
                valgrind = ["valgrind", "--tool=callgrind", f"--callgrind-out-file={profile}"]
                valgrind += [f"--toggle-collect={name}" for name in PROFILED.values()]
                inner = [*valgrind, *program.args(c, frames, None)]
                cmd, env = command(program, c, inner, Path(tmp))
                res = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=3600)
                for f in Path(tmp).glob("capture.vkscope*"):
                    f.unlink()
                if res.returncode != 0:
                    raise RuntimeError(
                        f"{c.title} under callgrind: exit {res.returncode}\n"
                        f"{(res.stdout + res.stderr)[-2000:]}"
                    )
                totals.append(callgrind_counts(profile))
            out[c.key] = {k: (totals[1][k] - totals[0][k]) / (long - short) for k in totals[0]}
            if progress:
                progress(f"instructions of {c.key} counted")
    return out


# -- the page ------------------------------------------------------------------------------------


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--runs", type=int, default=7, help="interleaved rounds")
    parser.add_argument("--workloads", type=int, default=200, help="workloads a frame")
    parser.add_argument("--frames", type=int, default=150, help="frames timed per run")
    parser.add_argument("--warmup", type=int, default=30, help="frames before those timed")
    parser.add_argument(
        "--record-thread",
        action="store_true",
        help="the program records each frame on a thread of its own",
    )
    parser.add_argument(
        "--no-instructions",
        action="store_true",
        help="leave out the instruction counts (callgrind, several minutes)",
    )
    parser.add_argument(
        "--baseline",
        type=Path,
        help="a directory holding another tree's installed vkscope package: compare the two",
    )
    parser.add_argument(
        "--configs",
        help="with --baseline or --instructions-only: these configurations (comma-separated)",
    )
    parser.add_argument(
        "--instructions-only",
        action="store_true",
        help="count instructions per workload (callgrind) and print them; nothing is published",
    )
    parser.add_argument("--compare-out", type=Path, help="with --baseline: the rounds as JSON")
    parser.add_argument("--results", type=Path, default=results_path(NAME))
    parser.add_argument("--docs", type=Path, default=DOC)
    args = parser.parse_args(argv)
    if min(args.runs, args.frames) < 1 or args.warmup < 0 or args.workloads < 4:
        parser.error("--runs and --frames must be positive, --workloads at least 4")
    tools = Tools.installed()
    end, frame_submits = frame_end(tools)
    program = Program(tools, args.workloads, args.record_thread, frame_submits)
    default_keys = INSTRUCTION_CONFIGS if args.instructions_only else [c.key for c in CONFIGS]
    keys = args.configs.split(",") if args.configs else list(default_keys)
    unknown = [k for k in keys if k not in BY_KEY]
    if unknown:
        parser.error(f"unknown configurations: {', '.join(unknown)}")
    chosen = [BY_KEY[k] for k in dict.fromkeys(["none", *keys])]
    if args.instructions_only:
        if not shutil.which("valgrind"):
            parser.error("--instructions-only needs valgrind")
        programs = {"this tree": program}
        if args.baseline is not None:
            programs["baseline"] = baseline_program(program, args.baseline)
        short, long = 2, 2 + args.frames
        counted: dict[str, dict[str, dict[str, float]]] = {}
        for side, p in programs.items():
            # One count of the configurations without the layer serves every side.
            ran = chosen if not counted else [c for c in chosen if c.layer]
            counted[side] = instructions(p, ran, short, long, printer(f"instructions ({side})"))
            first = next(iter(counted.values()))
            counted[side] |= {c.key: first[c.key] for c in chosen if c.key not in counted[side]}
        print("\n".join(instruction_comparison_lines(counted, args.workloads)))
        return 0
    if args.baseline is not None:
        programs = {"this tree": program, "baseline": baseline_program(program, args.baseline)}
        measured = compare(
            programs,
            chosen,
            args.runs,
            args.frames + args.warmup,
            args.warmup,
            progress=printer("workload cost"),
        )
        if args.compare_out is not None:
            args.compare_out.write_text(json.dumps(measured, indent=1))
        print("\n".join(comparison_lines(measured, args.workloads)))
        return 0
    settings = {
        "runs": args.runs,
        "workloads": args.workloads,
        "frames": args.frames,
        "warmup": args.warmup,
        "record_thread": args.record_thread,
        "LP_NUM_THREADS": "0",
    }
    results = new(NAME, settings, vulkan=True)
    results |= {
        "workloads": args.workloads,
        "frames": args.frames,
        "warmup": args.warmup,
        "record_thread": args.record_thread,
        "frame_end": end,
        "cpu_device": probe().cpu_device,
    }
    results["rounds"] = measure(
        program,
        CONFIGS,
        args.runs,
        args.frames + args.warmup,
        args.warmup,
        progress=printer("workload cost"),
    )
    if not args.no_instructions and shutil.which("valgrind"):
        chosen = [BY_KEY[k] for k in INSTRUCTION_CONFIGS]
        results["instructions"] = {
            "short": 2,
            "long": 5,
            "per_frame": instructions(program, chosen, 2, 5, printer("instructions")),
        }
    publish(results, render, args.results, args.docs)
    return 0


if __name__ == "__main__":
    sys.exit(main())
