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
  one-frame-rows  the one-frame capture without its stored instance columns (a capture of an
              older vkscope, or of one never finalized): the report reads its instances one
              at a time

Each is finalized as the capture server finalizes it, its instance columns stored (as
`vkscope run` does for every capture), so that the reports read them.

Target: every report and analysis under 500 MB, on the median of the runs. Writes
bench/results/report_memory.json (every run) and docs/bench/report-memory.md (`render`).
"""

from __future__ import annotations

import argparse
import os
import shutil
import sqlite3
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

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
from vkscope.capture import store_instance_columns
from vkscope.capture.read.stored_columns import META_KEY
from vkscope.capture.write.client import Stream
from vkscope.capture.write.store import CaptureStore, ingest_stream

NAME = "report_memory"
DOC = DOCS_DIR / "report-memory.md"
COMMAND = ".venv/bin/python bench/report_memory.py"
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


def without_stored_columns(path: Path, to: Path) -> dict[str, Any]:
    """A copy of the capture at `path` without its stored instance columns."""
    shutil.copy(path, to)
    with sqlite3.connect(to) as db:
        db.execute("DELETE FROM instance_columns")
        db.execute("DELETE FROM meta WHERE key = ?", (META_KEY,))
    with sqlite3.connect(to) as db:
        db.execute("VACUUM")
    return {"build_s": 0.0, "file_mb": round(to.stat().st_size / 1e6, 1)}


def build(path: Path, workloads: int, frame_size: int | None, mode: str) -> dict[str, Any]:
    store = CaptureStore(path, finishing=store_instance_columns)
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
    env = dict(
        os.environ,
        PYTHONPATH=os.pathsep.join(filter(None, [str(SRC), os.environ.get("PYTHONPATH")])),
        HWM_FILE=str(hwm),
    )
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
    to_null = ["-o", os.devnull]
    for shape in ("frames", "one-frame"):
        cap = str(caps[shape])
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
             [mod, "perfetto", cap, "-o", str(Path(cap).with_suffix(".pftrace"))]),
            (shape, "vkscope html (offline page)",
             [mod, "html", cap, "-o", str(Path(cap).with_suffix(".html"))]),
        ]  # fmt: skip
    bare = str(caps["one-frame-rows"])
    out += [
        ("one-frame-rows", f"report (terminal, {listed} workloads listed per queue)",
         [mod, "report", bare, "--max-workloads", str(listed), *to_null]),
        ("one-frame-rows", "report --format json", [mod, "report", bare, "--format", "json",
                                                   *to_null]),
    ]  # fmt: skip
    out.append(
        ("frames", "overlap (none against queue) --format json, every workload",
         [mod, "overlap", str(caps["frames-none"]), str(caps["frames"]), "--format", "json",
          "--table", "frames", "--table", "workloads", "-o", os.devnull])
    )  # fmt: skip
    return out


def render(report: dict[str, Any] | None) -> str:
    s = report["settings"] if report else {"workloads": 1_000_000, "frame_size": 4096, "listed": 20}
    lines = [
        "# Memory of reports and exports on large captures",
        "",
        banner("report_memory.py"),
        "",
        "`vkscope report`, `query` and `overlap` read a capture frame by frame and queue by",
        "queue, with the per-queue sums, spans and idle gaps computed by SQLite.",
        f"`bench/report_memory.py` builds captures of {s['workloads']:,} workloads through the",
        "capture store, each with the timing annex the layer sends, then runs every report format",
        "in a process of its own and records its peak resident set size (VmHWM, read as the",
        "process exits) and wall time, writing to /dev/null.",
        "",
        f"- **frames**: frames of {s['frame_size']:,} workloads ({PER_SUBMIT} per submit, two",
        f"  queues, {RECORDED:,} recorded workloads resubmitted), `queue` serialization;",
        "- **one-frame**: the same workloads in one frame (a headless application without frame",
        "  boundaries);",
        "- **frames-none**: the *frames* application timed with `none`, for `overlap`;",
        "- **one-frame-rows**: *one-frame* without its stored instance columns (a capture of an",
        "  older vkscope, or of one never finalized), whose report reads its",
        "  instances one at a time.",
        "",
        "Each is finalized as the capture server finalizes it, with its instance columns stored",
        "(as `vkscope run` stores them for every capture), which the report's summary reads.",
        "",
        f"The terminal report lists {s['listed']} workloads per queue (`--max-workloads`); it",
        "still reads every workload for its summary. The summary's distributions over frames are",
        "exact, so they keep what no stream can: each summed-up instance's identity and GPU time",
        "(about 16 bytes), sorted once at the end, and per identity its values in order; a",
        "one-frame capture has an identity per workload. The report reads only the stored",
        "columns it needs (`capture/read/identity_table.py`). numpy and pyarrow imported are a",
        "good part of each figure (the `--help` row imports neither); their libraries' resident",
        "pages vary with what the page cache holds of them.",
        "",
        "## Target",
        "",
        f"Every report and analysis under {TARGET_MB} MB for 1,000,000 workloads (the median of",
        "the runs of each command).",
        "",
        "## Results",
        "",
    ]
    if report is None:
        return "\n".join([*lines, *not_run(NAME, COMMAND), ""])
    m = report["machine"]
    runs = report["settings"]["runs"]
    lines += [
        *provenance(report, NAME),
        f"- SQLite {m['sqlite']}; {runs} run(s) of each command",
        "",
        "| capture | file MB | built in s |",
        "| --- | ---: | ---: |",
    ]
    for name, c in report["captures"].items():
        lines.append(f"| {name} | {c['file_mb']} | {c['build_s']} |")
    lines += [
        "",
        "| capture | command | peak RSS MB, median | runs, MB | wall s, median |",
        "| --- | --- | ---: | ---: | ---: |",
    ]
    for r in report["results"]:
        peaks = r["peak_rss_mb"]
        lines.append(
            f"| {r['capture']} | {r['command']} | {median(peaks):.1f} "
            f"| {min(peaks):.1f} to {max(peaks):.1f} | {median(r['seconds']):.1f} |"
        )
    worst = max(report["results"], key=lambda r: median(r["peak_rss_mb"]))
    peak = median(worst["peak_rss_mb"])
    lines += [
        "",
        f"Target ({TARGET_MB} MB): {met(peak < TARGET_MB)}; the largest peak was "
        f"{spread(worst['peak_rss_mb'], lambda v: f'{v:.1f} MB')}, "
        f"`{worst['command']}` on *{worst['capture']}*.",
        "",
    ]
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--workloads", type=int, default=1_000_000)
    parser.add_argument("--frame-size", type=int, default=4096)
    parser.add_argument(
        "--listed", type=int, default=20, help="workloads per queue the terminal report lists"
    )
    parser.add_argument("--runs", type=int, default=3, help="runs of each command")
    parser.add_argument("--results", type=Path, default=results_path(NAME))
    parser.add_argument("--docs", type=Path, default=DOC)
    args = parser.parse_args(argv)
    if args.frame_size % PER_SUBMIT:
        parser.error(f"--frame-size must be a multiple of {PER_SUBMIT}")
    if args.runs < 1:
        parser.error("--runs must be positive")
    settings = {
        "workloads": args.workloads,
        "frame_size": args.frame_size,
        "listed": args.listed,
        "runs": args.runs,
    }
    report: dict[str, Any] = new(NAME, settings)
    report["machine"]["sqlite"] = sqlite3.sqlite_version
    report["target_mb"] = TARGET_MB
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
        caps["one-frame-rows"] = tmp / "one-frame-rows.vkscope"
        captures["one-frame-rows"] = without_stored_columns(caps["one-frame"],
                                                            caps["one-frame-rows"])  # fmt: skip
        for capture, command, cmd in runs(caps, args.listed):
            done = [measure(cmd, tmp) for _ in range(args.runs)]
            row = {
                "capture": capture,
                "command": command,
                "peak_rss_mb": [d["peak_rss_mb"] for d in done],
                "seconds": [d["seconds"] for d in done],
            }
            results.append(row)
            print(f"{capture:10} {command:50} {median(row['peak_rss_mb']):>8} MB "
                  f"{median(row['seconds']):>6} s", file=sys.stderr)  # fmt: skip
    report["captures"] = captures
    report["results"] = results
    write(report, args.results)
    text = render(report)
    write_doc(text, args.docs)
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
