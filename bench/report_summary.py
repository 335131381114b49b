#!/usr/bin/env python3
"""Measure the time and peak memory of `vkscope report`'s summary on long captures.

Builds captures of about a million timed workloads through the capture store, then runs the
report in a process of its own per run and records its wall time and peak resident set size
(bench/report_memory.py's `measure`):

  long-game   150,000 frames of 7 labelled workloads (1,050,000): a long session of small frames
  long-khr    the same with 4 counter values per workload (their distributions are kept too)
  big-frames  1,000 frames of 1,050 workloads: the same number in frames of game size
  long-game-rows  long-game without its stored instance columns (a capture of an older vkscope,
              or of one never finalized): the summary reads its instances one at a time

Each is finalized as the capture server finalizes it, its instance columns stored (as
`vkscope run` does for every capture), which the summary reads.

Commands: the default summary (terminal), its distributions table as JSON, and on long-game the
whole listing as CSV (`--all`), which streams. Target: the summary of each capture as
`vkscope run` writes it in under 10 s and 500 MB (the median of the runs). Writes
bench/results/report_summary.json (every run) and docs/bench/report-summary.md.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

from bench.report_memory import measure, without_stored_columns
from bench.resultfile import (
    DOCS_DIR,
    banner,
    median,
    met,
    new,
    not_run,
    provenance,
    publish,
    results_path,
    spread,
)
from bench.this_tree import SRC  # noqa: F401  (importing it puts src/ first)
from vkscope import protocol as m
from vkscope.capture import store_instance_columns
from vkscope.capture.write.client import Stream
from vkscope.capture.write.store import CaptureStore, ingest_stream

NAME = "report_summary"
DOC = DOCS_DIR / "report-summary.md"
COMMAND = ".venv/bin/python bench/report_summary.py"
TARGET_S = 10.0
TARGET_MB = 500
LABELS = [["frame", "shadows"], ["frame", "gbuffer"], ["frame", "lighting"],
          ["frame", "post", "bloom"], ["upload"]]  # fmt: skip
COUNTERS = ("vertex_shader_invocations", "fragment_shader_invocations",
            "compute_shader_invocations", "clipping_primitives")  # fmt: skip
SUMMARY = "report (summary)"
SHAPES = {"long-game": (150_000, 7, False), "long-khr": (150_000, 7, True),
          "big-frames": (1_000, 1_050, False)}  # fmt: skip
ROWS = "long-game-rows"  # long-game without its stored columns


def stream_chunks(frames: int, per_frame: int, counters: bool) -> Iterator[bytes]:
    """The layer's stream in pieces of about 1,000 frames, never all of it at once."""
    s = Stream()
    s.hello(process="bench")
    s.device(1, "Synthetic GPU", queues=2, clock="clock_monotonic", max_deviation_ns=500)
    if counters:
        s.add(m.COUNTERS, 1, {"family": 0, "source": "pipeline_statistics",
                              "counters": [{"name": n} for n in COUNTERS]})  # fmt: skip
    for stack, labels in enumerate(LABELS, 1):
        s.labels(stack, labels)
    kinds = ("renderpass", "dispatch", "buffer_transfer")
    for tag in range(1, per_frame + 1):
        s.workload(tag, kinds[tag % 3], api="vkCmd")
    clock = 1_000_000
    for frame in range(frames):
        for queue, tags in enumerate((range(1, per_frame), range(per_frame, per_frame + 1))):
            sid = s.submit([(t, t % len(LABELS) + 1) for t in tags], frame=frame, queue=queue,
                           cpu_ns=clock)  # fmt: skip
            for t in tags:
                cost = 2_000 + t * 300 + (frame * 7919 + t) % 700
                extra: dict[str, Any] = {}
                if counters:
                    extra["counters"] = {n: t * 100 + k + frame % 5 for k, n in enumerate(COUNTERS)}
                s.annex(sid, t, gpu_begin_ns=clock, gpu_end_ns=clock + cost,
                        serialization="queue", timing="ok", **extra)  # fmt: skip
                clock += cost + 300
            s.submit_done(sid, clock + 5_000)
        s.frame(frame, cpu_ns=clock, captured=True)
        if frame % 1000 == 999:
            yield s.data()
            s.frames.clear()
    s.goodbye()
    yield s.data()


