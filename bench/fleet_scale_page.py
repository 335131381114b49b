"""bench/fleet_scale.py's page (docs/bench/fleet.md): what the benchmark is called and judged
against, and what its results say."""

from __future__ import annotations

from typing import Any

from bench.resultfile import DOCS_DIR, banner, median, met, not_run, provenance

NAME = "fleet_scale"
DOC = DOCS_DIR / "fleet.md"
COMMAND = "python bench/fleet_scale.py"
TARGET_DUCKDB_S = 30.0
TARGET_PEAK_GIB = 2.0
TARGET_EXPORT_RATE = 1_000_000
# The row path (a capture without stored instance columns) is reported beside the target, not
# judged by it: `render` says why.
ROW_PATH_VERDICT = "reported"
FLEET_CAPTURES_A_NIGHT = 10_000
HISTORY_NIGHTS = 30  # what a nightly trend reads: the last month


def _gib(value: float) -> str:
    return f"{value / 2**30:.2f} GiB"


def _paper(report: dict[str, Any]) -> list[str]:
    """The fleet of 10,000 captures a night, on paper, from the measured rates."""
    h = report["history"]
    cores = report.get("cores") or 2
    duck = median(r["wall_s"] for r in report["analysis"]["duckdb"])
    per_core = h["instances"] / duck / cores
    per_instance = h["bytes"]["instances"] / h["instances"]
    night = FLEET_CAPTURES_A_NIGHT * h["instances"] / h["captures"]
    window = night * HISTORY_NIGHTS
    core_hours = window / per_core / 3600
    lines = [
        f"- Measured: the analysis reads **{per_core:,.0f} instance rows per second per core** "
        f"on DuckDB ({h['instances']:,} rows in {duck:.1f} s on {cores} cores); the "
        f"instances table takes **{per_instance:.2f} bytes per instance** in Parquet (zstd).",
        f"- A fleet of {FLEET_CAPTURES_A_NIGHT:,} captures a night of "
        f"{h['instances'] // h['captures']:,} instances each exports {night / 1e6:,.0f} million "
        f"rows a night, {_gib(night * per_instance)} of Parquet; a year, "
        f"{_gib(night * per_instance * 365)}.",
        f"- The nightly trend over the last {HISTORY_NIGHTS} nights reads "
        f"{window / 1e9:,.1f} billion rows: {core_hours:,.1f} core-hours at the measured rate, "
        f"{core_hours * 60 / cores:,.0f} minutes on this {cores}-core machine, or "
        f"{max(1, round(core_hours * 4))} cores for a 15-minute gate.",
    ]
    spark = report["analysis"]["spark"]
    if spark:
        s = median(r["wall_s"] for r in spark)
        lines.append(
            f"- Spark local mode took {s:.1f} s for the same history, "
            f"{h['instances'] / s / cores:,.0f} rows per second per core: more than one "
            "machine's worth of rows is where it earns its start-up and shuffles, and spread "
            "over a cluster its rate per core is what sizes the cluster (the history's rows "
            "divided by cores times that rate)."
        )
    return lines


def _compared(what: str, same: bool | None) -> list[str]:
    return [what + ("the same tables, value for value." if same else "**different tables**."), ""]


def _finalize_lines(export: dict[str, Any]) -> list[str]:
    """What storing the instance columns costs when the capture is finalized."""
    f = export.get("finalize")
    if not f:
        return []
    n = f["instances"]
    columns = median(f["columns_cpu_s"])
    growth = f["bytes_with_columns"] - f["bytes_without_columns"]
    return [
        "### What the stored columns cost",
        "",
        f"Finalizing the capture took {f['finalize_cpu_s'] * 1e6 / n:.2f} µs of CPU per "
        f"instance, of which storing its instance columns took "
        f"{columns * 1e6 / n:.2f} µs per instance (median of {len(f['columns_cpu_s'])}: "
        f"{min(f['columns_cpu_s']) * 1e6 / n:.2f} to {max(f['columns_cpu_s']) * 1e6 / n:.2f}), "
        "paid once per capture. They grow the file by "
        f"{growth / n:.1f} bytes per instance ({f['blobs']} blobs of "
        f"{f['blob_bytes'] / n:.1f} bytes per instance, LZ4; the file, vacuumed: "
        f"{f['bytes_without_columns'] / n:.1f} bytes per instance without them, "
        f"{f['bytes_with_columns'] / n:.1f} with them).",
        "",
    ]


