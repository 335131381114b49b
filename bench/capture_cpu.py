#!/usr/bin/env python3
"""Measure the capture thread's CPU per frame while a short-frame application runs.

The capture server's thread decodes and stores the layer's messages beside the application; on
shared cores its CPU is what `vkscope run` adds over the same stream sent to a bare reader
(docs/bench/frame-cost.md). This measures that CPU alone: a CaptureServer runs in this process,
the application (the workload program's small_frame scenario and vkcube, as bench/frame_cost.py
runs them) streams to it, and once the application has exited and its connection is read to the
end, the capture thread's own CPU clock (pthread_getcpuclockid) is read and divided by the
frames. Finalizing the capture comes after and is not in it: it happens once the application has
gone. Each runs with the timeline and with timing `queue`, at the trickle pace the server uses
(capture/write/server.py `_PACE_S`) and at others, set on the module for the run, so the page
shows what the pace in use buys; configurations and paces are interleaved, several rounds; every
run is kept: bench/results/capture_cpu.json, and docs/bench/capture-cpu.md (`render`).

It runs against the installed package (the .venv's layer, workload program and capture server):

  .venv/bin/python bench/capture_cpu.py [--runs 5] [--frames 3200] [--vkcube-frames 1200]
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from bench.frame_cost import App, Tools, missing_tools, started_app
from bench.resultfile import (
    DOCS_DIR,
    banner,
    median,
    new,
    not_run,
    provenance,
    publish,
    results_path,
    spread,
)
from harness.env import layer_env

NAME = "capture_cpu"
DOC = DOCS_DIR / "capture-cpu.md"
COMMAND = ".venv/bin/python bench/capture_cpu.py"
PACES_S = (0.02, 0.1, 0.25)  # trickle paces compared; the server's own is added if not among them
CONFIGS = {"timeline": {}, "timing_queue": {"timing": "queue"}}
TITLES = {"timeline": "timeline", "timing_queue": "timing `queue`"}
_SETTLE_S = 30.0  # longest wait for the server to read a finished application's stream


def server_pace() -> float:
    """The trickle pace of the installed capture server."""
    from vkscope.capture.write import server

    return float(server._PACE_S)


def capture_thread_cpu(
    tools: Tools, app: App, settings: Mapping[str, str], frames: int, pace: float, tmp: Path
) -> float:
    """CPU seconds of the capture thread while `app` ran `frames` frames and its stream was read,
    with the server's trickle pace set to `pace`."""
    from vkscope.capture.write import server

    saved = server._PACE_S
    server._PACE_S = pace  # type: ignore[misc]  # read by the capture loop at every turn
    capture = tmp / "capture.vkscope"
    try:
        # Leaving the block stops the server, on a failure too; its finalizing comes after the
        # clock was read.
        with server.CaptureServer(capture, [f"unix:{tmp / 'capture.sock'}"]) as capture_server:
            thread = capture_server._thread
            assert thread is not None and thread.ident is not None
            clock = time.pthread_getcpuclockid(thread.ident)
            env = layer_env(
                tools.layer_dir,
                timeline="true",
                host=capture_server.addresses[0],
                **settings,
                **app.settings,
            )
            env.update(app.env)
            res = subprocess.run(
                app.command(frames), env=env, capture_output=True, text=True, timeout=600
            )
            if res.returncode != 0:
                raise RuntimeError(f"{app.key}: exit {res.returncode}\n{res.stderr[-2000:]}")
            # The layer closes its connection when the application exits; the server has read the
            # stream to its end when it has closed it too.
            deadline = time.monotonic() + _SETTLE_S
            while capture_server.counters().open_connections and time.monotonic() < deadline:
                time.sleep(0.05)
            if capture_server.counters().open_connections:
                raise RuntimeError(f"{app.key}: the capture server did not see the stream end")
            cpu = time.clock_gettime(clock)
    finally:
        server._PACE_S = saved  # type: ignore[misc]
        for f in tmp.glob("capture.vkscope*"):
            f.unlink()
    return cpu


Samples = dict[str, dict[str, list[float]]]  # configuration, pace (str), µs per frame


def measure(tools: Tools, app: App, frames: int, runs: int, paces: Sequence[float]) -> Samples:
    """µs of capture-thread CPU per frame, by configuration and pace; interleaved rounds."""
    samples: Samples = {c: {str(p): [] for p in paces} for c in CONFIGS}
    with tempfile.TemporaryDirectory(prefix="vkscope-capture-cpu-") as tmp:
        for r in range(runs):
            for key, settings in CONFIGS.items():
                for pace in paces:
                    cpu = capture_thread_cpu(tools, app, settings, frames, pace, Path(tmp))
                    samples[key][str(pace)].append(cpu / frames * 1e6)
            print(f"{app.key}: round {r + 1} of {runs} done", flush=True)
    return samples


# -- the page ------------------------------------------------------------------------------------


