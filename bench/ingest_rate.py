#!/usr/bin/env python3
"""Measure how fast the capture host turns protocol bytes into a capture file.

Generates a synthetic layer stream (renderpasses, dispatches with some indirect ones whose group
counts arrive later as ANNEX messages, buffer and image transfers, labels, frames) and measures:

  decode     the frame decoder alone
  in-process decoder and store in this process, fed 1 MiB pieces of the stream
  socket     the real capture server on a Unix socket, the stream sent by a separate process

for two streams: `recorded` (every workload recorded and submitted once: one WORKLOAD message
per instance, the costly case) and `resubmitted` (1% of the workloads recorded, their command
buffers submitted again and again). Each point is the median of several runs. Rates count the
time until everything sent is committed; finalizing the file is timed apart. Writes
bench/results/ingest_rate.json (every run) and docs/bench/ingest.md (`render`). Target: 200,000
workloads/s.
"""

from __future__ import annotations

import argparse
import os
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, NamedTuple

from resultfile import DOCS_DIR, banner, new, not_run, provenance, results_path, write, write_doc

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "src"))  # measure this working tree, not an installed copy

import msgspec  # noqa: E402

from vkscope.capture import CaptureServer  # noqa: E402
from vkscope.capture.client import Stream  # noqa: E402
from vkscope.capture.store import CaptureStore, ingest_stream  # noqa: E402
from vkscope.capture.wire import Decoder  # noqa: E402

NAME = "ingest_rate"
DOC = DOCS_DIR / "ingest.md"
TARGET = 200_000
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


def chunks(data: bytes) -> list[bytes]:
    return [data[i : i + CHUNK] for i in range(0, len(data), CHUNK)]


class Sample(NamedTuple):
    seconds: float  # wall clock, first byte to last commit
    cpu_seconds: float  # CPU time of this process (every thread: ingest and checkpoints)
    finalize_seconds: float
    file_bytes: int
    ingest_cpu_seconds: float | None = None  # the ingesting thread alone, when it is this one


def thread_cpu_seconds(name: str) -> float:
    """CPU time so far of this process's thread called `name` (Linux: from /proc)."""
    (native,) = [t.native_id for t in threading.enumerate() if t.name == name]
    fields = Path(f"/proc/self/task/{native}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")  # utime + stime


def run_decode(data: bytes, tmp: Path) -> Sample:
    pieces, decoder = chunks(data), Decoder()
    start, cpu = time.perf_counter(), time.process_time()
    for piece in pieces:
        decoder.feed(piece)
    return Sample(time.perf_counter() - start, time.process_time() - cpu, 0.0, 0)


def run_in_process(data: bytes, tmp: Path) -> Sample:
    path, pieces = tmp / "in-process.vkscope", chunks(data)
    store = CaptureStore(path)
    start, cpu, thread = time.perf_counter(), time.process_time(), time.thread_time()
    ingest_stream(store, "bench", pieces)
    store.commit()
    ingested, cpu = time.perf_counter() - start, time.process_time() - cpu
    thread = time.thread_time() - thread
    store.finalize()
    finalized = time.perf_counter() - start - ingested
    size = path.stat().st_size
    path.unlink()
    return Sample(ingested, cpu, finalized, size, thread)


def run_socket(data: bytes, tmp: Path) -> Sample:
    path, sock, stream = tmp / "socket.vkscope", tmp / "bench.sock", tmp / "stream.bin"
    stream.write_bytes(data)
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
    return Sample(ingested, cpu, finalized, size, thread)


def summarize(
    stream: str, mode: str, samples: list[Sample], instances: int, described: int, size: int
) -> dict[str, Any]:
    seconds = statistics.median(s.seconds for s in samples)
    cpu = statistics.median(s.cpu_seconds for s in samples)
    threads = [s.ingest_cpu_seconds for s in samples if s.ingest_cpu_seconds is not None]
    thread = statistics.median(threads) if threads else None
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
        "workloads_per_cpu_s": instances / cpu,
        "ingest_thread_cpu_s": thread,
        "workloads_per_ingest_thread_cpu_s": instances / thread if thread else None,
        "workload_messages_per_s": described / seconds,
        "stream_mb_per_s": size / seconds / 1e6,
        "finalize_s": statistics.median(s.finalize_seconds for s in samples),
        "file_bytes_per_instance": statistics.median(s.file_bytes for s in samples) / instances,
    }


