#!/usr/bin/env python3
"""Measure how fast the capture host turns protocol bytes into a capture file.

Generates a synthetic layer stream (renderpasses, dispatches with some indirect ones whose group
counts arrive later as ANNEX messages, buffer and image transfers, labels, frames) and measures:

  decode     the frame decoder alone, as the host uses it (Decoder.feed_frames)
  in-process decoder and store in one process, fed 1 MiB pieces of the stream read from a file
  socket     the real capture server on a Unix socket, the stream sent by a separate process

for two streams: `recorded` (every workload recorded and submitted once: one WORKLOAD message
per instance, the costly case) and `resubmitted` (1% of the workloads recorded, their command
buffers submitted again and again). Every run is a fresh process (the host's own, for the socket
path: the sender is a process of its own), which also reports the host's peak memory; runs of
the paths are interleaved, and each point is the median of several runs, with their spread.
Rates count the time until everything sent is committed; finalizing the file (building its
journal into the tables, indexing, folding the write-ahead log back in) is timed apart. Writes
bench/results/ingest_rate.json (every run) and docs/bench/ingest.md (`render`). Targets:
500,000 workloads/s recorded, 1,000,000 resubmitted.
"""

from __future__ import annotations

import argparse
import json
import os
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any, NamedTuple

import msgspec

from bench.resultfile import (
    DOCS_DIR,
    banner,
    new,
    not_run,
    provenance,
    publish,
    results_path,
)
from bench.this_tree import SRC  # noqa: F401  (importing it puts src/ first)
from vkscope.capture import CaptureServer
from vkscope.capture.schema import WRITER_PRAGMAS
from vkscope.capture.write.annexes import MAX_WAITING
from vkscope.capture.write.build import CHUNK_INSTANCES
from vkscope.capture.write.client import Stream
from vkscope.capture.write.store import CaptureStore, ingest_stream
from vkscope.capture.write.wire import MAX_PAYLOAD, Decoder

NAME = "ingest_rate"
DOC = DOCS_DIR / "ingest.md"
TARGETS = {"recorded": 500_000, "resubmitted": 1_000_000}
CHUNK = 1 << 20
PER_SUBMIT = 64
SENDER = "import socket,sys; s=socket.socket(socket.AF_UNIX); s.connect(sys.argv[1]); \
s.sendall(open(sys.argv[2],'rb').read()); s.close()"


def _color(index: int) -> dict[str, object]:
    return {
        "index": index,
        "kind": "color",
        "format": "R8G8B8A8_UNORM",
        "samples": 1,
        "load": "clear",
        "store": "store",
        "resolve": False,
    }


def _record(s: Stream, tag: int) -> tuple[int, bool]:
    """Sends one WORKLOAD; returns its label stack and whether it needs an annex."""
    kind = tag % 8
    if kind in (0, 4):
        depth = _color(1) | {"kind": "depth", "format": "D32_SFLOAT"}
        fields: dict[str, Any] = {"width": 1920, "height": 1080, "layers": 1, "subpasses": 1}
        fields |= {"view_mask": 0, "draws": tag % 97, "split": False}
        fields["attachments"] = [_color(0), depth]
        s.workload(tag, "renderpass", api="vkCmdBeginRenderPass2", **fields)
    elif kind in (1, 5, 7):
        indirect = kind == 7
        groups = None if indirect else [tag % 64 + 1, 4, 1]
        invocations = None if indirect else (tag % 64 + 1) * 256
        api = "vkCmdDispatchIndirect" if indirect else "vkCmdDispatch"
        s.workload(
            tag,
            "dispatch",
            api=api,
            groups=groups,
            base=[0, 0, 0],
            local_size=[64, 1, 1],
            invocations=invocations,
        )
        return tag % 9, indirect
    elif kind in (2, 6):
        s.workload(tag, "buffer_transfer", api="vkCmdCopyBuffer", kind="copy", bytes=65536)
    else:
        s.workload(tag, "image_transfer", api="vkCmdBlitImage", kind="blit", pixels=2073600)
    return tag % 9, False


def make_stream(workloads: int, recorded: int) -> tuple[bytes, int, int]:
    """Protocol bytes for `workloads` instances of `recorded` distinct workloads."""
    s = Stream()
    s.hello(process="bench")
    s.device(1, "Synthetic GPU", queues=2)
    for stack in range(1, 9):
        s.labels(stack, ["frame", f"pass {stack}", "draws"][: 1 + stack % 3])
    listed = [(tag, *_record(s, tag)) for tag in range(1, recorded + 1)]
    sent, frame = 0, 0
    while sent < workloads:
        batch = [listed[(sent + k) % recorded] for k in range(min(PER_SUBMIT, workloads - sent))]
        sid = s.submit(
            [(tag, stack) for tag, stack, _ in batch], frame=frame, queue=frame % 2, cpu_ns=sent
        )
        for tag, _, indirect in batch:
            if indirect:
                s.annex(sid, tag, groups=[tag % 32 + 1, 2, 1], invocations=(tag % 32 + 1) * 128)
        sent += len(batch)
        if sid % 16 == 0:
            s.frame(frame, cpu_ns=sent)
            frame += 1
    s.goodbye()
    return s.data(), workloads, recorded


