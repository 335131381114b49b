#!/usr/bin/env python3
"""Regenerate every table under docs/bench/ from the committed results in bench/results/.

  python bench/tables.py           rewrite each page from its results file
  python bench/tables.py --check   change nothing; exit 1 naming each page that differs

Each benchmark module names its results file (NAME), its page (DOC) and renders the page with
`render(results)`, the same function the benchmark calls after a run, so a page always says what
its results file holds. A missing results file gives a page that says so ("not re-run yet").
"""

from __future__ import annotations

import argparse
import difflib
import importlib.util
import sys
from collections.abc import Sequence
from pathlib import Path
from types import ModuleType

BENCH = Path(__file__).resolve().parent

from bench.resultfile import load  # noqa: E402

# Every benchmark with a page under docs/bench/, by its module's path under bench/.
MODULES = (
    "wire_volume.py",
    "record_cost.py",
    "timing_cost.py",
    "frame_cost.py",
    "workload_cost.py",
    "budget.py",
    "capture_cpu.py",
    "counters_cost.py",
    "samplers_cost.py",
    "performance_query_cost.py",
    "ingest_rate.py",
    "html_open_time.py",
    "report_memory.py",
    "report_summary.py",
    "diff_memory.py",
    "fleet_scale.py",
    "device/checks.py",
)


def module(path: str) -> ModuleType:
    name = "bench_" + path.removesuffix(".py").replace("/", "_")
    if name in sys.modules:
        return sys.modules[name]
    spec = importlib.util.spec_from_file_location(name, BENCH / path)
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    sys.modules[name] = mod
    spec.loader.exec_module(mod)
    return mod


def pages() -> dict[Path, str]:
    """Every page and what its results file gives for it."""
    out: dict[Path, str] = {}
    for path in MODULES:
        mod = module(path)
        out[Path(mod.DOC)] = mod.render(load(mod.NAME))
    return out


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--check", action="store_true", help="compare only; exit 1 on a change")
    args = parser.parse_args(argv)
    stale = 0
    for doc, text in pages().items():
        old = doc.read_text() if doc.exists() else ""
        if old == text:
            continue
        stale += 1
        rel = doc.relative_to(BENCH.parent)
        if args.check:
            diff = difflib.unified_diff(
                old.splitlines(), text.splitlines(), f"{rel} (committed)", f"{rel} (generated)",
                lineterm="", n=1,
            )  # fmt: skip
            print("\n".join(diff))
        else:
            doc.parent.mkdir(parents=True, exist_ok=True)
            doc.write_text(text)
            print(f"wrote {rel}")
    if args.check and stale:
        print(f"{stale} page(s) under docs/bench/ differ from their results: "
              "run `python bench/tables.py`", file=sys.stderr)  # fmt: skip
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
