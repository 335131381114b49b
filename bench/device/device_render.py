"""docs/bench/device.md from the device checks' results (bench/results/device.json): one section
per check, every number and verdict computed from the runs it holds."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from bench import samplers_cost
from bench.device import budget_check, floor_check, workload_check
from bench.device import gpu_state_check as gpu_state
from bench.frame_cost_page import app_table, method_text, verdict_lines
from bench.record_cost_page import Grid, results_table, spread_table, thread_table, verdicts
from bench.resultfile import banner, median, met, not_run, provenance, spread

NAME = "device"
ACCURACY_TARGET_PERCENT = 2.0  # `queue`, dispatches over ACCURACY_FROM_US
ACCURACY_FROM_US = 100.0
FRAME_TARGET_PERCENT = 10.0  # `timing queue` on GPU-bound frames
COMMAND = "bash bench/device/run.sh --bring-up"
TITLES = {
    "driver": "The driver, probed without the layer",
    "scenarios": "Every scenario under the layer in every mode, validation below",
    "counters": "Pipeline statistics on every queue family, validation below",
    "handover": "CPU-sampled counters through the event handover, validation below",
    "two_queue_chain": "`full` across two queues with a wait-before-signal",
    "ray_tracing": "A ray-tracing capture",
    "floor": "The timer's floor",
    "accuracy": "Timer accuracy against the application's own timestamps",
    "frame_time": "Frame time per mode",
    "frame_cost": "Short frames: what each configuration adds",
    "workload_cost": "Cost per workload at game scale, beside the floor",
    "budget": "Profiling under a cost budget",
    "record_cost": "Recording cost per call",
    "gpu_state": "The GPU's clocks and power sampled by the host (NVML)",
    "pytest": "The GPU tests of pytest on this device",
}


def render(results: Mapping[str, Any] | None) -> str:
    lines = [
        "# Checks on a real GPU",
        "",
        banner("device/checks.py"),
        "",
        "What no CI run reaches, because lavapipe has one queue and no ray tracing and its",
        "timestamps come from the CPU: `bench/device/checks.py` runs each check below against the",
        "installed package on a machine with a GPU (bench/device/run.sh brings up the Vulkan",
        "loader, the validation layer, the Python wheels and the package on a bare machine; its",
        "docstring says how to prepare them). A check that needs what the driver lacks, probed",
        'without the layer, says so instead of running. README.md, "Testing on a GPU", runs',
        "the same tests on a contributor's own machine.",
        "",
        "## Results",
        "",
    ]
    if results is None:
        where = "It runs on a machine with a GPU; bench/device/run.sh says how to prepare one."
        return "\n".join([*lines, *not_run(NAME, COMMAND), "", where, ""])
    checks: Mapping[str, Any] = results["checks"]
    lines += [
        *provenance(results, NAME),
        "- Mode: "
        + ("quick (short runs: not for publication)" if results["settings"]["quick"] else "full"),
        "",
        "| check | status | seconds |",
        "| --- | --- | ---: |",
    ]
    for name, title in TITLES.items():
        part = checks.get(name)
        seconds = part.get("seconds", "") if part else ""
        later = f" (at `{part['ran_at']['commit'][:10]}`)" if part and "ran_at" in part else ""
        lines.append(f"| {title} | {status(part)}{later} | {seconds} |")
    for name, title in TITLES.items():
        part = checks.get(name)
        lines += ["", f"## {title}", "", f"Status: {status(part)}."]
        if part and "ran_at" in part:
            ran = part["ran_at"]
            lines += [
                "",
                f"This check ran at commit `{ran['commit'][:10]}` (clean tree), {ran['date']}, "
                "on the same machine, after the others of these results.",
            ]
        if part is None or part["status"] == "not available":
            if part:
                lines += ["", "The probe without the layer: " + "; ".join(
                    f"{f}: {why}" for f, why in part["probe"].items()) + "."]  # fmt: skip
            continue
        if part["failures"]:
            lines += ["", "What failed:", ""]
            lines += [f"- {f.splitlines()[0]}" for f in part["failures"]]
        lines += ["", *SECTIONS[name](part)]
    return "\n".join([*lines, ""])


def status(part: Mapping[str, Any] | None) -> str:
    if part is None:
        return "not run in these results"
    return {
        "passed": "passed",
        "failed": "**FAILED**",
        "not available": "not available on this device",
    }[part["status"]]


def us(ms: float) -> str:
    return f"{ms * 1e3:.1f}"


def pct(v: float) -> str:
    return f"{v:+.1f}%"


def driver_section(part: Mapping[str, Any]) -> list[str]:
    p = part["probe"]
    families = ", ".join(
        f"#{f['index']}: {f['count']} x flags {f['flags']:#x}, {f['timestamp_valid_bits']}-bit "
        "timestamps"
        for f in p["queue_families"]
    )
    lacking = "; ".join(f"{k} ({v})" for k, v in p["why"].items()) or "nothing the checks use"
    skipped = part.get("skipped_without_layer", {})
    return [
        f"{p['device']}, driver {p['driver_name']} {p['driver_info']}, Vulkan {p['api_version']}.",
        f"Queue families: {families}. Lacks: {lacking}.",
        "",
        "Without the layer the workload program skipped "
        + (", ".join(f"`{s}`" for s in skipped) if skipped else "no scenario")
        + ", exactly what the probe says the driver lacks something for.",
    ]


def scenarios_section(part: Mapping[str, Any]) -> list[str]:
    lines = [
        "`vkscope-workload --all` under the layer with the timeline alone and with timing in each "
        "mode (a capture: every instance timed or explained, inside its submission's CPU window, "
        "in its queue's order), then again with the Khronos validation layer below vkscope.",
        "",
        "| mode | instances | timing status (count) | outside CPU window | out of queue order "
        "| validation messages | skipped |",
        "| --- | ---: | --- | ---: | ---: | ---: | --- |",
    ]
    for mode in ("timeline", "none", "queue", "full"):
        if mode not in part:
            continue
        m = part[mode]
        a = m["timing"]
        counts = "; ".join(f"{k} {n}" for k, n in a["status"].items()) or "-"
        skipped = ", ".join(m.get("skipped", {})) or "none"
        lines.append(
            f"| {mode} | {a['instances']} | {counts} | {a['outside_cpu_window']} "
            f"| {a['out_of_queue_order']} | {m['validation']['messages']} | {skipped} |"
        )
    clock = next((part[m]["timing"]["clock"] for m in ("queue", "full") if m in part), None)
    if clock:
        lines += ["", f"Clock: {clock.get('domain')}, calibration deviation "
                  f"{clock.get('max_deviation_ns')} ns."]  # fmt: skip
    return lines


def two_queue_section(part: Mapping[str, Any]) -> list[str]:
    lines = [
        f"The `multi_queue` scenario, {part['frames']} frames with `full`: the consumer's queue "
        "waits for a value its producer is submitted after, so it is left out of the cross-queue "
        "chain (or it would deadlock) and says so; the producer's queue is fully serialized.",
        "",
        "| queue | timing / serialization / reason (count) |",
        "| --- | --- |",
    ]
    for q, counts in part["per_queue"].items():
        lines.append(f"| {q} | " + "; ".join(f"{k} {n}" for k, n in counts.items()) + " |")
    a = part["timing"]
    lines += ["", f"Outside the CPU window: {a['outside_cpu_window']}; out of queue order: "
              f"{a['out_of_queue_order']}; validation below vkscope: "
              f"{part['validation']['messages']} messages."]  # fmt: skip
    return lines


def ray_tracing_section(part: Mapping[str, Any]) -> list[str]:
    a = part["timing"]
    kinds = sorted({f"{w[1]}" for w in part["workloads"]})
    return [
        f"{len(part['workloads'])} instances over 2 frames ({', '.join(kinds)}); timing: "
        + "; ".join(f"{k} {n}" for k, n in a["status"].items())
        + f"; outside the CPU window: {a['outside_cpu_window']}; validation below vkscope: "
        f"{part['validation']['messages']} messages.",
    ]


def accuracy_section(part: Mapping[str, Any]) -> list[str]:
    lines = [
        "The compute scenario's three ratio dispatches (16, 64 and 256 groups; "
        "`--compute-iterations` sets their loop length, calibrated here to make the 16-group "
        "dispatch last about the target) timed by vkscope in `queue` mode against the same "
        "dispatches timed alone by the application's own timestamps, without the layer. "
        f"Medians over {part['frames']} frames (the first two left out of both); vkscope's "
        f"fastest to slowest frame in brackets. Target: within {ACCURACY_TARGET_PERCENT:.0f}% "
        f"for dispatches over {ACCURACY_FROM_US:.0f} µs, on the median.",
        "",
        "| iterations | timed alone, µs | vkscope `queue`, µs | difference | target |",
        "| ---: | --- | --- | --- | --- |",
    ]
    added_us: list[float] = []
    judged: list[tuple[float, bool]] = []
    for point in part["sweep"]:
        alone = [median(v) for v in point["app_alone_ms"]]
        ours = [median(v) for v in point["vkscope_queue_ms"]]
        errors = [(o - a) / a * 100 for o, a in zip(ours, alone, strict=True)]
        added_us += [(o - a) * 1e3 for o, a in zip(ours, alone, strict=True)]
        over = [
            (a * 1e3, abs(e) <= ACCURACY_TARGET_PERCENT)
            for a, e in zip(alone, errors, strict=True)
            if a * 1e3 > ACCURACY_FROM_US
        ]
        judged += over
        verdict = met(all(ok for _, ok in over)) if over else f"(under {ACCURACY_FROM_US:.0f} µs)"
        ours_cells = ", ".join(
            f"{us(median(v))} [{us(min(v))} to {us(max(v))}]" for v in point["vkscope_queue_ms"]
        )
        lines.append(
            f"| {point['iterations']:,} | {', '.join(us(a) for a in alone)} | {ours_cells} "
            f"| {', '.join(pct(e) for e in errors)} | {verdict} |"
        )
    lines.append("")
    if added_us:
        lines.append(
            f"vkscope's time minus the time alone, per dispatch: {min(added_us):+.1f} to "
            f"{max(added_us):+.1f} µs (medians)."
        )
    if judged:
        missed = [d for d, ok in judged if not ok]
        lines.append(
            f"Target: {met(not missed)} for the {len(judged)} dispatches over "
            f"{ACCURACY_FROM_US:.0f} µs"
            + (
                f"; {len(missed)} of them, lasting {min(missed):.0f} to {max(missed):.0f} µs, "
                "differ by more."
                if missed
                else "."
            )
        )
    else:
        lines.append(
            f"No dispatch lasted over {ACCURACY_FROM_US:.0f} µs: the target is not judged."
        )
    return lines


def frame_table(block: Mapping[str, Any]) -> tuple[list[str], dict[str, list[float]]]:
    samples: Mapping[str, list[float]] = block["samples_ms"]
    base = samples["no layer"]
    added = {}
    rows = ["| configuration | ms per frame | added |", "| --- | --- | --- |"]
    for key, runs in samples.items():
        cell = spread(runs, lambda v: f"{v:.2f}")
        if key == "no layer":
            rows.append(f"| {key} | {cell} | |")
            continue
        added[key] = [(a - b) / b * 100 for a, b in zip(runs, base, strict=True)]
        rows.append(f"| {key} | {cell} | {spread(added[key], pct)} |")
    return rows, added


def variation(samples: Mapping[str, Sequence[float]]) -> float:
    """The largest range of one configuration's runs, as a percentage of their median."""
    return max((max(v) - min(v)) / median(v) * 100 for v in samples.values())