def chunks(path: Path) -> Iterator[bytes]:
    """The stream file in 1 MiB pieces, read as they are taken (not held whole in memory)."""
    with path.open("rb") as f:
        while piece := f.read(CHUNK):
            yield piece


class Sample(NamedTuple):
    seconds: float  # wall clock, first byte to last commit
    cpu_seconds: float  # CPU time of the host process (every thread: ingest and checkpoints)
    finalize_seconds: float
    file_bytes: int
    peak_rss_bytes: int  # the host process's peak resident memory, whole run
    ingest_cpu_seconds: float | None = None  # the ingesting thread alone, when it is this one


def thread_cpu_seconds(name: str) -> float:
    """CPU time so far of this process's thread called `name` (Linux: from /proc)."""
    (native,) = [t.native_id for t in threading.enumerate() if t.name == name]
    fields = Path(f"/proc/self/task/{native}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")  # utime + stime


def peak_rss_bytes() -> int:
    """This process's peak resident memory. Not getrusage's ru_maxrss: Linux carries that
    over from the parent, which holds the whole stream."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) * 1024  # kB
    raise RuntimeError("no VmHWM in /proc/self/status")


def run_decode(stream: Path, tmp: Path) -> Sample:
    pieces, decoder = list(chunks(stream)), Decoder()
    start, cpu = time.perf_counter(), time.process_time()
    for piece in pieces:
        decoder.feed_frames(piece)
    return Sample(time.perf_counter() - start, time.process_time() - cpu, 0.0, 0, 0)


def run_in_process(stream: Path, tmp: Path) -> Sample:
    path = tmp / "in-process.vkscope"
    store = CaptureStore(path)
    start, cpu, thread = time.perf_counter(), time.process_time(), time.thread_time()
    ingest_stream(store, "bench", chunks(stream))
    store.commit()
    ingested, cpu = time.perf_counter() - start, time.process_time() - cpu
    thread = time.thread_time() - thread
    store.finalize()
    finalized = time.perf_counter() - start - ingested
    size = path.stat().st_size
    path.unlink()
    return Sample(ingested, cpu, finalized, size, peak_rss_bytes(), thread)


def run_socket(stream: Path, tmp: Path) -> Sample:
    path, sock = tmp / "socket.vkscope", tmp / "bench.sock"
    server = CaptureServer(path, [f"unix:{sock}"])
    server.start()
    start, cpu = time.perf_counter(), time.process_time()
    thread = thread_cpu_seconds("vkscope-capture")
    subprocess.run([sys.executable, "-c", SENDER, str(sock), str(stream)], check=True)
    while True:
        counters = server.counters()
        if counters.connections and not counters.open_connections and not counters.uncommitted:
            break
        time.sleep(0.002)
    ingested, cpu = time.perf_counter() - start, time.process_time() - cpu
    thread = thread_cpu_seconds("vkscope-capture") - thread
    server.stop()
    finalized = time.perf_counter() - start - ingested
    size = path.stat().st_size
    path.unlink()
    return Sample(ingested, cpu, finalized, size, peak_rss_bytes(), thread)


def summarize(
    stream: str, mode: str, samples: list[Sample], instances: int, described: int, size: int
) -> dict[str, Any]:
    seconds = statistics.median(s.seconds for s in samples)
    cpu = statistics.median(s.cpu_seconds for s in samples)
    threads = [s.ingest_cpu_seconds for s in samples if s.ingest_cpu_seconds is not None]
    thread = statistics.median(threads) if threads else None
    rates = sorted(instances / s.seconds for s in samples)
    finalize = [s.finalize_seconds for s in samples]
    return {
        "stream": stream,
        "mode": mode,
        "instances": instances,
        "workload_messages": described,
        "stream_bytes": size,
        "median_s": seconds,
        "median_cpu_s": cpu,
        "samples_s": [s.seconds for s in samples],
        "samples_cpu_s": [s.cpu_seconds for s in samples],
        "workloads_per_s": instances / seconds,
        "workloads_per_s_min": rates[0],
        "workloads_per_s_max": rates[-1],
        "workloads_per_cpu_s": instances / cpu,
        "ingest_thread_cpu_s": thread,
        "workloads_per_ingest_thread_cpu_s": instances / thread if thread else None,
        "workload_messages_per_s": described / seconds,
        "stream_mb_per_s": size / seconds / 1e6,
        "finalize_s": statistics.median(finalize),
        "samples_finalize_s": finalize,
        "finalize_s_per_million": statistics.median(finalize) / instances * 1e6,
        "peak_rss_bytes": max(s.peak_rss_bytes for s in samples),
        "samples_peak_rss_bytes": [s.peak_rss_bytes for s in samples],
        "file_bytes_per_instance": statistics.median(s.file_bytes for s in samples) / instances,
    }


MODES = {"decode": run_decode, "in-process": run_in_process, "socket": run_socket}


def run_child(mode: str, stream: Path, tmp: Path) -> Sample:
    """One run in a fresh process: its heap, garbage collector and peak memory its own."""
    cmd = [sys.executable, __file__, "--child", mode, str(stream), str(tmp)]
    out = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
    return Sample(*json.loads(out))


def memory_bound() -> str:
    """What bounds the host's memory, from the settings the code runs with."""
    store = CaptureStore.__init__.__kwdefaults__ or {}
    return (
        f"one batch waiting for its commit (at most {store['batch_messages']:,} messages and "
        f"listed instances, {store['batch_bytes'] >> 20} MiB of stream or "
        f"{store['commit_interval_s'] * 1000:.0f} ms), one partial frame per connection "
        f"(at most {MAX_PAYLOAD >> 20} MiB), SQLite's page cache ({_cache_mib()} MiB); while "
        f"finalizing, at most {CHUNK_INSTANCES:,} instance rows and {MAX_WAITING:,} waiting "
        "annexes, and the page cache"
    )