MODES: dict[str, Callable[[bytes, Path], Sample]] = {
    "decode": run_decode,
    "in-process": run_in_process,
    "socket": run_socket,
}


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
        "command buffer, listing the workloads it runs; the host decodes the frames and writes a",
        "workload row per WORKLOAD and an instance row per listed workload into the capture's",
        "SQLite file (docs/capture-schema.md). `bench/ingest_rate.py` generates a synthetic stream",
        "and times three paths: the frame decoder alone; decoder and store in one process; and the",
        "real capture server on a Unix socket, with the stream sent by a separate process. Rates",
        "run from the first byte to the last commit; finalizing the file (final checks, folding",
        "the write-ahead log back in) is timed apart. Every point is the median of "
        f"{settings['runs']} runs.",
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
        f"At least {TARGET:,} workloads per second into the file on this 2-core machine.",
        "",
        "## Results",
        "",
        *provenance(report, NAME),
        f"- SQLite {machine['sqlite']}, msgspec {machine['msgspec']}",
        "",
        "| stream | path | workloads/s | per ingest-thread CPU s | per host CPU s "
        "| stream MB/s | finalize s | file bytes/workload |",
        "| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: |",
    ]
    for r in rows:
        into_file = r["mode"] != "decode"
        fin = f"{r['finalize_s']:.2f}" if into_file else "-"
        size = f"{r['file_bytes_per_instance']:.0f}" if into_file else "-"
        per_thread = r["workloads_per_ingest_thread_cpu_s"]
        thread = f"{per_thread:,.0f}" if per_thread else "-"
        lines.append(
            f"| {r['stream']} | {r['mode']} | {r['workloads_per_s']:,.0f} | {thread} | "
            f"{r['workloads_per_cpu_s']:,.0f} | {r['stream_mb_per_s']:.0f} | {fin} | {size} |"
        )
    recorded = [r for r in rows if r["stream"] == "recorded" and r["mode"] != "decode"]
    worst = min(float(r["workloads_per_s"]) for r in recorded)
    worst_thread = min(float(r["workloads_per_ingest_thread_cpu_s"] or 0) for r in recorded)
    lines += [
        "",
        "*Workloads/s* is wall-clock time from the first byte to the last commit, under whatever",
        "else the machine was running (see the load average). *Per ingest-thread CPU s* divides by",
        "the CPU time of the one thread that decodes and inserts: SQLite's checkpoints run in a",
        "thread of their own and the application (here, the sender) in its own process, so on an",
        "otherwise idle 2-core machine this is the wall-clock rate to expect. *Per host CPU s*",
        "divides by the CPU time of every thread of the host process.",
        "",
        f"Target ({TARGET:,} workloads/s, *recorded*): "
        f"{'met' if worst >= TARGET else 'not met'} in wall-clock time in this run "
        f"(slowest path {worst:,.0f}); "
        f"{'met' if worst_thread >= TARGET else 'not met'} by the ingest thread's CPU time "
        f"(slowest path {worst_thread:,.0f}).",
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
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--results", type=Path, default=results_path(NAME))
    parser.add_argument("--docs", type=Path, default=DOC)
    args = parser.parse_args(argv)
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
    results["target_workloads_per_s"] = TARGET
    rows: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory(prefix="vkscope-bench-") as tmpdir:
        tmp = Path(tmpdir)
        for name, recorded in (
            ("recorded", args.workloads),
            ("resubmitted", args.workloads // 100),
        ):
            data, instances, described = make_stream(args.workloads, recorded)
            for mode, run in MODES.items():
                samples = [run(data, tmp) for _ in range(args.runs)]
                rows.append(summarize(name, mode, samples, instances, described, len(data)))
                per_thread = rows[-1]["workloads_per_ingest_thread_cpu_s"]
                thread = f", {per_thread:,.0f} per ingest-thread CPU s" if per_thread else ""
                rate = rows[-1]["workloads_per_s"]
                print(f"{name:12} {mode:11} {rate:>12,.0f} workloads/s{thread}", file=sys.stderr)
    results["results"] = rows
    write(results, args.results)
    text = render(results)
    write_doc(text, args.docs)
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
