"""The report's summary from the instance columns a capture stored when it was finalized, with
numpy (analysis/summary_columns.py, capture/read/distribution_columns.py), is the summary the
pass over its instances one at a time gives: on captures of chosen GPU times and counters with
warm-up frames, every selection, and a real lavapipe capture; each statistic to the last bit.
"""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from support.counted_captures import counted_capture, without_stored_columns
from support.summary_scenes import build

from vkscope.analysis.report import write_report
from vkscope.analysis.selection import Selection
from vkscope.analysis.writers import JsonWriter
from vkscope.capture import open_capture
from vkscope.capture.read.columnar import stored_columns_for
from vkscope.capture.read.distributions import distribution_table
from vkscope.capture.read.identity_table import sorted_values
from vkscope.capture.read.quantiles import Distribution
from vkscope.cli import main


def stats_of(groups: list[list[int]] | list[list[float]], floats: bool) -> list[Any]:
    codes = np.repeat(np.arange(len(groups), dtype=np.int64), [len(g) for g in groups])
    dtype = np.float64 if floats else np.int64
    values = np.array([v for g in groups for v in g], dtype)
    identities = np.arange(len(groups) + 1, dtype=np.int64)  # the last: no values
    return sorted_values(codes, values, identities, floats=floats).rows(0, len(groups) + 1)


@settings(deadline=None)  # a timing is no test result (a loaded machine)
@given(st.lists(st.lists(st.integers(0, 2**62), min_size=1, max_size=40), min_size=1,
                max_size=8))  # fmt: skip
def test_integer_statistics_are_quantiles_to_the_bit(groups: list[list[int]]) -> None:
    found = stats_of(groups, floats=False)
    assert found == [*(Distribution.of(list(g)) for g in groups), None]
    for d in found[:-1]:
        assert type(d.min) is int and type(d.max) is int


@settings(deadline=None)  # a timing is no test result (a loaded machine)
@given(st.lists(st.lists(st.integers(0, 2**62), max_size=40), min_size=1, max_size=8))
def test_statistics_as_columns_are_the_rows(groups: list[list[int]]) -> None:
    """columns(), the html page's, gives every identity's row (0s for one without values)."""
    codes = np.repeat(np.arange(len(groups), dtype=np.int64), [len(g) for g in groups])
    values = np.array([v for g in groups for v in g], np.int64)
    table = sorted_values(codes, values, np.arange(len(groups), dtype=np.int64))
    counts, columns = table.columns()
    rows = [
        Distribution(n, *(c[at].item() for c in columns)) if n else None
        for at, n in enumerate(counts.tolist())
    ]
    assert rows == [Distribution.of(list(g)) for g in groups]
    assert all(c[at] == 0 for at, n in enumerate(counts) if not n for c in columns)


@settings(deadline=None)  # a timing is no test result (a loaded machine)
@given(st.lists(st.lists(st.one_of(st.integers(-(2**40), 2**40),
                                   st.floats(-1e12, 1e12, allow_nan=False)),
                         min_size=1, max_size=40), min_size=1, max_size=8))  # fmt: skip
def test_counter_statistics_are_quantiles_to_the_bit(groups: list[list[int | float]]) -> None:
    """Counters come as float64 columns; whole ones read as the JSON's ints."""
    as_json = [[v if isinstance(v, int) else float(v) for v in g] for g in groups]
    whole = [[int(v) if float(v).is_integer() else v for v in g] for g in as_json]
    expected = [Distribution.of(list(g)) for g in whole]
    found = stats_of([[float(v) for v in g] for g in as_json], floats=True)
    assert found == [*expected, None]
    for d, e in zip(found, expected, strict=False):
        assert (type(d.min), type(d.max)) == (type(e.min), type(e.max))


def json_report(path: Path, **options: Any) -> dict[str, Any]:
    out = io.StringIO()
    with open_capture(path) as capture:
        write_report(capture, JsonWriter(out), tables=("queues", "costliest", "distributions",
                                                       "labels"), **options)  # fmt: skip
    doc: dict[str, Any] = json.loads(out.getvalue())
    del doc["capture"]["path"]
    return doc


def slow_start(frame: int, tag: int) -> int | None:
    if tag == 4:
        return None if frame % 2 else 50  # timed in some frames only
    return (5000 if frame == 0 else tag * 100 + frame * 37 % 11) if tag != 3 else 300 + frame


@pytest.fixture(scope="module")
def pair(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    stored = tmp_path_factory.mktemp("stored") / "c.vkscope"
    build(stored, 9, slow_start, counters=True, stored=True)
    return stored, without_stored_columns(stored, tmp_path_factory.mktemp("rows") / "c.vkscope")


@pytest.mark.parametrize(
    "options",
    [
        {},
        {"warmup": 0},
        {"warmup": 3},
        {"top": 2},
        {"top": 0},
        {"sort": "fragment_shader_invocations"},
        {"selection": Selection.parse(frames="2-5,7")},
        {"selection": Selection.parse(types="dispatch")},
        {"selection": Selection.parse(label="post")},
        {"selection": Selection.parse(label="frame/*", queues="0")},
    ],
    ids=str,
)
def test_the_stored_columns_sum_up_as_the_instances_do(
    pair: tuple[Path, Path], options: dict[str, Any]
) -> None:
    stored, rows = pair
    with open_capture(stored) as capture:
        assert stored_columns_for(capture, capture.counter_names())
    found = json_report(stored, **options)
    assert found == json_report(rows, **options)
    if not options:  # what the comparison compares
        assert len(found["distributions"]) == 4 and len(found["costliest"]) == 10
        assert found["distributions"][0]["counters"]


def test_the_people_tables_are_the_same(
    pair: tuple[Path, Path], capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("COLUMNS", "200")
    texts = []
    for path in pair:
        assert main(["report", str(path), "--top", "2"]) == 0
        texts.append(capsys.readouterr().out.replace(str(path.parent), "FOLDER"))
    assert texts[0] == texts[1]
    assert "Distributions over 8 frames, 1 warm-up left out: every workload" in texts[0]


@pytest.mark.vulkan
def test_a_lavapipe_capture_sums_up_alike(workload: Path, tmp_path: Path) -> None:
    cap = counted_capture(workload, tmp_path, frames=4)
    rows = without_stored_columns(cap, tmp_path / "rows.vkscope")
    with open_capture(cap) as capture:
        assert stored_columns_for(capture, capture.counter_names())
        from_columns = list(distribution_table(capture))
        assert from_columns == list(distribution_table(capture, stored=False))
    assert len(from_columns) > 20 and any(d.counters for d in from_columns)
    for options in ({}, {"warmup": 0}, {"sort": "compute_shader_invocations"}):
        found = json_report(cap, **options)
        assert found == json_report(rows, **options)
        assert found["costliest"] and found["labels"]