def _cache_mib() -> int:
    (pragma,) = [p for p in WRITER_PRAGMAS if "cache_size" in p]
    return -int(pragma.split("=")[1]) >> 10


def markdown(report: dict[str, object], rows: list[dict[str, Any]]) -> str:
    machine = report["machine"]
    assert isinstance(machine, dict)
    settings = report["settings"]
    assert isinstance(settings, dict)
    lines = [
        "# How fast the host ingests a capture",
        "",
        banner("ingest_rate.py"),
        "",
        "The layer streams one WORKLOAD message per recorded workload and one SUBMIT per submitted",
        "command buffer, listing the workloads it runs. While capturing, the host appends what",
        "arrives to the capture's journal (WORKLOADs as the raw frames they came in, SUBMITs as",
        "their lists, ANNEXes as their payloads) and writes the few other messages as rows; when",
        "the capture is finalized it builds the journal into a workload row per WORKLOAD and an",
        "instance row per listed workload, annexes merged (docs/capture-schema.md).",
        "`bench/ingest_rate.py` generates a synthetic stream and times three paths: the frame",
        "decoder alone; decoder and store in one process; and the real capture server on a Unix",
        "socket, with the stream sent by a separate process. Rates run from the first byte to the",
        "last commit; finalizing the file (building the journal, final checks, folding the",
        "write-ahead log back in) is timed apart. Every run is a process of its own, the paths'",
        "runs are interleaved, and every point is the median of "
        f"{settings['runs']} runs (the slowest and fastest run beside it).",
        "",
        f"- **recorded**: {settings['workloads']:,} workloads, each recorded and submitted",
        "  once (a WORKLOAD message for every instance: the costly case);",
        f"- **resubmitted**: {settings['workloads']:,} instances of "
        f"{settings['workloads'] // 100:,} recorded workloads",
        "  (command buffers submitted again and again).",
        "",
        f"Both have {PER_SUBMIT} workloads per submit, a frame every 16 submits, and an ANNEX for",
        "each indirect dispatch (1 workload in 8).",
        "",
        "## Target",
        "",
        "Into the file through the real socket, on this 2-core machine: at least "
        f"{TARGETS['recorded']:,} workloads per second on the recorded stream and "
        f"{TARGETS['resubmitted']:,} on the resubmitted one, with the host's memory bounded.",
        "",
        "## Results",
        "",
        *provenance(report, NAME),
        f"- SQLite {machine['sqlite']}, msgspec {machine['msgspec']}",
        "",
        "| stream | path | workloads/s | slowest - fastest run | per ingest-thread CPU s "
        "| per host CPU s | stream MB/s | finalize s | host peak MiB | file bytes/workload |",
        "| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |",
    ]
    for r in rows:
        into_file = r["mode"] != "decode"
        fin = f"{r['finalize_s']:.2f}" if into_file else "-"
        size = f"{r['file_bytes_per_instance']:.0f}" if into_file else "-"
        peak = f"{r['peak_rss_bytes'] / 2**20:.0f}" if into_file else "-"
        per_thread = r["workloads_per_ingest_thread_cpu_s"]
        thread = f"{per_thread:,.0f}" if per_thread else "-"
        spread = f"{r['workloads_per_s_min']:,.0f} - {r['workloads_per_s_max']:,.0f}"
        lines.append(
            f"| {r['stream']} | {r['mode']} | {r['workloads_per_s']:,.0f} | {spread} | {thread} | "
            f"{r['workloads_per_cpu_s']:,.0f} | {r['stream_mb_per_s']:.0f} | {fin} | {peak} | "
            f"{size} |"
        )
    socket = {r["stream"]: r for r in rows if r["mode"] == "socket"}
    verdicts = []
    for stream, target in TARGETS.items():
        rate = float(socket[stream]["workloads_per_s"])
        met = "met" if rate >= target else "not met"
        verdicts.append(f"{stream} {rate:,.0f} workloads/s for {target:,}: {met}")
    lines += [
        "",
        "*Workloads/s* is wall-clock time from the first byte to the last commit, under whatever",
        "else the machine was running (see the load average). *Per ingest-thread CPU s* divides by",
        "the CPU time of the one thread that decodes and stores: SQLite's checkpoints run in a",
        "thread of their own and the application (here, the sender) in its own process, so on an",
        "otherwise idle 2-core machine this is the wall-clock rate to expect. *Per host CPU s*",
        "divides by the CPU time of every thread of the host process. *Finalize s* is the time",
        "from the end of the stream to a finished file (median); it grows with the capture, as",
        "`vkscope run` shows with a progress bar. *Host peak MiB* is the host process's peak",
        "resident memory over the whole run, finalizing included (the largest run).",
        "",
        "The host's memory is bounded, whatever the length of the capture: "
        f"{report['memory_bound']}.",
        "",
        f"Targets (socket path, median): {'; '.join(verdicts)}.",
        "",
    ]
    return "\n".join(lines)


