#!/usr/bin/env python3
"""Measure the peak memory of reports and analyses on a capture of 1,000,000 timed workloads.

Builds synthetic captures through the capture store (a layer stream with a timing annex for
every workload, as `--timing queue` sends them), then runs each report format and the
serialization comparison in a process of its own and records its peak resident set size (from
wait4) and wall time. Three captures:

  frames      1,000,000 workloads in frames of 4,096 (64 submits of 64), two queues, `queue`
  one-frame   the same workloads in a single frame (a headless application with no frame
              boundaries): the case that would need the most memory if a frame were held whole
  frames-none the first capture's application timed with `none` (overlapping times), for the
              comparison

Target: every report and analysis under 500 MB. Writes bench/results/report_memory.json and
docs/bench-report-memory.md.
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import platform
import sqlite3
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

from machine import cpu_model

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "src"))  # measure this working tree, not an installed copy

from vkscope.capture.client import Stream  # noqa: E402
from vkscope.capture.store import CaptureStore, ingest_stream  # noqa: E402

TARGET_MB = 500
PER_SUBMIT = 64
RECORDED = 10_000  # distinct recorded workloads, resubmitted (as applications do)
LABELS = [
    ["frame"], ["frame", "shadows"], ["frame", "shadows", "cascade 0"], ["frame", "gbuffer"],
    ["frame", "lighting", "tiles"], ["frame", "post", "bloom"], ["frame", "post", "tonemap"],
    ["upload"],
]  # fmt: skip


def _record(s: Stream, tag: int) -> None:
    kind = tag % 4
    if kind == 0:
        s.workload(tag, "renderpass", api="vkCmdBeginRenderPass2", width=1920, height=1080,
                   layers=1, subpasses=1, draws=tag % 97, attachments=[])  # fmt: skip
    elif kind == 1:
        s.workload(tag, "dispatch", api="vkCmdDispatch", groups=[tag % 64 + 1, 4, 1],
                   local_size=[64, 1, 1], invocations=(tag % 64 + 1) * 256)  # fmt: skip
    elif kind == 2:
        s.workload(tag, "buffer_transfer", api="vkCmdCopyBuffer", kind="copy", bytes=65536)
    else:
        s.workload(tag, "image_transfer", api="vkCmdBlitImage", kind="blit", pixels=2073600)


def stream_chunks(workloads: int, frame_size: int | None, mode: str) -> Iterator[bytes]:
    """The layer's stream in pieces of about 1,000 submits, never all of it at once."""
    s = Stream()
    s.hello(process="bench")
    s.device(1, "Synthetic GPU", queues=2, clock="clock_monotonic", max_deviation_ns=500)
    for stack, labels in enumerate(LABELS, 1):
        s.labels(stack, labels)
    for tag in range(1, RECORDED + 1):
        _record(s, tag)
    clock = [1_000_000, 1_000_000]  # per queue: when its next workload begins
    sent, submit_id, frame = 0, 0, 0
    while sent < workloads:
        n = min(PER_SUBMIT, workloads - sent)
        tags = [(sent + k) % RECORDED + 1 for k in range(n)]
        submit_id += 1
        queue = submit_id % 2
        s.submit([(t, t % len(LABELS) + 1) for t in tags], frame=frame, queue=queue,
                 cpu_ns=clock[queue], submit_id=submit_id)  # fmt: skip
        for t in tags:
            cost = 2_000 + (t % 50) * 400
            begin = clock[queue]
            # `none`: the next workload starts before this one ends (no barrier between).
            clock[queue] = begin + (cost * 3 // 4 if mode == "none" else cost + 300)
            s.timing(submit_id, t, begin, begin + cost, serialization=mode)
        s.submit_done(submit_id, clock[queue] + 5_000)
        sent += n
        if frame_size and sent % frame_size == 0:
            s.frame(frame, cpu_ns=clock[0], captured=True)
            frame += 1
        if submit_id % 1000 == 0:
            yield s.data()
            s.frames.clear()
    s.frame(frame, cpu_ns=clock[0], captured=True)
    s.goodbye()
    yield s.data()


def build(path: Path, workloads: int, frame_size: int | None, mode: str) -> dict[str, Any]:
    store = CaptureStore(path)
    start = time.perf_counter()
    ingest_stream(store, "bench", stream_chunks(workloads, frame_size, mode))
    store.finalize()
    seconds = time.perf_counter() - start
    return {"build_s": round(seconds, 1), "file_mb": round(path.stat().st_size / 1e6, 1)}


# Runs `-m MODULE ARGS...` and, at exit, writes the process's peak resident set size (VmHWM,
# which execve resets) to the file HWM_FILE names. wait4's ru_maxrss would not do: Linux carries
# the high-water mark across execve, so a child forked from this (large) process would report
# this process's size.
WRAP = """
import atexit, os, runpy, sys
def hwm():
    with open('/proc/self/status') as f, open(os.environ['HWM_FILE'], 'w') as out:
        out.write(next(line for line in f if line.startswith('VmHWM')).split()[1])
atexit.register(hwm)
sys.argv = sys.argv[2:]
runpy.run_module(sys.argv[0], run_name='__main__', alter_sys=True)
"""


def measure(module_args: list[str], tmp: Path) -> dict[str, Any]:
    """Peak RSS and wall time of `python -m MODULE ARGS...` run in a process of its own."""
    hwm = tmp / "hwm"
    env = dict(os.environ, PYTHONPATH=str(REPO / "src"), HWM_FILE=str(hwm))
    start = time.perf_counter()
    res = subprocess.run(
        [sys.executable, "-c", WRAP, "-m", *module_args],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    seconds = time.perf_counter() - start
    if res.returncode != 0:
        raise RuntimeError(f"{' '.join(module_args)} failed:\n{res.stderr}")
    return {"peak_rss_mb": round(int(hwm.read_text()) / 1024, 1), "seconds": round(seconds, 1)}


def runs(caps: dict[str, Path], listed: int) -> list[tuple[str, str, list[str]]]:
    mod = "vkscope"
    out: list[tuple[str, str, list[str]]] = [
        ("-", "python, vkscope imports, argparse (--help)", [mod, "--help"])
    ]
    for shape in ("frames", "one-frame"):
        cap = str(caps[shape])
        to_null = ["-o", os.devnull]
        out += [
            (shape, f"report (terminal, {listed} workloads listed per queue)",
             [mod, "report", cap, "--max-workloads", str(listed), *to_null]),
            (shape, "report --table frames (terminal)",
             [mod, "report", cap, "--table", "frames", *to_null]),
            (shape, "report --format csv", [mod, "report", cap, "--format", "csv", *to_null]),
            (shape, "report --format json", [mod, "report", cap, "--format", "json", *to_null]),
            (shape, "report --format markdown",
             [mod, "report", cap, "--format", "markdown", *to_null]),
            (shape, "query 'SELECT * FROM instances_view' --format csv",
             [mod, "query", cap, "SELECT * FROM instances_view", "--format", "csv", *to_null]),
            (shape, "vkscope perfetto (trace export)",
             ["vkscope.cli", "perfetto", cap, "-o", str(Path(cap).with_suffix(".pftrace"))]),
            (shape, "vkscope html (offline page)",
             ["vkscope.cli", "html", cap, "-o", str(Path(cap).with_suffix(".html"))]),
        ]  # fmt: skip
    out.append(
        ("frames", "overlap (none against queue) --format json, every workload",
         [mod, "overlap", str(caps["frames-none"]), str(caps["frames"]), "--format", "json",
          "--table", "frames", "--table", "workloads", "-o", os.devnull])
    )  # fmt: skip
    return out


def markdown(report: dict[str, Any]) -> str:
    m, s = report["machine"], report["settings"]
    lines = [
        "# Memory of reports and exports on large captures",
        "",
        "<!-- Written by bench/report_memory.py; rerun it rather than editing the numbers. -->",
        "",
        "`vkscope report`, `query` and `overlap` read a capture frame by frame and queue by",
        "queue, with the per-queue sums, spans and idle gaps computed by SQLite, so their memory",
        "should not grow with the capture, nor with the size of a frame. `bench/report_memory.py`",
        f"builds captures of {s['workloads']:,} workloads through the capture store, each with",
        "the timing annex the layer sends, then runs every report format in a process of its own",
        "and records its peak resident set size (VmHWM, read as the process exits) and wall time,",
        "writing to /dev/null.",
        "",
        f"- **frames**: frames of {s['frame_size']:,} workloads ({PER_SUBMIT} per submit, two",
        f"  queues, {RECORDED:,} recorded workloads resubmitted), `queue` serialization;",
        "- **one-frame**: the same workloads in one frame (a headless application without frame",
        "  boundaries);",
        "- **frames-none**: the *frames* application timed with `none`, for `overlap`.",
        "",
        f"The terminal report lists {s['listed']} workloads per queue: its tables are drawn by",
        "rich at a few thousand rows a second, so listing a million takes minutes (in tables of",
        "500 rows, in the same memory). It still reads every workload for its summary.",
        "",
        "## Target",
        "",
        f"Every report and analysis under {TARGET_MB} MB for 1,000,000 workloads.",
        "",
        "## Results",
        "",
        f"- Machine: {m['cpu_model']}, {m['cores']} cores, {m['system']}",
        f"- Python {m['python']}, SQLite {m['sqlite']}",
        f"- Date: {report['date']}",
        "",
        "| capture | file MB | built in s |",
        "| --- | ---: | ---: |",
    ]
    for name, c in report["captures"].items():
        lines.append(f"| {name} | {c['file_mb']} | {c['build_s']} |")
    lines += ["", "| capture | command | peak RSS MB | wall s |", "| --- | --- | ---: | ---: |"]
    for r in report["results"]:
        lines.append(f"| {r['capture']} | {r['command']} | {r['peak_rss_mb']} | {r['seconds']} |")
    worst = max(r["peak_rss_mb"] for r in report["results"])
    met = "met" if worst < TARGET_MB else "not met"
    lines += ["", f"Target ({TARGET_MB} MB): {met}; the largest peak was {worst} MB.", ""]
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--workloads", type=int, default=1_000_000)
    parser.add_argument("--frame-size", type=int, default=4096)
    parser.add_argument(
        "--listed", type=int, default=20, help="workloads per queue the terminal report lists"
    )
    parser.add_argument(
        "--results", type=Path, default=REPO / "bench" / "results" / "report_memory.json"
    )
    parser.add_argument("--docs", type=Path, default=REPO / "docs" / "bench-report-memory.md")
    args = parser.parse_args(argv)
    if args.frame_size % PER_SUBMIT:
        parser.error(f"--frame-size must be a multiple of {PER_SUBMIT}")
    captures: dict[str, Any] = {}
    results: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory(prefix="vkscope-bench-") as tmpdir:
        tmp = Path(tmpdir)
        caps = {"frames": tmp / "frames.vkscope", "one-frame": tmp / "one-frame.vkscope",
                "frames-none": tmp / "frames-none.vkscope"}  # fmt: skip
        shapes = {"frames": (args.frame_size, "queue"), "one-frame": (None, "queue"),
                  "frames-none": (args.frame_size, "none")}  # fmt: skip
        for name, (frame_size, mode) in shapes.items():
            captures[name] = build(caps[name], args.workloads, frame_size, mode)
            print(f"built {name}: {captures[name]}", file=sys.stderr)
        for capture, command, cmd in runs(caps, args.listed):
            row = {"capture": capture, "command": command, **measure(cmd, tmp)}
            results.append(row)
            print(f"{capture:10} {command:50} {row['peak_rss_mb']:>8} MB {row['seconds']:>6} s",
                  file=sys.stderr)  # fmt: skip
    uname = platform.uname()
    cpu = cpu_model()
    report = {
        "date": datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%d %H:%M UTC"),
        "machine": {
            "cpu_model": cpu,
            "cores": os.cpu_count(),
            "system": f"{uname.system} {uname.release} {uname.machine}",
            "python": platform.python_version(),
            "sqlite": sqlite3.sqlite_version,
        },
        "settings": {
            "workloads": args.workloads,
            "frame_size": args.frame_size,
            "listed": args.listed,
        },
        "target_mb": TARGET_MB,
        "captures": captures,
        "results": results,
    }
    args.results.parent.mkdir(parents=True, exist_ok=True)
    args.results.write_text(json.dumps(report, indent=2) + "\n")
    args.docs.write_text(markdown(report))
    print(args.docs.read_text())
    return 0


if __name__ == "__main__":
    sys.exit(main())