def build(path: Path, frames: int, per_frame: int, counters: bool) -> dict[str, Any]:
    store = CaptureStore(path, finishing=store_instance_columns)
    start = time.perf_counter()
    ingest_stream(store, "bench", stream_chunks(frames, per_frame, counters))
    store.finalize()
    return {
        "frames": frames,
        "workloads": frames * per_frame,
        "counters": len(COUNTERS) if counters else 0,
        "build_s": round(time.perf_counter() - start, 1),
        "file_mb": round(path.stat().st_size / 1e6, 1),
    }


def commands(name: str, cap: Path) -> list[tuple[str, list[str]]]:
    """What is run on capture `name`: the summary everywhere, the listing on long-game."""
    out = ["-o", os.devnull]
    found = [
        (SUMMARY, ["vkscope", "report", str(cap), *out]),
        ("report --format json --table distributions",
         ["vkscope", "report", str(cap), "--format", "json", "--table", "distributions", *out]),
    ]  # fmt: skip
    if name == ROWS:
        return found
    if name == "long-game":
        listing = ["vkscope", "report", str(cap), "--all", "--format", "csv", *out]
        found.append(("report --all --format csv (every workload)", listing))
    return found


def render(report: dict[str, Any] | None) -> str:
    lines = [
        "# The report's summary on long captures",
        "",
        banner("report_summary.py"),
        "",
        "`vkscope report` prints a summary whose length does not grow with the capture: each",
        "queue's GPU time per frame, the costliest workloads, each workload identity's",
        "distribution over frames and the label subtrees, warm-up frames left out. It reads the",
        "capture in one pass in submission order (`capture/read/values.py`), counting identities",
        "as it goes, and keeps 8 bytes per value summed up for the exact percentiles.",
        "`bench/report_summary.py` builds the captures through the capture store, each workload",
        "with the timing annex the layer sends, then runs each command in a process of its own",
        "and records its wall time and peak resident set size (VmHWM), writing to /dev/null.",
        "",
        "- **long-game**: 150,000 frames of 7 labelled workloads (6 on queue 0, 1 on queue 1);",
        f"- **long-khr**: the same, each workload with {len(COUNTERS)} counter values;",
        "- **big-frames**: 1,000 frames of 1,050 workloads;",
        f"- **{ROWS}**: *long-game* without its stored instance columns (a capture of an older",
        "  vkscope, or of one never finalized).",
        "",
        "Each is finalized as the capture server finalizes it, with its instance columns stored",
        "(as `vkscope run` stores them for every capture), and the summary sums them up with",
        "numpy, a batch of columns at a time (`analysis/summary_columns.py`); without them it",
        "reads the instances one at a time (`capture/read/values.py`).",
        "",
        "## Target",
        "",
        f"The summary of each capture as `vkscope run` writes it in under {TARGET_S:g} s and",
        f"{TARGET_MB} MB (the median of its runs).",
        "",
        "## Results",
        "",
    ]
    if report is None:
        return "\n".join([*lines, *not_run(NAME, COMMAND), ""])
    lines += [
        *provenance(report, NAME),
        f"- {report['settings']['runs']} run(s) of each command",
        "",
        "| capture | frames | workloads | counters | file MB | built in s |",
        "| --- | ---: | ---: | ---: | ---: | ---: |",
    ]
    for name, c in report["captures"].items():
        lines.append(
            f"| {name} | {c['frames']:,} | {c['workloads']:,} | {c['counters']} | {c['file_mb']} "
            f"| {c['build_s']} |"
        )
    lines += [
        "",
        "| capture | command | wall s | peak RSS MB |",
        "| --- | --- | --- | --- |",
    ]
    for r in report["results"]:
        lines.append(
            f"| {r['capture']} | {r['command']} | {spread(r['seconds'], lambda v: f'{v:.1f}')} "
            f"| {spread(r['peak_rss_mb'], lambda v: f'{v:.0f}')} |"
        )
    summaries = [r for r in report["results"] if r["command"] == SUMMARY and r["capture"] != ROWS]
    rows = [r for r in report["results"] if r["command"] == SUMMARY and r["capture"] == ROWS]
    slowest = max(summaries, key=lambda r: median(r["seconds"]))
    largest = max(summaries, key=lambda r: median(r["peak_rss_mb"]))
    ok = median(slowest["seconds"]) < TARGET_S and median(largest["peak_rss_mb"]) < TARGET_MB
    lines += [
        "",
        f"Target ({TARGET_S:g} s, {TARGET_MB} MB): {met(ok)}; the slowest summary took "
        f"{spread(slowest['seconds'], lambda v: f'{v:.1f} s')} (*{slowest['capture']}*), the "
        f"largest peak was {spread(largest['peak_rss_mb'], lambda v: f'{v:.0f} MB')} "
        f"(*{largest['capture']}*).",
        "",
    ]
    for r in rows:
        lines += [
            f"Without stored columns (*{ROWS}*) the summary took "
            f"{spread(r['seconds'], lambda v: f'{v:.1f} s')} and "
            f"{spread(r['peak_rss_mb'], lambda v: f'{v:.0f} MB')}: the target "
            f"{'holds' if median(r['seconds']) < TARGET_S else 'does not hold'} there.",
            "",
        ]
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--runs", type=int, default=3, help="runs of each command")
    parser.add_argument(
        "--scale",
        type=float,
        default=1.0,
        help="frames of each capture times this (e.g. 0.05 while developing)",
    )
    parser.add_argument("--results", type=Path, default=results_path(NAME))
    parser.add_argument("--docs", type=Path, default=DOC)
    args = parser.parse_args(argv)
    if args.runs < 1:
        parser.error("--runs must be positive")
    report: dict[str, Any] = new(NAME, {"runs": args.runs, "scale": args.scale})
    report["target_s"], report["target_mb"] = TARGET_S, TARGET_MB
    captures: dict[str, Any] = {}
    results: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory(prefix="vkscope-bench-") as tmpdir:
        tmp = Path(tmpdir)
        caps = {name: tmp / f"{name}.vkscope" for name in [*SHAPES, ROWS]}
        for name, (frames, per_frame, counters) in SHAPES.items():
            frames = max(2, round(frames * args.scale))
            captures[name] = build(caps[name], frames, per_frame, counters)
            print(f"built {name}: {captures[name]}", file=sys.stderr)
        captures[ROWS] = {**captures["long-game"],
                          **without_stored_columns(caps["long-game"], caps[ROWS])}  # fmt: skip
        rows = [(name, t, cmd) for name in caps for t, cmd in commands(name, caps[name])]
        found: dict[tuple[str, str], list[dict[str, Any]]] = {}
        for _ in range(args.runs):  # interleaved: each round runs every command once
            for name, title, cmd in rows:
                found.setdefault((name, title), []).append(measure(cmd, tmp))
        for (name, title), done in found.items():
            results.append({
                "capture": name,
                "command": title,
                "seconds": [d["seconds"] for d in done],
                "peak_rss_mb": [d["peak_rss_mb"] for d in done],
            })  # fmt: skip
            print(f"{name:10} {title:45} {median(results[-1]['seconds']):>6.1f} s "
                  f"{median(results[-1]['peak_rss_mb']):>7.0f} MB", file=sys.stderr)  # fmt: skip
    report["captures"] = captures
    report["results"] = results
    publish(report, render, args.results, args.docs)
    return 0


if __name__ == "__main__":
    sys.exit(main())
