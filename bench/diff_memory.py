#!/usr/bin/env python3
"""Measure the peak memory of `vkscope diff` on two captures of 1,000,000 workload instances each.

For each shape below, two captures are written by the real capture store from a synthetic layer
stream (64 workloads per submit, 64 label scopes, three workload types), then given GPU times
with SQL (the same columns the host fills from the layer's timing annexes; 1 workload in 100
is 20% slower in the new capture). Each diff runs in a fresh Python process, which reports its
own peak resident set size (VmHWM), exit code and wall time:

  frames   1,000 frames of 1,000 workloads: 1,000 identities of 1,000 samples each
  wide     10 frames of 100,000 workloads: 100,000 identities of 10 samples
  flat     1 frame of 1,000,000 workloads: 1,000,000 identities of one sample (the worst case
           for the verdict table)

in both output formats (to /dev/null), with --min-frames 1 so that every identity is judged.
Writes bench/results/diff_memory.json (every run) and docs/bench/diff-memory.md (`render`).
Target: under 500 MB, on the median of the runs.
"""

from __future__ import annotations

import argparse
import json
import os
import sqlite3
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any, NamedTuple

from bench.resultfile import (
    DOCS_DIR,
    banner,
    median,
    met,
    new,
    not_run,
    provenance,
    results_path,
    spread,
    write,
    write_doc,
)
from bench.this_tree import SRC
from vkscope.capture.write.client import Stream
from vkscope.capture.write.store import CaptureStore, ingest_stream

NAME = "diff_memory"
DOC = DOCS_DIR / "diff-memory.md"
COMMAND = ".venv/bin/python bench/diff_memory.py"
TARGET_MB = 500
FORMATS = ("table", "json")
INSTANCES = 1_000_000
PER_SUBMIT = 64
SCOPES = 64
TYPES = ("renderpass", "dispatch", "buffer_transfer")
CHUNK = 1 << 20


class Shape(NamedTuple):
    name: str
    frames: int
    per_frame: int


SHAPES = (
    Shape("frames", 1_000, 1_000),
    Shape("wide", 10, 100_000),
    Shape("flat", 1, 1_000_000),
)

# What runs in the measured process: the diff, then its own peak RSS.
CHILD = """
import json, os, sys, time
sys.path.insert(0, sys.argv[1])
PEAK
from rich.console import Console
from vkscope.diff import run_diff
start = time.perf_counter()
with open(os.devnull, "w") as sink:
    code = run_diff(sys.argv[2], sys.argv[3], min_frames=1, fmt=sys.argv[4],
                    console=Console(file=sink, width=120))
seconds = time.perf_counter() - start
print(json.dumps({"exit_code": code, "seconds": seconds, "max_rss_kib": peak()}))
"""

BASELINE = """
import json, sys
sys.path.insert(0, sys.argv[1])
PEAK
from rich.console import Console
import vkscope.diff
print(json.dumps({"max_rss_kib": peak()}))
"""

# The process's own high-water mark (VmHWM). Not ru_maxrss: Linux carries that over from the
# parent across fork and exec, so a child of a big parent would report the parent's size.
PEAK = """
def peak():
    for line in open("/proc/self/status"):
        if line.startswith("VmHWM:"):
            return int(line.split()[1])
"""
CHILD = CHILD.replace("PEAK", PEAK)
BASELINE = BASELINE.replace("PEAK", PEAK)


