#!/usr/bin/env python3
"""Measure what the timeline sends to the host: bytes and messages per workload instance.

Runs the installed vkscope-workload (every scenario) under the installed layer with the timeline
on, streaming into a Unix socket this script reads, then decodes the stream with the host's
decoder and divides by the workload instances it describes. Two shapes of application:

  recorded    every frame re-records its command buffers (the program's normal mode): a WORKLOAD
              message per recorded workload, a SUBMIT per submitted command buffer
  resubmitted the `reusable` scenario alone: one command buffer recorded once and submitted
              again and again, so only SUBMIT messages grow with the frames

Writes bench/results/wire_volume.json and docs/bench/wire-volume.md (`render`).
"""

from __future__ import annotations

import argparse
import collections
import json
import os
import socket
import subprocess
import tempfile
import threading
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from bench.resultfile import (
    DOCS_DIR,
    banner,
    new,
    not_run,
    provenance,
    publish,
    results_path,
    spread,
)
from vkscope import paths
from vkscope.capture.write.wire import Decoder, Message
from vkscope.protocol import SUBMIT, type_name

NAME = "wire_volume"
DOC = DOCS_DIR / "wire-volume.md"
COMMAND = ".venv/bin/python bench/wire_volume.py"


def capture_stream(args: list[str]) -> bytes:
    """Runs the workload program with the timeline on and returns every byte it sent."""
    with tempfile.TemporaryDirectory(prefix="vkscope-wv-", dir="/tmp") as tmp:
        path = Path(tmp) / "host.sock"
        server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        server.bind(str(path))
        server.listen(4)
        chunks: list[bytes] = []

        def accept() -> None:
            conn, _ = server.accept()
            with conn:
                while data := conn.recv(1 << 16):
                    chunks.append(data)

        reader = threading.Thread(target=accept)
        reader.start()
        env = {k: v for k, v in os.environ.items() if not k.startswith("VK_VKSCOPE_")}
        env.update(
            LP_NUM_THREADS="0",
            VK_ADD_LAYER_PATH=str(paths.layer_dir()),
            VK_INSTANCE_LAYERS="VK_LAYER_VKSCOPE_profiler",
            VK_VKSCOPE_TIMELINE="true",
            VK_VKSCOPE_HOST=f"unix:{path}",
        )
        subprocess.run([str(paths.workload_program()), *args, "--quiet"], env=env, check=True)
        reader.join(60)
        server.close()
    return b"".join(chunks)


def measure(label: str, args: list[str]) -> dict[str, Any]:
    stream = capture_stream(args)
    decoder = Decoder()
    messages = [m for m in decoder.feed(stream) if isinstance(m, Message)]
    by_type = collections.Counter(type_name(m.type) for m in messages)
    instances = sum(len(json.loads(m.raw)["workloads"]) for m in messages if m.type == SUBMIT)
    return {
        "stream": label,
        "args": args,
        "bytes": len(stream),
        "messages": len(messages),
        "instances": instances,
        "bytes_per_instance": len(stream) / instances,
        "messages_per_instance": len(messages) / instances,
        "by_type": dict(by_type),
    }


def render(results: Mapping[str, Any] | None) -> str:
    lines = [
        "# What the timeline sends to the host",
        "",
        banner("wire_volume.py"),
        "",
        "`bench/wire_volume.py` runs `vkscope-workload` (every scenario) under the layer with the",
        "timeline on, streaming into a Unix socket it reads, decodes the stream with the host's",
        "decoder and divides by the workload instances it describes. Two shapes of application:",
        "",
        "- **recorded**: every frame re-records its command buffers, so each instance brings its",
        "  WORKLOAD description and each submitted command buffer a SUBMIT;",
        "- **resubmitted**: the `reusable` scenario alone, one command buffer recorded once and",
        "  submitted again and again, so only SUBMIT messages grow with the frames.",
        "",
        "## Results",
        "",
    ]
    if results is None:
        return "\n".join([*lines, *not_run(NAME, COMMAND), ""])
    runs = results["runs"]
    lines += [
        *provenance(results, NAME),
        f"- {results['settings']['frames']} frames, LP_NUM_THREADS=0, {len(runs)} runs",
        "",
        "| stream | instances | bytes | messages | bytes / instance | messages / instance |",
        "|---|---|---|---|---|---|",
    ]
    streams = [r["stream"] for r in runs[0]]
    for i, stream in enumerate(streams):
        rows = [run[i] for run in runs]

        def cell(key: str, fmt: str, rows: list[dict[str, Any]] = rows) -> str:
            return spread([r[key] for r in rows], lambda v: format(v, fmt))

        lines.append(
            f"| {stream} | {cell('instances', ',.0f')} | {cell('bytes', ',.0f')} "
            f"| {cell('messages', ',.0f')} | {cell('bytes_per_instance', '.0f')} "
            f"| {cell('messages_per_instance', '.2f')} |"
        )
    lines += ["", "Messages by type (first run):", ""]
    for r in runs[0]:
        kinds = ", ".join(f"{k} {v:,}" for k, v in sorted(r["by_type"].items()))
        lines.append(f"- {r['stream']}: {kinds}")
    lines += ["", f"Reproduce: `{COMMAND}` (uses the installed package).", ""]
    return "\n".join(lines)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--frames", type=int, default=100)
    ap.add_argument("--runs", type=int, default=2, help="runs of both streams")
    ap.add_argument("--results", type=Path, default=results_path(NAME))
    ap.add_argument("--docs", type=Path, default=DOC)
    args = ap.parse_args()
    if args.runs < 1 or args.frames < 1:
        ap.error("--runs and --frames must be positive")
    results = new(NAME, {"frames": args.frames, "runs": args.runs}, vulkan=True)
    results["runs"] = [
        [
            measure("recorded", ["--all", "--frames", str(args.frames)]),
            measure("resubmitted", ["--scenario", "reusable", "--frames", str(args.frames)]),
        ]
        for _ in range(args.runs)
    ]
    publish(results, render, args.results, args.docs)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
