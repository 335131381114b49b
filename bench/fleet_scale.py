#!/usr/bin/env python3
"""Measure the fleet analyses at scale: a generated history of 1,000 captures x 20,000
workload instances (20 million rows), the trend and regression analysis over every identity on
DuckDB and on Spark local mode, and what that says for a fleet of 10,000 captures a night.

  history  generated once per run of this script (fleet/generate.py: 250 builds on 4 devices,
           100 frames of 200 workloads per capture, a regression planted at build 200 on one
           device), written through the dataset writer: its time and its bytes per instance
  duckdb   `vkscope trend DATASET --by build --group device` in a fresh process (DuckDB, both
           cores), which reports its own peak resident set size (VmHWM) and wall time
  spark    the same with --engine spark (local[2]): wall time and the peak of the process tree
           (Python and Spark's JVM)
  baseline with --baseline REV, the DuckDB analysis of that commit too, on the same history,
           its runs interleaved with this tree's (what a change to the analyses gained)
  export   `vkscope export --parquet` of a capture made by the capture store: instances per
           second per core; with --export-baseline REV, the export of that commit too, its runs
           interleaved with this tree's

Each analysis run checks that it found the planted regression (and nothing else) before its
time counts. Runs of the two engines are interleaved. Writes bench/results/fleet_scale.json and
docs/bench/fleet.md (`render`). Targets: DuckDB under 30 s with a peak under 2 GiB; export at
least 1,000,000 instances per second per core.

  python bench/fleet_scale.py                 # the whole measurement (about 15 minutes here)
  python bench/fleet_scale.py --captures 40   # a quick look at a smaller history
  python bench/fleet_scale.py --baseline bb403a1   # and that commit's DuckDB analysis beside
  python bench/fleet_scale.py --export-only --export-baseline 3835fcc
                                              # the export alone, beside an older commit's; the
                                              # results file keeps its history and analyses
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from bench.fleet_scale_page import DOC, NAME, render
from bench.resultfile import (
    load,
    new,
    publish,
    results_path,
)
from bench.this_tree import SRC

REPO = Path(__file__).resolve().parent.parent


# The synthetic fleet's devices: each build is captured on every one of them.
DEVICES = ("gpu-a", "gpu-b", "gpu-c", "gpu-d")

# The analysis, in a process of its own: prints its wall time, its own peak RSS and the changes.
_ANALYSIS = """
import json, sys, time, resource
sys.path.insert(0, sys.argv[1])
from vkscope.fleet.analyses import Grouping, Params
from vkscope.fleet.engines import open_engine
from vkscope.fleet.layout import Dataset
from vkscope.fleet.trend import resolve_key, run_trend
start = time.perf_counter()
engine = open_engine(sys.argv[3], Dataset(sys.argv[2]))
grouping = Grouping(resolve_key(engine, "build"), (resolve_key(engine, "device"),))
result = run_trend(engine, grouping, Params())
changes = [(r["identity"], r["g0"], r["order_value"], r["direction"], r["status"])
           for r in result.changes.to_pylist()]