def render(report: dict[str, Any] | None) -> str:
    lines = [
        "# Fleet scale: trends and regressions over a history of captures",
        "",
        banner("fleet_scale.py"),
        "",
        "`bench/fleet_scale.py` generates a history of captures (every build on four devices, a",
        "regression planted on one device late in the history), writes it as a fleet dataset,",
        "and runs the trend and regression analysis over every workload identity",
        "(`vkscope trend --by build --group device`) in a fresh process per run, on DuckDB and",
        "on Spark local mode. Each run must find the planted regression and nothing else.",
        "",
        f"Targets: DuckDB under {TARGET_DUCKDB_S:.0f} s with a peak under "
        f"{TARGET_PEAK_GIB:.0f} GiB on 1,000 captures x 20,000 instances; export at least "
        f"{TARGET_EXPORT_RATE:,} instances per second per core; Spark's time reported.",
        "",
        f"Re-run: `{COMMAND}` (about 15 minutes on a 2-core machine; the numbers move with",
        "whatever else the machine runs: the load average below says how busy it was).",
        "",
        "## Results",
        "",
    ]
    if report is None:
        return "\n".join([*lines, *not_run(NAME, COMMAND), ""])
    h = report["history"]
    lines += [
        *provenance(report, NAME),
        "",
        f"History: {h['captures']:,} captures ({h['runs']} builds x {h['groups']} devices) of "
        f"{h['frames_per_capture']} frames x {h['workloads_per_frame']} workloads, "
        f"{h['instances']:,} instance rows; written in {h['write_s']:.1f} s; Parquet: instances "
        f"{_gib(h['bytes']['instances'])}, frames {_gib(h['bytes']['frames'])}, captures "
        f"{_gib(h['bytes']['captures'])}.",
        "",
        "| engine | runs | wall s, median (range) | peak memory, median | found the planted "
        "regression | target |",
        "| --- | ---: | --- | --- | --- | --- |",
    ]
    baseline = report["settings"].get("baseline")
    for engine in ("baseline", "duckdb", "spark"):
        runs = report["analysis"].get(engine)
        if not runs:
            continue
        walls = [r["wall_s"] for r in runs]
        peaks = [r["tree_peak_bytes"] or r["peak_bytes"] for r in runs]
        found = all(r["found_planted"] for r in runs)
        name = engine
        if engine == "baseline":
            name, target = f"duckdb, baseline `{baseline}`", "the commit before, for comparison"
        elif engine == "duckdb" and h["instances"] < 20_000_000:
            target = "not judged: a smaller history than the target's"
        elif engine == "duckdb":
            ok = median(walls) < TARGET_DUCKDB_S and median(peaks) < TARGET_PEAK_GIB * 2**30
            target = met(ok and found)
        else:
            target = "time reported"
        lines.append(
            f"| {name} | {len(runs)} | {median(walls):.1f} ({min(walls):.1f} to "
            f"{max(walls):.1f}) | {_gib(median(peaks))} | {'yes' if found else '**no**'} "
            f"| {target} |"
        )
    lines += [
        "",
        "Peak memory is the resident set of the process and its children (Spark's JVM), "
        "polled every 0.2 s."
        + (
            f" The baseline is commit `{baseline}`'s DuckDB analysis of the same history, in "
            "the same run, its runs interleaved with this tree's."
            if baseline
            else ""
        ),
        "",
        "## Beyond one machine",
        "",
        *_paper(report),
        "",
    ]
    export = report.get("export")
    lines += ["## Export", ""]
    if export:
        lines += [
            f"`vkscope export --parquet` of one capture of {export['instances']:,} instances "
            f"({export['frames']:,} frames of {export['workloads_per_frame']} workloads, "
            f"{export['capture_bytes'] / 2**20:.0f} MiB, written by the capture store from a "
            "synthetic layer stream), into a new dataset, in a fresh process per run. The export "
            "is one thread: instances per second of its CPU time is its rate per core.",
            "",
        ]
        measured = export.get("measured")
        if measured:
            lines += [
                "Measured apart from the history and analyses above (`--export-only`):",
                "",
                *provenance(measured, NAME),
                "",
            ]
        commit = (measured or report).get("commit")
        here = f"`{commit[:10]}`" if commit else "this tree"
        rows = [(f"{here}, stored columns", export["runs"])]
        if export.get("row_path_runs"):
            rows.insert(0, (f"{here}, row path", export["row_path_runs"]))
            lines += _compared(
                "The row path is the same capture without its stored instance columns (as a "
                "capture of an older schema, or one never finalized, is read), exported by the "
                "same tree in the same run; the two wrote ",
                export.get("same_as_row_path"),
            )
        baseline = export.get("baseline")
        if baseline and baseline.get("stored_columns"):
            name = f"baseline `{baseline['commit']}`"
            rows[:0] = [
                (f"{name}, row path", baseline["row_path_runs"]),
                (f"{name}, stored columns", baseline["runs"]),
            ]
            lines += _compared(
                "The baseline is another commit of the same capture schema, exporting the same "
                "two captures in the same run, its runs interleaved with this tree's; from both "
                "it wrote ",
                export.get("same_as_baseline") and export.get("same_as_baseline_row_path"),
            )
        elif baseline:
            rows.insert(0, (f"baseline `{baseline['commit']}`", baseline["runs"]))
            lines += _compared(
                "The baseline is an older commit's export of the same capture as that commit's "
                "schema version holds it, measured in the same run, its runs interleaved with "
                "this tree's; it wrote ",
                export.get("same_as_baseline"),
            )
        lines += [
            "| export | runs | instances per CPU second, median (range) | per wall second, "
            "median | target |",
            "| --- | ---: | --- | --- | --- |",
        ]
        for name, runs in rows:
            cpu = [e["instances"] / e["cpu_s"] for e in runs]
            wall = [e["instances"] / e["wall_s"] for e in runs]
            rate = median(cpu)
            verdict = (
                f"{ROW_PATH_VERDICT} ({met(rate >= TARGET_EXPORT_RATE)} if judged)"
                if name.endswith("row path")
                else met(rate >= TARGET_EXPORT_RATE)
            )
            lines.append(
                f"| {name} | {len(cpu)} | {rate:,.0f} ({min(cpu):,.0f} to {max(cpu):,.0f}) | "
                f"{median(wall):,.0f} | {verdict} |"
            )
        if export.get("row_path_runs"):
            lines += [
                "",
                "The target is judged on the captures this vkscope writes: every capture "
                "`vkscope run` finalizes stores its instance columns (pyarrow is one of "
                "vkscope's own dependencies), and a fleet exports each night's new captures. "
                "The row path serves what is left: a capture of an older schema (exported once: "
                "a capture already in the dataset is skipped) or one whose host was killed "
                "before it finalized it. Its rate is reported, not judged: it is bound by "
                "reading each row out of SQLite.",
            ]
        lines += ["", *_finalize_lines(export)]
    else:
        lines.append("**Not measured**: these results were taken with `--export-runs 0`.")
    lines.append("")
    return "\n".join(lines)