def render(results: dict[str, Any] | None) -> str:
    if results is None:
        title = ["# How fast the host ingests a capture", "", banner("ingest_rate.py"), ""]
        return "\n".join([*title, *not_run(NAME, ".venv/bin/python bench/ingest_rate.py"), ""])
    return markdown(results, results["results"])


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--workloads", type=int, default=1_000_000)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--results", type=Path, default=results_path(NAME))
    parser.add_argument("--docs", type=Path, default=DOC)
    parser.add_argument(
        "--child", nargs=3, metavar=("MODE", "STREAM", "TMP"), help=argparse.SUPPRESS
    )
    args = parser.parse_args(argv)
    if args.child:
        mode, stream, tmp = args.child
        print(json.dumps(MODES[mode](Path(stream), Path(tmp))))
        return 0
    if args.workloads < 100 or args.runs < 1:
        parser.error("--workloads must be at least 100 and --runs positive")
    settings = {
        "workloads": args.workloads,
        "runs": args.runs,
        "per_submit": PER_SUBMIT,
        "chunk_bytes": CHUNK,
    }
    results: dict[str, Any] = new(NAME, settings)
    results["machine"] |= {"sqlite": sqlite3.sqlite_version, "msgspec": msgspec.__version__}
    rows: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory(prefix="vkscope-bench-") as tmpdir:
        tmp = Path(tmpdir)
        stream = tmp / "stream.bin"
        for name, recorded in (
            ("recorded", args.workloads),
            ("resubmitted", args.workloads // 100),
        ):
            data, instances, described = make_stream(args.workloads, recorded)
            stream.write_bytes(data)
            samples: dict[str, list[Sample]] = {mode: [] for mode in MODES}
            for _ in range(args.runs):
                for mode in MODES:  # interleaved: a slow moment of the machine hits every path
                    samples[mode].append(run_child(mode, stream, tmp))
            for mode in MODES:
                rows.append(summarize(name, mode, samples[mode], instances, described, len(data)))
                per_thread = rows[-1]["workloads_per_ingest_thread_cpu_s"]
                thread = f", {per_thread:,.0f} per ingest-thread CPU s" if per_thread else ""
                rate = rows[-1]["workloads_per_s"]
                fin = f", finalize {rows[-1]['finalize_s']:.2f} s" if mode != "decode" else ""
                print(
                    f"{name:12} {mode:11} {rate:>12,.0f} workloads/s{thread}{fin}", file=sys.stderr
                )
    results["target_workloads_per_s"] = TARGETS
    results["memory_bound"] = memory_bound()
    results["results"] = rows
    publish(results, render, args.results, args.docs)
    return 0


if __name__ == "__main__":
    sys.exit(main())
