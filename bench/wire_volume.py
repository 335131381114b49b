#!/usr/bin/env python3
"""Measure what the timeline sends to the host: bytes and messages per workload instance.

Runs the installed vkscope-workload (every scenario) under the installed layer with the timeline
on, streaming into a Unix socket this script reads, then decodes the stream with the host's
decoder and divides by the workload instances it describes. Two shapes of application:

  recorded    every frame re-records its command buffers (the program's normal mode): a WORKLOAD
              message per recorded workload, a SUBMIT per submitted command buffer
  resubmitted the `reusable` scenario alone: one command buffer recorded once and submitted
              again and again, so only SUBMIT messages grow with the frames

Writes bench/results/wire_volume.json and docs/bench-wire-volume.md.
"""

from __future__ import annotations

import argparse
import collections
import datetime
import json
import os
import platform
import socket
import subprocess
import tempfile
import threading
from pathlib import Path
from typing import Any

from machine import cpu_model

from vkscope import paths
from vkscope.capture.messages import SUBMIT, type_name
from vkscope.capture.wire import Decoder, Message

REPO = Path(__file__).resolve().parent.parent


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


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--frames", type=int, default=100)
    ap.add_argument("--results", type=Path, default=REPO / "bench/results/wire_volume.json")
    ap.add_argument("--docs", type=Path, default=REPO / "docs/bench-wire-volume.md")
    args = ap.parse_args()
    rows = [
        measure("recorded", ["--all", "--frames", str(args.frames)]),
        measure("resubmitted", ["--scenario", "reusable", "--frames", str(args.frames)]),
    ]
    cpu = cpu_model()
    report = {
        "date": datetime.date.today().isoformat(),
        "machine": {"cpu": cpu, "cores": os.cpu_count(), "system": platform.platform()},
        "frames": args.frames,
        "rows": rows,
    }
    args.results.parent.mkdir(parents=True, exist_ok=True)
    args.results.write_text(json.dumps(report, indent=2) + "\n")
    lines = [
        "# What the timeline sends to the host",
        "",
        "<!-- Written by bench/wire_volume.py; rerun it rather than editing the numbers. -->",
        "",
        f"Machine: {cpu}, {os.cpu_count()} cores; lavapipe; {report['date']};"
        f" {args.frames} frames of `vkscope-workload`.",
        "",
        "| stream | instances | bytes | messages | bytes / instance | messages / instance |",
        "|---|---|---|---|---|---|",
    ]
    for r in rows:
        lines.append(
            f"| {r['stream']} | {r['instances']:,} | {r['bytes']:,} | {r['messages']:,} "
            f"| {r['bytes_per_instance']:.0f} | {r['messages_per_instance']:.2f} |"
        )
    lines += ["", "Messages by type:", ""]
    for r in rows:
        kinds = ", ".join(f"{k} {v:,}" for k, v in sorted(r["by_type"].items()))
        lines.append(f"- {r['stream']}: {kinds}")
    lines += [
        "",
        "`recorded` re-records every command buffer each frame, so each instance brings its",
        "WORKLOAD description; `resubmitted` records once and only its SUBMITs repeat.",
        "Reproduce: `.venv/bin/python bench/wire_volume.py` (uses the installed package).",
        "",
    ]
    args.docs.write_text("\n".join(lines))
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