def frame_time_section(part: Mapping[str, Any]) -> list[str]:
    lines = []
    heavy = part.get("gpu_bound")
    if heavy:
        rows, added = frame_table(heavy)
        base = heavy["samples_ms"]["no layer"]
        noise = (max(base) - min(base)) / median(base) * 100
        beyond = [k for k, v in added.items() if abs(median(v)) > noise]
        queue = added["timing queue"]
        lines += [
            f"GPU-bound frames: the compute scenario with `--compute-iterations "
            f"{heavy['iterations']:,}`, {heavy['long']} frames against {heavy['short']}, "
            f"{part['runs']} interleaved runs; *added* compares each run with the run without the "
            "layer of the same round.",
            "",
            *rows,
            "",
            f"The runs without the layer span {min(base):.2f} to {max(base):.2f} ms ({noise:.1f}% "
            "of their median); "
            + (
                f"added time beyond that: {', '.join(beyond)}."
                if beyond
                else "no configuration's median added time is beyond that."
            )
            + f" Target, `timing queue` under +{FRAME_TARGET_PERCENT:.0f}%: "
            f"{met(median(queue) < FRAME_TARGET_PERCENT)} ({spread(queue, pct)}).",
            "",
        ]
    every = part.get("all")
    if every:
        rows, _ = frame_table(every)
        lines += [
            f"Frame time of `--all`, {every['long']} frames against {every['short']}: every "
            "scenario's tiny submissions, each waited for.",
            "",
            *rows,
            "",
            f"Runs of one configuration vary by up to {variation(every['samples_ms']):.0f}% of "
            "their median here.",
        ]
    return lines


