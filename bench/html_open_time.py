#!/usr/bin/env python3
"""Measure how long the HTML timeline takes to open in a browser.

Builds synthetic captures through the real capture server (protocol frames on a Unix socket, as
the layer sends them): 10,000 workload instances over 100 frames and three queues, with nested
labels and GPU times in annexes, and the same without GPU times. Writes each page with
vkscope.html.write_html, loads it from a file:// URL in headless Chromium (Debian's
/usr/bin/chromium, driven by Playwright) and reads two timestamps the page sets, both in ms
since navigation start:

  ready    window.vkscopeReady: the page has parsed its data and drawn the timeline, the table,
           the label tree and the frame picker
  painted  window.vkscopePainted: two animation frames later, so that drawing is on screen

Each point is the median of several loads, each in a fresh browser context. A larger capture
(100,000 workloads) shows how the time grows. Writes bench/results/html_open_time.json (every
load) and docs/bench/html.md (`render`). Target: under 2 s for 10,000 workloads, on the median.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import tempfile
import time
import uuid
from collections.abc import Sequence
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
from bench.this_tree import SRC  # noqa: F401  (importing it puts src/ first)
from vkscope.capture import CaptureServer
from vkscope.capture.write.client import Stream, connect
from vkscope.html import write_html

NAME = "html_open_time"
DOC = DOCS_DIR / "html.md"
COMMAND = ".venv/bin/python bench/html_open_time.py"
TARGET_MS = 2000.0
KEYS = ("response", "dom", "ready", "painted", "wall")
CHROMIUM = "/usr/bin/chromium"
FRAMES_PER_10K = 100

LABELS = {
    1: ["frame"],
    2: ["frame", "shadows"],
    3: ["frame", "shadows", "cascade 0"],
    4: ["frame", "shadows", "cascade 1"],
    5: ["frame", "shadows", "cascade 2"],
    6: ["frame", "gbuffer"],
    7: ["frame", "lighting"],
    8: ["frame", "lighting", "tiled"],
    9: ["frame", "post"],
    10: ["frame", "post", "bloom"],
    11: ["frame", "ui"],
    12: ["async", "particles"],
    13: ["async", "culling"],
    14: ["streaming"],
}
# Per queue: (label stacks used, type mix)
QUEUES = {
    0: (
        [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11],
        ["renderpass"] * 5 + ["dispatch"] * 2 + ["trace_rays"],
    ),
    1: ([12, 13, 8], ["dispatch"] * 4 + ["acceleration_structure"]),
    2: ([14, 0], ["buffer_transfer", "image_transfer"]),
}
SHARE = {0: 0.6, 1: 0.25, 2: 0.15}


def _fields(kind: str, rng: random.Random) -> dict[str, Any]:
    if kind == "renderpass":
        color = {"index": 0, "kind": "color", "format": 37, "samples": 1, "load": 1, "store": 0,
                 "stencil_load": 2, "stencil_store": 1, "resolve": False}  # fmt: skip
        depth = color | {"index": 1, "kind": "depth_stencil", "format": 126}
        return {"api": "vkCmdBeginRenderPass2", "width": 1920, "height": 1080, "layers": 1,
                "subpasses": 1, "view_mask": 0, "draws": rng.randrange(1, 400),
                "attachments": [color, depth], "split": False}  # fmt: skip
    if kind == "dispatch":
        x = rng.randrange(1, 256)
        return {"api": "vkCmdDispatch", "groups": [x, 4, 1], "base": [0, 0, 0],
                "local_size": [64, 1, 1], "invocations": x * 256}  # fmt: skip
    if kind == "trace_rays":
        return {"api": "vkCmdTraceRaysKHR", "width": 1920, "height": 1080, "depth": 1}
    if kind == "buffer_transfer":
        return {"api": "vkCmdCopyBuffer", "kind": "copy", "bytes": rng.randrange(256, 1 << 24)}
    if kind == "image_transfer":
        return {"api": "vkCmdCopyBufferToImage", "kind": "buffer_to_image",
                "pixels": rng.randrange(64, 1 << 22)}  # fmt: skip
    return {"api": "vkCmdBuildAccelerationStructuresKHR", "kind": "build", "count": 1}


def make_stream(workloads: int, timed: bool, seed: int = 1) -> Stream:
    """A capture's protocol frames: `workloads` instances, each recorded in its frame."""
    rng = random.Random(seed)
    s = Stream()
    s.hello(process="html-bench", pid=777)
    s.device(1, "Bench GPU", queues=3)
    for stack, labels in LABELS.items():
        s.labels(stack, labels)
    frames = max(1, workloads * FRAMES_PER_10K // 10_000)
    tag = 0
    made = 0
    for frame in range(frames):
        in_frame = (workloads - made) // (frames - frame)
        clock = {q: 10**12 + frame * 16_600_000 + q * 20_000 for q in QUEUES}
        for queue, (stacks, kinds) in QUEUES.items():
            count = round(in_frame * SHARE[queue]) if queue else 0
            if queue == 0:
                count = in_frame - sum(round(in_frame * SHARE[q]) for q in QUEUES if q)
            listed: list[tuple[int, int]] = []
            for n in range(count):
                tag += 1
                kind = kinds[n % len(kinds)]
                fields = _fields(kind, rng)
                s.workload(tag, kind, **fields)
                listed.append((tag, stacks[(n * len(stacks)) // max(1, count)]))
            for start in range(0, len(listed), 10):  # ten workloads per command buffer
                part = listed[start : start + 10]
                submit = s.submit(part, frame=frame, queue=queue, cpu_ns=clock[0] - 10**12 + start)
                if not timed:
                    continue
                for t, _ in part:
                    begin = clock[queue] + rng.randrange(1_000, 20_000)
                    end = begin + rng.randrange(2_000, 250_000)
                    clock[queue] = end
                    s.annex(submit, t, gpu_begin_ns=begin, gpu_end_ns=end, timing="ok",
                            serialization="queue")  # fmt: skip
            made += count
        s.frame(frame, cpu_ns=(frame + 1) * 16_600_000)
    s.goodbye()
    return s


def capture(stream: Stream, path: Path) -> Path:
    server = CaptureServer(path, [f"unix:@vkscope-html-bench-{uuid.uuid4().hex}"])
    server.start()
    try:
        with connect(server.addresses[0]) as sock:
            sock.sendall(stream.data())
        while True:
            c = server.counters()
            if c.connections >= 1 and c.open_connections == 0:
                break
            time.sleep(0.01)
    finally:
        summary = server.stop()
    if summary.status != "complete":
        raise SystemExit(f"the synthetic capture came out {summary.status}")
    return summary.path


def measure(browser: Any, page_path: Path, runs: int) -> dict[str, Any]:
    samples = []
    for _ in range(runs):
        context = browser.new_context(viewport={"width": 1600, "height": 1000})
        page = context.new_page()
        errors: list[str] = []
        page.on("pageerror", lambda e, errors=errors: errors.append(str(e)))
        page.on("console", lambda m, errors=errors: m.type == "error" and errors.append(m.text))
        started = time.perf_counter()
        page.goto(page_path.as_uri())
        page.wait_for_function("document.documentElement.dataset.ready === '1'", timeout=60_000)
        waited = (time.perf_counter() - started) * 1000
        t = page.evaluate("""() => {
            const nav = performance.getEntriesByType('navigation')[0];
            return {ready: window.vkscopeReady, painted: window.vkscopePainted,
                    dom: nav.domContentLoadedEventEnd, response: nav.responseEnd};
        }""")  # fmt: skip
        context.close()
        if errors:
            raise SystemExit(f"the page reported errors: {errors}")
        samples.append({**t, "wall": waited})
    return {key: [round(s[key], 1) for s in samples] for key in KEYS}


def render(report: dict[str, Any] | None) -> str:
    intro = [
        "# How fast the HTML timeline opens",
        "",
        banner("html_open_time.py"),
        "",
        "`vkscope html` writes one self-contained page (docs/html.md). `bench/html_open_time.py`",
        "builds synthetic captures through the real capture server (protocol frames on a Unix",
        "socket): workload instances over three queues, 100 per frame, nested labels, every",
        "workload recorded in its frame, with GPU times in annexes (and once without). It writes",
        "each page, loads it from a `file://` URL in headless Chromium (Debian's `chromium`,",
        "driven by Playwright), each load in a fresh browser context, and reads the timestamps",
        "the page sets, in ms from navigation start:",
        "",
        "- *file read*: the browser has the whole file (`responseEnd`);",
        "- *ready*: `window.vkscopeReady`, set once the page has parsed its data and drawn the",
        "  timeline, the workload table, the label tree and the frame picker;",
        "- *painted*: `window.vkscopePainted`, two animation frames later, when that drawing",
        "  is on screen: the time to first render.",
        "",
        "## Target",
        "",
        f"A capture of 10,000 workloads with GPU times is painted in under {TARGET_MS / 1000:.0f} s"
        " (the median of the loads).",
        "",
        "## Results",
        "",
    ]
    if report is None:
        return "\n".join([*intro, *not_run(NAME, COMMAND), ""])
    m = report["machine"]
    rows = []
    for r in report["results"]:
        ms, painted = r["open_ms"], r["open_ms"]["painted"]
        rows.append(
            f"| {r['workloads']:,} | {'yes' if r['timed'] else 'no'} | {r['page_bytes'] / 1e6:.2f} "
            f"| {r['write_s']:.2f} | {median(ms['response']):.0f} | {median(ms['ready']):.0f} "
            f"| {median(painted):.0f} | {min(painted):.0f} to {max(painted):.0f} |"
        )
    main = next(r for r in report["results"] if r["workloads"] == 10_000 and r["timed"])
    painted = main["open_ms"]["painted"]
    return "\n".join([
        *intro,
        *provenance(report, NAME),
        f"- Chromium {m['chromium']} (headless)",
        f"- {report['settings']['runs']} loads per page, each in a fresh browser context",
        "",
        "| workloads | GPU times | page MB | write s | file read ms | ready ms | painted ms "
        "| painted, fastest to slowest load |",
        "| ---: | --- | ---: | ---: | ---: | ---: | ---: | ---: |",
        *rows,
        "",
        "*Write s* is `write_html` (reading the capture, building and writing the page); the ms",
        "columns are medians of the loads.",
        "",
        f"Target ({TARGET_MS / 1000:.0f} s for 10,000 workloads with GPU times): "
        f"{met(median(painted) < TARGET_MS)}; painted after "
        f"{spread(painted, lambda v: f'{v:.0f} ms')}.",
        "",
    ])  # fmt: skip


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5, help="loads per page (default 5)")
    parser.add_argument(
        "--large", type=int, default=100_000, help="larger capture size, 0: none (default 100,000)"
    )
    parser.add_argument("--no-write", action="store_true", help="print, do not write results")
    parser.add_argument("--results", type=Path, default=results_path(NAME))
    parser.add_argument("--docs", type=Path, default=DOC)
    args = parser.parse_args(argv)
    if args.runs < 1:
        parser.error("--runs must be positive")
    from playwright.sync_api import sync_playwright

    settings = {"runs": args.runs, "viewport": [1600, 1000], "frames_per_10k": FRAMES_PER_10K}
    report: dict[str, Any] = new(NAME, settings)
    report["target_ms"] = TARGET_MS
    cases = [(10_000, True), (10_000, False)] + ([(args.large, True)] if args.large else [])
    results = []
    with tempfile.TemporaryDirectory(prefix="vkscope-html-bench-") as tmp, sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, headless=True)
        version = browser.version
        for workloads, timed in cases:
            name = f"{workloads}-{'timed' if timed else 'untimed'}"
            cap = capture(make_stream(workloads, timed), Path(tmp) / f"{name}.vkscope")
            page_path = Path(tmp) / f"{name}.html"
            started = time.perf_counter()
            write_html(cap, page_path)
            write_s = time.perf_counter() - started
            open_ms = measure(browser, page_path, args.runs)
            row = {"workloads": workloads, "timed": timed, "page_bytes": page_path.stat().st_size,
                   "write_s": round(write_s, 3), "open_ms": open_ms}  # fmt: skip
            print(json.dumps(row), flush=True)
            results.append(row)
        browser.close()
    report["machine"]["chromium"] = version
    report["results"] = results
    text = render(report)
    if args.no_write:
        print(text)
        return 0
    write(report, args.results)
    write_doc(text, args.docs)
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
