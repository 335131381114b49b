"""The same analyses on Apache Spark (local mode, two executor threads) agree with DuckDB's on
the same datasets, point by point; and the CLI runs them with --engine spark."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import pytest
from support.fleet import PLANTED, PLANTED_IDENTITY, history, spark  # noqa: F401

from vkscope.cli import main
from vkscope.fleet.analyses import Grouping, Params
from vkscope.fleet.engines import DuckDBEngine, Engine, SparkEngine
from vkscope.fleet.layout import Dataset
from vkscope.fleet.trend import resolve_key, run_summary, run_trend

pytestmark = pytest.mark.usefixtures("spark")

ODD = "scène 'A' \"B\" / = % ; \\ \t 雪"


def _trend(
    engine: Engine, groups: tuple[str, ...], order: str = "build"
) -> tuple[list[Any], list[Any]]:
    grouping = Grouping(resolve_key(engine, order), tuple(resolve_key(engine, g) for g in groups))
    result = run_trend(engine, grouping, Params(), with_points=True)
    assert result.points is not None
    return result.changes.to_pylist(), result.points.to_pylist()


def _same(a: list[dict[str, Any]], b: list[dict[str, Any]]) -> None:
    assert len(a) == len(b)
    for x, y in zip(a, b, strict=True):
        assert x.keys() == y.keys()
        for key in x:
            if isinstance(x[key], float) and isinstance(y[key], float):
                assert math.isclose(x[key], y[key], rel_tol=1e-9), key
            else:
                assert x[key] == y[key], key


@pytest.fixture(scope="module")
def planted(tmp_path_factory: pytest.TempPathFactory) -> Dataset:
    root = tmp_path_factory.mktemp("fleet") / "ds"
    return history(root, builds=40, regressions=(PLANTED,), extra_tags={"scene": ODD})


def test_engines_agree_on_every_point(planted: Dataset) -> None:
    duck = DuckDBEngine(planted)
    changes, points = _trend(duck, ("device",))
    sparked = SparkEngine(planted)
    try:
        spark_changes, spark_points = _trend(sparked, ("device",))
    finally:
        sparked.close()
    _same(points, spark_points)
    _same(changes, spark_changes)
    assert [(c["identity"], c["g0"], c["order_value"], c["status"]) for c in changes] == [
        (PLANTED_IDENTITY, "gpu-b", "30", "held")
    ]


def test_engines_agree_on_summaries_and_odd_tags(planted: Dataset) -> None:
    duck = DuckDBEngine(planted)
    sparked = SparkEngine(planted)
    try:
        for groups in ((), ("scene", "device")):
            keys = tuple(resolve_key(duck, g) for g in groups)
            _same(
                run_summary(duck, keys, "gpu_ns").to_pylist(),
                run_summary(sparked, keys, "gpu_ns").to_pylist(),
            )
        sql = "SELECT key, value, count(*) AS n FROM capture_tags GROUP BY key, value"
        ordered = f"SELECT * FROM ({sql}) t ORDER BY key, value"
        rows = sparked.sql(ordered).to_pylist()
        assert rows == duck.sql(ordered).to_pylist()
        assert {"key": "scene", "value": ODD, "n": 80} in rows
    finally:
        sparked.close()


def test_cli_with_spark_gates(
    planted: Dataset,
    tmp_path: Path,
) -> None:
    out = tmp_path / "changes.json"
    args = ["trend", str(planted.root), "--by", "build", "--group", "device", "--gate"]
    code = main([*args, "--engine", "spark", "--master", "local[2]", "--format", "json",
                 "-o", str(out)])  # fmt: skip
    assert code == 1
    rows = json.loads(out.read_text())
    assert [(r["identity"], r["device"], r["first build"]) for r in rows] == [
        (PLANTED_IDENTITY, "gpu-b", "30")
    ]


def test_an_empty_dataset_on_spark(tmp_path: Path) -> None:
    dataset = Dataset(tmp_path / "ds")
    dataset.create("date")
    engine = SparkEngine(dataset)
    try:
        assert engine.sql("SELECT count(*) AS n FROM instances").to_pylist() == [{"n": 0}]
        changes, points = _trend(engine, (), order="date")
        assert (changes, points) == ([], [])
    finally:
        engine.close()


def test_submit_runs_a_command_on_spark(
    planted: Dataset, capsys: pytest.CaptureFixture[str]
) -> None:
    from vkscope.cli import submit

    sql = "SELECT count(*) AS n FROM captures"
    assert submit.main(["fleet", "query", str(planted.root), sql, "--format", "csv"]) == 0
    assert capsys.readouterr().out.split() == ["n", "80"]
    assert submit.main(["export", "--parquet", "x", "y"]) == 2
    assert "submit.py runs `trend ...`" in capsys.readouterr().err


def test_engines_agree_without_groups(planted: Dataset) -> None:
    duck = DuckDBEngine(planted)
    sparked = SparkEngine(planted)
    try:
        _same(_trend(duck, ())[1], _trend(sparked, ())[1])
    finally:
        sparked.close()