def frame_cost_section(part: Mapping[str, Any]) -> list[str]:
    return [
        "bench/frame_cost.py's measurement (docs/bench/frame-cost.md) with the workload program's "
        f"small_frame scenario, whose frames end at {part['frame_end']}, on shared cores. "
        f"{method_text(part)} {len(part['samples_ms']['none'])} interleaved rounds; *added* "
        "compares each run with the run without the layer of the same round. The targets are "
        "set for lavapipe's frames of about a millisecond; here the same lines say how a frame "
        "of a few tiny workloads on a real GPU compares with them.",
        "",
        *app_table(part["samples_ms"], part.get("cpu_ms")),
        "",
        *verdict_lines(part["samples_ms"], part.get("verdict_ms")),
    ]


def record_cost_section(part: Mapping[str, Any]) -> list[str]:
    grid = Grid.of(part["results"])
    s = part["settings"]
    h = part["harness_device"]
    return [
        f"bench/record_cost.py's harness on {h['device']} ({h['driver']} {h['driver_info']}), "
        f"{s['calls']:,} calls per thread, median of {s['runs']} process(es); ns per call, "
        "*added* over the stack without vkscope.",
        "",
        *results_table(grid),
        "",
        *thread_table(grid),
        "",
        *verdicts(grid),
        "",
        *spread_table(grid),
    ]


