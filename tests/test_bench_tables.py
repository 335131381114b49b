"""Every page under docs/bench/ is what its committed results file gives (bench/tables.py), and
the verdicts in it are computed from the results, not written into the renderer."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def bench_python(code: str) -> str:
    """Runs `code` with bench/ importable, in a process of its own (the benchmark modules put
    bench/ and the source tree on sys.path, which this session's imports must not see)."""
    res = subprocess.run(
        [sys.executable, "-c", f"import sys; sys.path.insert(0, {str(REPO / 'bench')!r})\n{code}"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert res.returncode == 0, res.stdout + res.stderr
    return res.stdout


def test_every_page_under_docs_bench_is_what_its_results_give() -> None:
    res = subprocess.run(
        [sys.executable, str(REPO / "bench" / "tables.py"), "--check"],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert res.returncode == 0, (
        "a page under docs/bench/ differs from what bench/results/ gives; "
        f"run `python bench/tables.py`:\n{res.stdout}{res.stderr}"
    )


def test_every_benchmark_page_is_listed() -> None:
    pages = json.loads(
        bench_python("import json, tables\nprint(json.dumps([str(p) for p in tables.pages()]))")
    )
    assert sorted(Path(p).name for p in pages) == sorted(
        p.name for p in (REPO / "docs" / "bench").glob("*.md")
    )
    results = {p.stem for p in (REPO / "bench" / "results").glob("*.json")}
    names = set(
        json.loads(
            bench_python(
                "import json, tables\nprint(json.dumps([tables.module(m).NAME "
                "for m in tables.MODULES]))"
            )
        )
    )
    assert results <= names, f"results files no page is generated from: {results - names}"


def grid_results(features_off_ns: float, thread_ratio: float) -> dict[str, object]:
    """record_cost results whose `features off` stack adds `features_off_ns` per call."""
    entries = []
    for config, added in (("none", 0.0), ("direct", features_off_ns), ("wrapped", 0.7),
                          ("timeline", 1.0)):  # fmt: skip
        for command in ("vkCmdDraw", "vkCmdDispatch"):
            for threads in (1, 2):
                base = 1.7 * (thread_ratio if threads == 2 else 1.0)
                jitter = (0.0, 0.0, 0.0) if config == "none" else (-0.01, 0.0, 0.02)
                runs = [base + added + d for d in jitter]
                entries.append({"config": config, "command": command, "threads": threads,
                                "samples_ns_per_call": runs})  # fmt: skip
    return {"results": entries}


def verdict_lines(results: dict[str, object]) -> list[str]:
    encoded = json.dumps(json.dumps(results["results"]))
    out = bench_python(
        "import json, record_cost_page\n"
        f"grid = record_cost_page.Grid.of(json.loads({encoded}))\n"
        "print('\\n'.join(record_cost_page.verdicts(grid)))"
    )
    return out.splitlines()


def test_record_cost_verdicts_follow_the_medians_of_the_runs() -> None:
    good = verdict_lines(grid_results(0.0, 1.0))
    assert [line.split("**")[1] for line in good] == ["met", "met", "met"]
    assert "+0.00 (runs -0.01 to +0.02) ns/call" in good[0]
    bad = verdict_lines(grid_results(4.0, 1.25))
    # 4 ns added against a 3 ns target, and two threads 25% slower per call than one.
    assert [line.split("**")[1] for line in bad] == ["missed", "missed", "met"]
    assert "ratio 1.250" in bad[1]


def frame_cost_verdicts(
    run_ms: list[float], run_queue_ms: list[float], none_ms: list[float] | None = None
) -> list[str]:
    none_ms = none_ms or [1.0, 1.1, 0.9]
    samples = {
        "none": none_ms,
        "off": none_ms,
        "run": run_ms,
        "run_queue": run_queue_ms,
    }
    out = bench_python(
        "import json, frame_cost_page\n"
        f"print('\\n'.join(frame_cost_page.verdict_lines(json.loads({json.dumps(json.dumps(samples))}))))"
    )
    return out.splitlines()


def test_frame_cost_verdicts_follow_each_round_against_its_own_run_without_the_layer() -> None:
    # Each round's added time is against the same round's run without the layer: +2% and +8%.
    good = frame_cost_verdicts([1.02, 1.122, 0.918], [1.08, 1.188, 0.972])
    assert [line.split("**")[1] for line in good] == ["met", "met"]
    assert "(+8.0%;" in good[0] and "(+2.0%;" in good[1]
    assert "3 rounds are too few for a 95% interval" in good[0]
    # Medians of +4% and +12%, one round of each within its target.
    bad = frame_cost_verdicts([1.04, 1.1, 0.936], [1.12, 1.1, 1.008])
    assert [line.split("**")[1] for line in bad] == ["missed", "missed"]


def test_frame_cost_verdicts_say_whether_the_rounds_settle_them() -> None:
    # Seven rounds give a 95% interval of the median from their lowest to their highest.
    none = [1.0] * 7
    queue = [1.0 + p / 100 for p in (1, 2, 3, 4, 5, 6, 7)]  # all within +10%: settled
    timeline = [1.0 + p / 100 for p in (-1, 0, 1, 2, 4, 5, 6)]  # median +2%, interval -1% to +6%
    queue_line, timeline_line = frame_cost_verdicts(timeline, queue, none)
    assert "**met** (+4.0%; 95% interval of the median +1.0% to +7.0%, all of it within" in (
        queue_line
    )
    assert "**met** (+2.0%; 95% interval of the median -1.0% to +6.0%, the target inside it" in (
        timeline_line
    )
    over = frame_cost_verdicts([1.04] * 7, [1.2] * 7, none)
    assert all("all of it over the target" in line for line in over)


def test_frame_cost_verdicts_take_the_rounds_of_the_targets_alone_with_the_others() -> None:
    # Three rounds of the whole table (+9% for the timeline) and four of the targets'
    # configurations alone (+1%): judged on the seven, the timeline meets +3%, which the three
    # alone would have missed.
    samples = {"none": [1.0] * 3, "run": [1.09] * 3, "run_queue": [1.05] * 3}
    more = {"none": [2.0] * 4, "run": [2.02] * 4, "run_queue": [2.1] * 4}
    code = (
        "import json, frame_cost_page\n"
        f"s, m = json.loads({json.dumps(json.dumps([samples, more]))})\n"
        "print('\\n'.join(frame_cost_page.verdict_lines(s, m)))"
    )
    rounds, _, queue_line, timeline_line = bench_python(code).splitlines()
    assert "the 3 rounds above and 4 more rounds" in rounds
    assert "`vkscope run` (timeline) +1.0%" in rounds
    assert "median of 7 rounds: **met** (+1.0%; 95% interval of the median +1.0% to +9.0%" in (
        timeline_line
    )
    assert "median of 7 rounds: **met** (+5.0%;" in queue_line


def test_a_device_check_run_in_parts_is_joined_into_its_rounds() -> None:
    # Two device calls of the budget check (`--rounds`), and a check run in both that keeps no
    # rounds: the first joins, the second keeps its latest run.
    def part(rounds: list[int], status: str) -> dict[str, object]:
        return {
            "status": status,
            "failures": [f"round {rounds[0]}"] if status == "failed" else [],
            "seconds": 10.0 * len(rounds),
            "rounds": {
                "run": [{"frame": r, "trace": [r]} for r in rounds],
                "timing": [{"frame": -r} for r in rounds],
            },
        }

    runs = [
        {"commit": "c", "checks": {"budget": part([1, 2], "passed"), "driver": {"n": 1}}},
        {"commit": "c", "checks": {"budget": part([3], "failed"), "driver": {"n": 2}}},
    ]
    code = (
        "import json\nfrom bench.device.merge_results import join_parts\n"
        f"print(json.dumps(join_parts(json.loads({json.dumps(json.dumps(runs))}))))"
    )
    joined = json.loads(bench_python(code))
    budget = joined[0]["checks"]["budget"]
    assert [r["frame"] for r in budget["rounds"]["run"]] == [1, 2, 3]
    assert [r["frame"] for r in budget["rounds"]["timing"]] == [-1, -2, -3]
    # A later part keeps no frame-by-frame record (the first part keeps what it has).
    assert [("trace" in r) for r in budget["rounds"]["run"]] == [True, True, False]
    assert (budget["status"], budget["failures"], budget["seconds"]) == (
        "failed",
        ["round 3"],
        30.0,
    )
    assert "budget" not in joined[1]["checks"]
    assert joined[1]["checks"]["driver"] == {"n": 2}
