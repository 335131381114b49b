"""The fleet analyses on DuckDB: a planted regression is found, dated and attributed; a history
of noise alone raises no alarm; the CLI's gate, query and summary; bad input."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from support.fleet import PLANTED, PLANTED_IDENTITY, history

from vkscope.cli import main
from vkscope.fleet.analyses import Grouping, Params
from vkscope.fleet.engines import DuckDBEngine
from vkscope.fleet.trend import resolve_key, run_trend


def trend(dataset_root: Path, *args: str) -> tuple[int, list[dict[str, object]]]:
    out = dataset_root.parent / "trend.json"
    code = main(["trend", str(dataset_root), "--format", "json", "-o", str(out), *args])
    return code, json.loads(out.read_text())


def test_planted_regression_is_found_dated_and_attributed(tmp_path: Path) -> None:
    dataset = history(tmp_path / "ds", builds=50, regressions=(PLANTED,))
    code, rows = trend(dataset.root, "--by", "build", "--group", "device", "--gate")
    assert code == 1
    assert len(rows) == 1
    found = rows[0]
    assert found["identity"] == PLANTED_IDENTITY
    assert found["device"] == "gpu-b"
    assert found["first build"] == "30"
    assert (found["direction"], found["status"]) == ("slower", "held")
    assert 0.10 < found["change"] < 0.20  # planted: +15%


def test_regression_in_the_latest_runs_is_new_until_confirmed(tmp_path: Path) -> None:
    late = PLANTED.__class__(build=50, device="gpu-a", identities=(3,), factor=1.3)
    dataset = history(tmp_path / "ds", builds=50, regressions=(late,))
    code, rows = trend(dataset.root, "--by", "build", "--group", "device", "--gate")
    assert code == 0  # not confirmed yet: the gate waits for --confirm runs
    assert [(r["first build"], r["status"], r["device"]) for r in rows] == [("50", "new", "gpu-a")]
    code, _ = trend(dataset.root, "--by", "build", "--group", "device", "--gate", "--gate-new")
    assert code == 1


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_noise_alone_raises_no_alarm(tmp_path: Path, seed: int) -> None:
    dataset = history(tmp_path / "ds", builds=50, seed=seed)
    code, rows = trend(dataset.root, "--by", "build", "--group", "device", "--gate", "--gate-new")
    assert (code, rows) == (0, [])


def test_builds_are_ordered_as_numbers(tmp_path: Path) -> None:
    dataset = history(tmp_path / "ds", builds=12)
    engine = DuckDBEngine(dataset)
    grouping = Grouping(resolve_key(engine, "build"), (resolve_key(engine, "device"),))
    points = run_trend(engine, grouping, Params(), with_points=True).points
    assert points is not None
    rows = points.to_pylist()
    one = [p for p in rows if p["g0"] == "gpu-a" and p["identity"] == PLANTED_IDENTITY]
    assert [p["order_value"] for p in one] == [str(n) for n in range(1, 13)]
    assert [p["run_index"] for p in one] == list(range(1, 13))


def test_a_counter_as_the_metric(tmp_path: Path) -> None:
    dataset = history(tmp_path / "ds", builds=40, regressions=(PLANTED,))
    code, rows = trend(
        dataset.root, "--by", "build", "--group", "device",
        "--metric", "counter_fragment_shader_invocations", "--gate",
    )  # fmt: skip
    assert code == 1
    assert [(r["identity"], r["first build"]) for r in rows] == [(PLANTED_IDENTITY, "30")]


def test_query_and_summary(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    dataset = history(tmp_path / "ds", builds=3, frames=2, workloads=8)
    sql = "SELECT count(*) AS n, count(DISTINCT capture_id) AS captures FROM instances"
    assert main(["fleet", "query", str(dataset.root), sql, "--format", "json"]) == 0
    assert json.loads(capsys.readouterr().out) == [{"n": 3 * 2 * 2 * 8, "captures": 6}]
    sql = "SELECT value FROM capture_tags WHERE key = 'build' ORDER BY value"
    assert main(["fleet", "query", str(dataset.root), sql, "--format", "csv"]) == 0
    assert capsys.readouterr().out.split() == ["value", *["1"] * 2, *["2"] * 2, *["3"] * 2]
    assert main(["fleet", "summary", str(dataset.root), "--group", "device",
                 "--format", "json"]) == 0  # fmt: skip
    summary = json.loads(capsys.readouterr().out)
    assert len(summary) == 8 * 2
    assert all(r["n"] == 6 and r["captures"] == 3 and r["p50"] <= r["p90"] <= r["p99"]
               for r in summary)  # fmt: skip


def test_an_empty_dataset(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    root = tmp_path / "ds"
    history(root, builds=1)  # made, then emptied of captures
    for table in ("captures", "frames", "instances"):
        for f in (root / table).glob("*/*.parquet"):
            f.unlink()
    code, rows = trend(root, "--by", "date", "--gate")
    assert (code, rows) == (0, [])
    assert "0 runs by date" in capsys.readouterr().err
    assert main(["fleet", "query", str(root), "SELECT count(*) AS n FROM instances",
                 "--format", "csv"]) == 0  # fmt: skip
    assert capsys.readouterr().out.split() == ["n", "0"]


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["trend", "{missing}", "--by", "build"], "no such dataset"),
        (["trend", "{plain}", "--by", "build"], "not a vkscope dataset"),
        (["trend", "{ds}", "--by", "nope"], "no capture has a tag 'nope'"),
        (["trend", "{ds}", "--by", "bad name"], "tag name 'bad name'"),
        (["trend", "{ds}", "--by", "build", "--metric", "draws"], "no metric 'draws'"),
        (["trend", "{ds}", "--by", "build", "--window", "0"], "--window must be at least 1"),
        (["fleet", "query", "{ds}", "SELECT * FROM nowhere"], "nowhere"),
        (["fleet", "generate", "{ds}", "--regression", "x"], "BUILD:DEVICE:WORKLOAD:FACTOR"),
    ],
)
def test_bad_input_is_one_line_and_exit_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], args: list[str], message: str
) -> None:
    dataset = history(tmp_path / "ds", builds=2, frames=1, workloads=2)
    (tmp_path / "plain").mkdir()
    (tmp_path / "plain" / "x").write_text("")
    where = {"ds": dataset.root, "missing": tmp_path / "none", "plain": tmp_path / "plain"}
    assert main([a.format(**where) for a in args]) == 2
    err = capsys.readouterr().err
    assert message in err and err.count("\n") == 1 and "Traceback" not in err


def test_a_newer_dataset_is_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    dataset = history(tmp_path / "ds", builds=1, frames=1, workloads=1)
    manifest = json.loads(dataset.manifest_path.read_text())
    dataset.manifest_path.write_text(json.dumps({**manifest, "version": 99}))
    assert main(["trend", str(dataset.root), "--by", "build"]) == 2
    assert "dataset version 99, written by a newer vkscope" in capsys.readouterr().err


def test_without_the_fleet_extra_the_cli_says_what_to_install(tmp_path: Path) -> None:
    import subprocess

    script = (
        "import sys; sys.modules['pyarrow'] = None\n"
        "from vkscope.cli import main\n"
        f"sys.exit(main(['trend', {str(tmp_path)!r}, '--by', 'build']))\n"
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True)
    assert done.returncode == 2
    assert "pip install 'vkscope[fleet]'" in done.stderr and "Traceback" not in done.stderr