def pytest_section(part: Mapping[str, Any]) -> list[str]:
    c = part["counts"]
    lines = [
        f"`pytest -m vulkan` over {len(part['files'])} test files: {c['passed']} passed, "
        f"{c['failed']} failed, {c['skipped']} skipped."
    ]
    for label, items in (("Failed", part["failed"]), ("Skipped", part["skipped"])):
        if items:
            lines += ["", f"{label}:", "", *(f"- {i.splitlines()[0]}" for i in items)]
    return lines


def counters_section(part: Mapping[str, Any]) -> list[str]:
    lines = []
    for label, run in part.items():
        if not isinstance(run, Mapping) or "families" not in run:
            continue
        lines += [f"{label}:", "", "| queue family | counts | reason |", "| --- | --- | --- |"]
        for family, f in run["families"].items():
            lines.append(f"| {family} | {', '.join(f['names']) or '-'} | {f['reason'] or ''} |")
        lines += ["", "| queue | instances |", "| --- | --- |"]
        for queue, counts in run["per_queue"].items():
            lines.append(f"| {queue} | " + ", ".join(f"{k}: {n}" for k, n in counts.items()) + " |")
        v = run["validation"]
        lines += ["", f"Validation below vkscope: {v['messages']} messages.", ""]
    return lines


def handover_section(part: Mapping[str, Any]) -> list[str]:
    lines = ["| run | sampling | counters | instances | gaps between workloads (µs) |",
             "| --- | --- | --- | --- | --- |"]  # fmt: skip
    for label in ("handover", "handover, pause on"):
        run = part.get(label)
        if not run:
            continue
        g = run["gaps_us"]
        gaps = "none"
        if g["count"]:
            gaps = f"{g['count']}: min {g['min']:.1f}, median {g['median']:.1f}"
        instances = ", ".join(f"{k}: {n}" for k, n in run["instances"].items())
        lines.append(f"| {label} | {', '.join(run['sampling'])} | {', '.join(run['counters'])} "
                     f"| {instances} | {gaps} |")  # fmt: skip
    v = part.get("validation")
    if v:
        lines += ["", f"Validation below vkscope: {v['messages']} messages."]
    for program, cost in (part.get("cost") or {}).items():
        lines += ["", f"Cost, {program}:", "", *samplers_cost.program_lines(program, cost)]
    return lines


SECTIONS: dict[str, Callable[[Mapping[str, Any]], list[str]]] = {
    "driver": driver_section,
    "scenarios": scenarios_section,
    "counters": counters_section,
    "handover": handover_section,
    "two_queue_chain": two_queue_section,
    "ray_tracing": ray_tracing_section,
    "floor": floor_check.section,
    "accuracy": accuracy_section,
    "frame_time": frame_time_section,
    "frame_cost": frame_cost_section,
    "workload_cost": workload_check.section,
    "budget": budget_check.section,
    "record_cost": record_cost_section,
    "gpu_state": gpu_state.render,
    "pytest": pytest_section,
}