def layer_stream(shape: Shape) -> bytes:
    """The frames of a layer recording `per_frame` workloads once and resubmitting them."""
    s = Stream()
    s.hello(process="bench", pid=1)
    s.device(1, "Bench GPU")
    for scope in range(1, SCOPES + 1):
        s.labels(scope, ["frame", f"pass {scope}"])
    for tag in range(1, shape.per_frame + 1):
        s.workload(tag, TYPES[(tag // PER_SUBMIT) % len(TYPES)])
    for frame in range(shape.frames):
        for first in range(1, shape.per_frame + 1, PER_SUBMIT):
            last = min(first + PER_SUBMIT, shape.per_frame + 1)
            s.submit([(tag, tag % SCOPES + 1) for tag in range(first, last)], frame=frame)
        s.frame(frame)
    s.goodbye()
    return s.data()


def write_capture(path: Path, data: bytes, slower: bool) -> None:
    store = CaptureStore(path)
    ingest_stream(store, "bench", (data[i : i + CHUNK] for i in range(0, len(data), CHUNK)))
    store.finalize()
    # 5 us give or take 100 ns; in the new capture, 1 workload in 100 takes 1 us more.
    extra = "+ CASE WHEN tag_id % 100 = 0 THEN 1000 ELSE 0 END" if slower else ""
    with sqlite3.connect(path) as db:
        db.execute(
            "UPDATE workload_instances SET gpu_begin_ns = id * 10000, "
            f"gpu_end_ns = id * 10000 + 5000 + abs(random() % 100) {extra}"
        )


def child(script: str, *args: str) -> dict[str, Any]:
    done = subprocess.run(
        [sys.executable, "-c", script, str(SRC), *args],
        capture_output=True,
        text=True,
        check=True,
    )
    result: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


def measure(shape: Shape, tmp: Path, runs: int) -> dict[str, Any]:
    data = layer_stream(shape)
    base, newer = tmp / f"{shape.name}-base.vkscope", tmp / f"{shape.name}-new.vkscope"
    started = time.perf_counter()
    write_capture(base, data, slower=False)
    write_capture(newer, data, slower=True)
    build_s = time.perf_counter() - started
    del data
    done = {fmt: [child(CHILD, str(base), str(newer), fmt) for _ in range(runs)] for fmt in FORMATS}
    path = os.pathsep.join(filter(None, [str(SRC), os.environ.get("PYTHONPATH")]))
    verdict = subprocess.run(
        [sys.executable, "-m", "vkscope.diff", str(base), str(newer), "--format", "json",
         "--min-frames", "1"],
        capture_output=True, text=True, env={**os.environ, "PYTHONPATH": path},
    )  # fmt: skip
    doc = json.loads(verdict.stdout)
    row = {
        "shape": shape.name,
        "frames": shape.frames,
        "workloads_per_frame": shape.per_frame,
        "instances_per_capture": shape.frames * shape.per_frame,
        "capture_bytes": base.stat().st_size,
        "build_s": round(build_s, 1),
        "counts": doc["counts"],
        "exit_code": verdict.returncode,
    }
    for fmt, rs in done.items():
        row[fmt] = {
            "peak_rss_mb": [round(r["max_rss_kib"] / 1024, 1) for r in rs],
            "seconds": [round(r["seconds"], 2) for r in rs],
            "exit_code": [r["exit_code"] for r in rs],
        }
    base.unlink()
    newer.unlink()
    return row


def render(report: dict[str, Any] | None) -> str:
    lines = [
        "# Memory of `vkscope diff` on large captures",
        "",
        banner("diff_memory.py"),
        "",
        "`bench/diff_memory.py` writes two captures of 1,000,000 workload instances each with",
        "the capture store (from a synthetic layer stream: 64 workloads per submit, 64 label",
        "scopes, three types), gives every instance a GPU time with SQL (5 µs ± 100 ns; in",
        "the new capture 1 workload in 100 is 1 µs slower), and runs `vkscope diff` on them",
        "in a fresh Python process per run, which reports its own peak resident set size",
        "(`VmHWM`). Output goes to /dev/null; `--min-frames 1` so every identity is judged.",
        "SQLite numbers and sorts the instances (spilling to temporary files), Python keeps one",
        "identity's per-frame times at a time, and verdicts go to a temporary table that the",
        'output reads back sorted (docs/diff.md, "Large captures").',
        "",
        f"Target: under {TARGET_MB} MB (the median of the runs of each shape and format).",
        "",
        "## Results",
        "",
    ]
    if report is None:
        return "\n".join([*lines, *not_run(NAME, COMMAND), ""])
    results = report["results"]
    lines += [
        *provenance(report, NAME),
        f"- SQLite {report['machine']['sqlite']}; {report['settings']['runs']} run(s) of each diff",
        "",
        "The interpreter with rich, msgspec and vkscope.diff imported, before any work, takes "
        f"{report['baseline_rss_mb']} MB.",
        "",
        "| shape | frames x workloads | identities | capture MB | format | peak RSS MB, median "
        "| runs, MB | seconds, median |",
        "| --- | --- | ---: | ---: | --- | ---: | ---: | ---: |",
    ]
    for r in results:
        identities = r["counts"]["matched"] + r["counts"]["removed"]
        for fmt in FORMATS:
            peaks = r[fmt]["peak_rss_mb"]
            lines.append(
                f"| {r['shape']} | {r['frames']:,} x {r['workloads_per_frame']:,} | "
                f"{identities:,} | {r['capture_bytes'] / 1e6:.0f} | {fmt} | {median(peaks):.1f} "
                f"| {min(peaks):.1f} to {max(peaks):.1f} | {median(r[fmt]['seconds']):.1f} |"
            )
    lines += ["", "Verdicts (the JSON run's counts) and exit codes (1: a regression found):", ""]
    for r in results:
        c = r["counts"]
        codes = sorted({r["exit_code"], *(x for f in FORMATS for x in r[f]["exit_code"])})
        lines.append(
            f"- {r['shape']}: {c['matched']:,} matched, {c['regression']:,} regressions, "
            f"{c['within_noise']:,} within noise; exit code {', '.join(map(str, codes))}"
        )
    peaks = {(r["shape"], f): r[f]["peak_rss_mb"] for r in results for f in FORMATS}
    (shape, fmt), worst = max(peaks.items(), key=lambda kv: median(kv[1]))
    by_size = sorted(results, key=lambda r: r["counts"]["matched"] + r["counts"]["removed"])
    lines += ["", f"Target ({TARGET_MB} MB): {met(median(worst) < TARGET_MB)}; the largest peak "
              f"was {spread(worst, lambda v: f'{v:.1f} MB')} ({shape}, {fmt})."]  # fmt: skip
    if len(by_size) > 1:
        small, large = by_size[0], by_size[-1]

        def ids(r: dict[str, Any]) -> str:
            return f"{r['counts']['matched'] + r['counts']['removed']:,}"

        lines.append(
            f"From {ids(small)} identities ({small['shape']}) to {ids(large)} ({large['shape']}) "
            f"the median peak of the table output went from "
            f"{median(small['table']['peak_rss_mb']):.1f} to "
            f"{median(large['table']['peak_rss_mb']):.1f} MB."
        )
    return "\n".join([*lines, ""])


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--shapes", nargs="*", default=[s.name for s in SHAPES],
                        choices=[s.name for s in SHAPES])  # fmt: skip
    parser.add_argument("--no-write", action="store_true", help="print, write no result files")
    parser.add_argument("--runs", type=int, default=3, help="runs of each diff")
    parser.add_argument("--results", type=Path, default=results_path(NAME))
    parser.add_argument("--docs", type=Path, default=DOC)
    args = parser.parse_args(argv)
    if args.runs < 1:
        parser.error("--runs must be positive")
    report: dict[str, Any] = new(NAME, {"shapes": args.shapes, "runs": args.runs})
    report["machine"]["sqlite"] = sqlite3.sqlite_version
    report["target_mb"] = TARGET_MB
    results = []
    with tempfile.TemporaryDirectory(prefix="vkscope-diff-bench-") as tmp:
        for shape in SHAPES:
            if shape.name in args.shapes:
                row = measure(shape, Path(tmp), args.runs)
                print(json.dumps(row), flush=True)
                results.append(row)
    report["baseline_rss_mb"] = round(child(BASELINE)["max_rss_kib"] / 1024, 1)
    report["results"] = results
    text = render(report)
    if not args.no_write:
        write(report, args.results)
        write_doc(text, args.docs)
    print(text)
    worst = max(median(r[f]["peak_rss_mb"]) for r in results for f in FORMATS)
    return 0 if worst < TARGET_MB else 1


if __name__ == "__main__":
    sys.exit(main())