def pace_title(pace: str, in_use: float) -> str:
    ms = f"{float(pace) * 1e3:.0f} ms"
    return f"{ms} (in use)" if float(pace) == in_use else ms


def app_lines(key: str, block: Mapping[str, Any], in_use: float) -> list[str]:
    if "skipped" in block:
        return [f"Not measured: {block['skipped']}."]
    samples: Samples = block["samples_us"]
    paces = list(next(iter(samples.values())))
    rounds = len(next(iter(samples.values()))[paces[0]])
    lines = [
        f"{DESCRIPTIONS[key]} {block['frames']:,} frames a run; {rounds} interleaved rounds of "
        "every configuration and pace. "
        "Capture thread CPU per frame, µs: median (lowest and highest run).",
        "",
        "| configuration | " + " | ".join(pace_title(p, in_use) for p in paces) + " |",
        "|---" * (len(paces) + 1) + "|",
    ]
    for config, by_pace in samples.items():
        cells = [spread(by_pace[p], lambda v: f"{v:.1f}") for p in paces]
        lines.append(f"| {TITLES[config]} | " + " | ".join(cells) + " |")
    in_use_key = next((p for p in paces if float(p) == in_use), None)
    if in_use_key is not None:
        lines.append("")
        for config, by_pace in samples.items():
            mid = median(by_pace[in_use_key])
            others = [
                f"at {float(p) * 1e3:.0f} ms {median(by_pace[p]) / mid:.2f} times"
                for p in paces
                if p != in_use_key
            ]
            lines.append(
                f"- {TITLES[config]}: the capture thread's CPU per frame, against the pace in "
                "use (medians): " + "; ".join(others) + "."
            )
    return lines


DESCRIPTIONS = {
    "small_frame": "`vkscope-workload --scenario small_frame` (one submission a frame: a fill, "
    "four small dispatches and a copy).",
    "vkcube": "vkcube under Xvfb (one render pass with one draw a frame, presented).",
}


def render(results: Mapping[str, Any] | None) -> str:
    lines = [
        "# The capture thread's CPU while the application runs",
        "",
        banner("capture_cpu.py"),
        "",
        "`bench/capture_cpu.py` runs a capture server in its own process, streams a short-frame "
        "application's timeline to it through the layer, and reads the capture thread's own CPU "
        "clock once the application has exited and its stream has been read to the end: the "
        "work of decoding and storing the messages beside the application, per frame. "
        "Finalizing the capture, after the application has gone, is not in it. On shared cores "
        "this CPU is what competes with the application (docs/bench/frame-cost.md compares "
        "`vkscope run` with the same stream sent to a bare reader). While the layer sends a "
        "trickle, the server reads it at most once per pace (capture/write/server.py `_PACE_S`); "
        "each run sets the pace for its server, so the columns compare the pace in use with "
        "others. On lavapipe with LP_NUM_THREADS=0.",
        "",
        "## Results",
        "",
    ]
    if results is None:
        return "\n".join([*lines, *not_run(NAME, COMMAND), ""])
    lines += provenance(results, NAME)
    in_use = float(results["pace_in_use_s"])
    for key, block in results["apps"].items():
        lines += ["", f"### {key}", "", *app_lines(key, block, in_use)]
    return "\n".join([*lines, ""])


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--runs", type=int, default=5, help="interleaved rounds")
    parser.add_argument("--frames", type=int, default=3200, help="small_frame's frames a run")
    parser.add_argument("--vkcube-frames", type=int, default=1200, help="vkcube's frames a run")
    parser.add_argument("--apps", nargs="+", choices=("small_frame", "vkcube"),
                        default=["small_frame", "vkcube"])  # fmt: skip
    parser.add_argument("--results", type=Path, default=results_path(NAME))
    parser.add_argument("--docs", type=Path, default=DOC)
    args = parser.parse_args(argv)
    if min(args.runs, args.frames, args.vkcube_frames) < 1:
        parser.error("--runs, --frames and --vkcube-frames must be positive")
    os.environ["LP_NUM_THREADS"] = "0"
    in_use = server_pace()
    paces = sorted({*PACES_S, in_use})
    tools = Tools.installed()
    settings = {"runs": args.runs, "frames": args.frames, "vkcube_frames": args.vkcube_frames,
                "paces_s": paces, "LP_NUM_THREADS": "0"}  # fmt: skip
    results = new(NAME, settings, vulkan=True)
    results["pace_in_use_s"] = in_use
    results["apps"] = {}
    for key in args.apps:
        missing = missing_tools(key)
        if missing:
            results["apps"][key] = {"skipped": missing}
            continue
        with started_app(key, tools) as app:
            frames = args.vkcube_frames if key == "vkcube" else args.frames
            samples = measure(tools, app, frames, args.runs, paces)
        results["apps"][key] = {"frames": frames, "samples_us": samples}
    publish(results, render, args.results, args.docs)
    return 0


if __name__ == "__main__":
    sys.exit(main())