engine.close()
wall = time.perf_counter() - start
peak = int(open("/proc/self/status").read().split("VmHWM:")[1].split()[0]) * 1024
print(json.dumps({"wall_s": wall, "peak_bytes": peak, "changes": changes}))
"""


def _tree_peak(pid: int, stop: threading.Event, out: list[int]) -> None:
    """Polls the resident set of `pid` and its descendants (Spark's JVM) every 0.2 s."""
    peak = 0
    while not stop.wait(0.2):
        total = 0
        for proc in Path("/proc").iterdir():
            if not proc.name.isdigit():
                continue
            try:
                status = (proc / "status").read_text()
            except OSError:
                continue
            ppid = int(status.split("PPid:")[1].split()[0])
            mine = int(proc.name) == pid or ppid == pid or _descends(ppid, pid)
            if mine and "VmRSS:" in status:
                total += int(status.split("VmRSS:")[1].split()[0]) * 1024
        peak = max(peak, total)
    out.append(peak)


def _descends(ppid: int, root: int) -> bool:
    for _ in range(8):
        if ppid in (0, 1):
            return False
        if ppid == root:
            return True
        try:
            ppid = int(Path(f"/proc/{ppid}/status").read_text().split("PPid:")[1].split()[0])
        except OSError:
            return False
    return False


def analyse(dataset: Path, engine: str, src: Path = SRC) -> dict[str, Any]:
    proc = subprocess.Popen(
        [sys.executable, "-c", _ANALYSIS, str(src), str(dataset), engine],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    stop, peaks = threading.Event(), []  # type: ignore[var-annotated]
    watcher = threading.Thread(target=_tree_peak, args=(proc.pid, stop, peaks))
    watcher.start()
    out, err = proc.communicate()
    stop.set()
    watcher.join()
    if proc.returncode != 0:
        raise SystemExit(f"{engine} analysis failed:\n{err[-3000:]}")
    run: dict[str, Any] = json.loads(out.strip().splitlines()[-1])
    run["tree_peak_bytes"] = peaks[0] if peaks else None
    return run


def generate(dataset: Path, builds: int, frames: int, workloads: int) -> dict[str, Any]:
    from vkscope.fleet import generate as gen
    from vkscope.fleet.layout import Dataset

    planted = gen.Regression(build=max(2, builds * 4 // 5), device=DEVICES[1], identities=(7,))
    history = gen.History(
        builds=builds, devices=DEVICES, frames=frames, workloads=workloads, regressions=(planted,)
    )
    start = time.perf_counter()
    gen.write(Dataset(dataset), history)
    seconds = time.perf_counter() - start
    ds = Dataset(dataset)
    return {
        "captures": history.captures,
        "instances": history.instances,
        "frames_per_capture": frames,
        "workloads_per_frame": workloads,
        "identities": workloads,
        "groups": len(DEVICES),
        "runs": builds,
        "write_s": seconds,
        "bytes": {t: ds.bytes_on_disk(t) for t in ("captures", "frames", "instances")},
        "planted": [
            gen.identity_text(*gen.workload(planted.identities[0])),
            planted.device,
            str(planted.build),
        ],
    }


# The export, in a process of its own: wall and CPU time (one core: the export is one thread).
_EXPORT = """
import json, sys, time
sys.path.insert(0, sys.argv[1])
from pathlib import Path
from vkscope.fleet.export import export
start, cpu = time.perf_counter(), time.process_time()
result = export(Path(sys.argv[2]), [Path(sys.argv[3])])
wall, cpu = time.perf_counter() - start, time.process_time() - cpu
print(json.dumps({"wall_s": wall, "cpu_s": cpu,
                  "instances": result.instances, "written": len(result.written)}))
"""


def export_capture(path: Path, frames: int, per_frame: int) -> dict[str, Any]:
    """A capture written by the capture store from a synthetic layer stream (`per_frame`
    workloads recorded once and submitted every frame, 64 label scopes, three types), its
    instances then given GPU times with SQL, as the host fills them from timing annexes, and
    its instance columns stored again (as finalize stores them, instance_columns.py). Returns
    what finalizing cost: its CPU time, that of storing the columns alone, and the file's
    growth."""
    import sqlite3

    from vkscope.capture import store_instance_columns
    from vkscope.capture.read.column_store import restore_instance_columns
    from vkscope.capture.write.client import Stream
    from vkscope.capture.write.store import CaptureStore, ingest_stream

    s = Stream()
    s.hello(process="bench", pid=1)
    s.device(1, "Bench GPU")
    for scope in range(1, 65):
        s.labels(scope, ["Frame", f"pass {scope}"])
    kinds = ("renderpass", "dispatch", "buffer_transfer")
    for tag in range(1, per_frame + 1):
        s.workload(tag, kinds[(tag // 64) % len(kinds)])
    for frame in range(frames):
        for first in range(1, per_frame + 1, 64):
            last = min(first + 64, per_frame + 1)
            s.submit([(tag, tag % 64 + 1) for tag in range(first, last)], frame=frame)
        s.frame(frame)
    s.goodbye()
    data = s.data()
    store = CaptureStore(path, finishing=store_instance_columns)
    ingest_stream(store, "bench", (data[i : i + (1 << 20)] for i in range(0, len(data), 1 << 20)))
    cpu = time.process_time()
    store.finalize()
    finalize_cpu = time.process_time() - cpu
    with sqlite3.connect(path) as db:
        db.execute(
            "UPDATE workload_instances SET timing = 'ok', gpu_begin_ns = id * 10000, "
            "gpu_end_ns = id * 10000 + 5000 + abs(random() % 100)"
        )
    columns_cpu = []
    for _ in range(3):
        cpu = time.process_time()
        stored = restore_instance_columns(path)
        assert stored is not None, "pyarrow: the fleet extra"
        columns_cpu.append(time.process_time() - cpu)
    without = path.with_name("without-columns.vkscope")
    shutil.copy(path, without)
    with sqlite3.connect(path, isolation_level=None) as db:
        db.execute("VACUUM")
    with sqlite3.connect(without, isolation_level=None) as db:
        db.execute("DELETE FROM instance_columns")
        db.execute("DELETE FROM meta WHERE key = 'instance_columns'")
        db.execute("VACUUM")
    return {
        "instances": stored.rows,
        "finalize_cpu_s": finalize_cpu,
        "columns_cpu_s": columns_cpu,
        "blob_bytes": stored.bytes,
        "blobs": stored.blobs,
        "bytes_with_columns": path.stat().st_size,
        "bytes_without_columns": without.stat().st_size,
    }


def short_commit(rev: str) -> str:
    """The commit `rev` names, abbreviated: a branch moves, the results name what was measured."""
    out = subprocess.run(
        ["git", "-C", str(REPO), "rev-parse", "--short=7", f"{rev}^{{commit}}"],
        capture_output=True, text=True, check=True,
    )  # fmt: skip
    return out.stdout.strip()


def baseline_tree(rev: str, tmp: Path) -> tuple[Path, int]:
    """The src/ of commit `rev`, with its generated protocol module, to measure beside this
    tree's; and the capture schema version it reads."""
    tree = tmp / f"baseline-{rev}"
    tree.mkdir()
    archive = subprocess.run(
        ["git", "-C", str(REPO), "archive", rev, "src", "generator"], capture_output=True,
        check=True,
    )  # fmt: skip
    subprocess.run(["tar", "-x", "-C", str(tree)], input=archive.stdout, check=True)
    subprocess.run(
        [sys.executable, "-m", "vkscope_codegen.protocol_gen", "--protocol",
         str(tree / "src/vkscope/protocol.toml"), "--python",
         str(tree / "src/vkscope/protocol_gen.py")],
        env={**os.environ, "PYTHONPATH": str(tree / "generator")}, check=True,
    )  # fmt: skip
    found = re.search(
        r"^SCHEMA_VERSION: Final = (\d+)$",
        (tree / "src/vkscope/capture/schema.py").read_text(), re.MULTILINE,
    )  # fmt: skip
    assert found, "the baseline's schema version"
    return tree / "src", int(found[1])


def as_version(capture: Path, copy: Path, version: int) -> Path:
    """The capture as a vkscope of schema `version` reads it: no stored columns (what schema 10
    added) and, where `version` is older than this tree's, that version in its header. For the
    export of an older commit, and for this tree's row path."""
    import sqlite3

    from vkscope.capture.schema import SCHEMA_VERSION

    shutil.copy(capture, copy)
    with sqlite3.connect(copy, isolation_level=None) as db:
        db.execute("DELETE FROM instance_columns")
        db.execute("DELETE FROM meta WHERE key = 'instance_columns'")
        if version < SCHEMA_VERSION:
            db.execute(f"PRAGMA user_version = {version}")
            db.execute("UPDATE meta SET value = ? WHERE key = 'schema_version'", (version,))
        db.execute("VACUUM")
    return copy


def measure_export(
    tmp: Path, runs: int, frames: int, per_frame: int, baseline: str | None = None
) -> dict[str, Any]:
    """The export of one capture by this tree from its stored columns and from its rows (the
    same capture without them), and by `baseline`, runs interleaved. A baseline of this tree's
    schema version exports both too; an older one, the capture as its version holds it."""
    from vkscope.capture.schema import SCHEMA_VERSION

    capture = tmp / "export.vkscope"
    finalize = export_capture(capture, frames, per_frame)
    instances = finalize["instances"]
    rows_capture = as_version(capture, tmp / "rows.vkscope", SCHEMA_VERSION)
    trees = {"this tree": (SRC, capture), "this tree, row path": (SRC, rows_capture)}
    same_schema = False
    if baseline:
        baseline = short_commit(baseline)
        src, version = baseline_tree(baseline, tmp)
        same_schema = version == SCHEMA_VERSION
        old = as_version(capture, tmp / f"schema-{version}.vkscope", version)
        if same_schema:
            trees = {f"baseline {baseline}": (src, capture),
                     f"baseline {baseline}, row path": (src, old), **trees}  # fmt: skip
        else:
            trees = {f"baseline {baseline}": (src, old), **trees}
    done: dict[str, list[dict[str, Any]]] = {name: [] for name in trees}
    for n in range(runs):
        for name, (src, path) in trees.items():  # interleaved: each round runs every tree once
            dataset = tmp / f"export-{len(done[name])}-{name.replace(' ', '-')}"
            out = subprocess.run(
                [sys.executable, "-c", _EXPORT, str(src), str(dataset), str(path)],
                capture_output=True, text=True, check=True,
            )  # fmt: skip
            run = json.loads(out.stdout.strip().splitlines()[-1])
            assert run["instances"] == instances and run["written"] == 1, run
            done[name].append(run)
            print("export", name, n, json.dumps(run), flush=True)
    import pyarrow.parquet as pq

    def table(name: str, t: str) -> Any:
        found = pq.read_table(next((tmp / f"export-0-{name.replace(' ', '-')}" / t).glob("*/*")))
        # What differs by design: the file's name and its schema version.
        return found.drop_columns(
            [c for c in ("source", "schema_version") if c in found.schema.names]
        )

    same = {
        other: all(table(other, t).equals(table("this tree", t))
                   for t in ("captures", "frames", "instances"))
        for other in trees if other != "this tree"
    }  # fmt: skip
    return {
        "instances": instances,
        "frames": frames,
        "workloads_per_frame": per_frame,
        "capture_bytes": capture.stat().st_size,
        "finalize": finalize,
        "runs": done["this tree"],
        "row_path_runs": done["this tree, row path"],
        "same_as_row_path": same["this tree, row path"],
        "same_as_baseline": same.get(f"baseline {baseline}"),
        "same_as_baseline_row_path": same.get(f"baseline {baseline}, row path"),
        "baseline": (
            {
                "commit": baseline,
                "stored_columns": same_schema,  # whether "runs" read its stored columns
                "runs": done[f"baseline {baseline}"],
                "row_path_runs": done.get(f"baseline {baseline}, row path"),
            }
            if baseline
            else None
        ),
    }


def check(run: dict[str, Any], planted: list[str]) -> bool:
    found = [c for c in run["changes"] if c[3] == "slower" and c[4] in ("held", "new")]
    return [list(c[:3]) for c in found] == [planted]


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--captures", type=int, default=1000, help="a multiple of 4 (1000)")
    parser.add_argument("--frames", type=int, default=100)
    parser.add_argument("--workloads", type=int, default=200, help="per frame (200)")
    parser.add_argument("--runs", type=int, default=3, help="runs of each engine (3)")
    parser.add_argument("--spark-runs", type=int, default=1, help="runs of Spark (1)")
    parser.add_argument("--keep", type=Path, default=None, help="keep the dataset here")
    parser.add_argument(
        "--baseline", metavar="REV", default=None,
        help="also run the DuckDB analysis of this commit, interleaved with this tree's",
    )  # fmt: skip
    parser.add_argument("--export-runs", type=int, default=3, help="runs of the export (3)")
    parser.add_argument(
        "--export-frames", type=int, default=1000, help="frames of 200 in the export's capture"
    )
    parser.add_argument(
        "--export-baseline", metavar="REV", default=None,
        help="also measure the export of this commit, interleaved with this tree's",
    )  # fmt: skip
    parser.add_argument(
        "--export-only", action="store_true",
        help="measure the export alone; the results file keeps its history and analyses",
    )  # fmt: skip
    args = parser.parse_args(argv)
    if args.export_only:
        return export_only(args)
    builds = max(1, args.captures // len(DEVICES))
    settings = {
        "captures": builds * len(DEVICES),
        "frames": args.frames,
        "workloads": args.workloads,
        "runs": args.runs,
        "spark_runs": args.spark_runs,
        "export_runs": args.export_runs,
        "baseline": args.baseline,
    }
    report = new(NAME, settings)
    report["cores"] = os.cpu_count()
    with tempfile.TemporaryDirectory(prefix="vkscope-fleet-") as tmp:
        dataset = args.keep or Path(tmp) / "dataset"
        if args.keep is not None and dataset.exists():
            shutil.rmtree(dataset)
        print(f"generating {settings['captures']} captures into {dataset} ...", flush=True)
        history = generate(dataset, builds, args.frames, args.workloads)
        report["history"] = history
        runs: dict[str, list[dict[str, Any]]] = {"duckdb": [], "spark": []}
        trees = [("duckdb", SRC, args.runs), ("spark", SRC, args.spark_runs)]
        if args.baseline:
            old, _ = baseline_tree(args.baseline, Path(tmp))
            trees.insert(0, ("baseline", old, args.runs))
            runs["baseline"] = []
        for n in range(max(args.runs, args.spark_runs)):
            for name, src, count in trees:  # interleaved: each round runs each once
                if n >= count:
                    continue
                run = analyse(dataset, "duckdb" if name == "baseline" else name, src)
                run["found_planted"] = check(run, history["planted"])
                del run["changes"]
                runs[name].append(run)
                print(name, json.dumps(run), flush=True)
        report["analysis"] = runs
        if args.export_runs:
            report["export"] = measure_export(
                Path(tmp), args.export_runs, args.export_frames, 200, args.export_baseline
            )
    publish(report, render, results_path(NAME), DOC)
    return 0


def export_only(args: argparse.Namespace) -> int:
    """The export measured alone, into the results file's export part, which then says where
    and when it was measured (the rest of the file keeps its own)."""
    report = load(NAME)
    if report is None:
        raise SystemExit(f"{results_path(NAME)}: no results to add the export to; run it whole")
    head = new(NAME, {"export_runs": args.export_runs, "export_frames": args.export_frames})
    with tempfile.TemporaryDirectory(prefix="vkscope-fleet-") as tmp:
        export = measure_export(
            Path(tmp), args.export_runs, args.export_frames, 200, args.export_baseline
        )
    export["measured"] = {k: head[k] for k in ("date", "commit", "clean", "changed", "machine")}
    report["export"] = export
    report["settings"]["export_runs"] = args.export_runs
    publish(report, render, results_path(NAME), DOC)
    return 0


# -- the page ------------------------------------------------------------------------------------


if __name__ == "__main__":
    sys.exit(main())
