"""The report's summary: each workload's distribution over frames, warm-up frames left out by
the rule (or --warmup), each queue's GPU time per frame; and a summary that stays as long, and as
quick, for a capture of 150,000 frames as for one of twenty, with --all streaming every row."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from support.summary_scenes import PASSES, build

from vkscope.capture import open_capture
from vkscope.capture.read.distributions import distributions
from vkscope.capture.read.quantiles import Distribution, percentile
from vkscope.capture.read.warmup import warmup_frames
from vkscope.cli import main

# Tag 1's GPU time in frames 0-4: frame 0 ten times slower (a warm-up frame).
SLOW_START = {0: 5000, 1: 100, 2: 200, 3: 300, 4: 400}


def slow_start(frame: int, tag: int) -> int | None:
    if tag == 1:
        return SLOW_START[frame]
    return None if tag == 4 else tag * 100 + frame


@pytest.fixture(scope="module")
def slow(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build(tmp_path_factory.mktemp("slow") / "slow.vkscope", 5, slow_start, counters=True)


@pytest.fixture(autouse=True)
def wide(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COLUMNS", "160")  # titles on one line


def report(capsys: pytest.CaptureFixture[str], *args: str | Path) -> str:
    assert main(["report", *map(str, args)]) == 0
    out, _ = capsys.readouterr()
    return out


def by_labels(rows: list[dict[str, Any]]) -> dict[tuple[str, str, int], dict[str, Any]]:
    return {(r["label_path"], r["type"], r["ordinal"]): r for r in rows}


@settings(deadline=None)  # a timing is no test result (a loaded machine)
@given(st.lists(st.integers(-(10**12), 10**12), min_size=1, max_size=60))
def test_percentiles_interpolate_as_numpy_does(values: list[int]) -> None:
    ordered = sorted(values)
    for p in (0, 1, 50, 90, 99, 100):
        assert percentile(ordered, p) == pytest.approx(np.percentile(ordered, p), rel=1e-12)


def test_a_distribution_sums_up_its_values() -> None:
    assert Distribution.of([]) is None
    d = Distribution.of([400, 100, 300, 200])
    assert d == Distribution(4, 100, 250.0, 370.0, 397.0, 400)
    assert Distribution.of([7]) == Distribution(1, 7, 7.0, 7.0, 7.0, 7)


def test_warm_up_frames_are_left_out_of_the_distributions(
    slow: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    doc = json.loads(report(capsys, slow, "--format", "json", "--table", "distributions"))
    assert doc["capture"]["warmup"] == {
        "rule": "automatic",
        "frames": [{"process": 1, "device": 1, "frame": 0, "why": "first frame"}],
        "kept": [],
    }
    rows = by_labels(doc["distributions"])
    shadows = rows[("frame/shadows", "renderpass", 0)]
    assert (shadows["queue"], shadows["frames"], shadows["timed"]) == ("0.0", 4, 4)
    assert [shadows[f"gpu_{s}_ns"] for s in ("min", "p50", "p90", "p99", "max")] == [
        100, 250.0, 370.0, 397.0, 400,
    ]  # fmt: skip
    # Each counter's distribution too (frames 1-4: 11, 12, 10, 11).
    assert shadows["counters"]["fragment_shader_invocations"] == {
        "count": 4, "min": 10.0, "p50": 11.0, "p90": 11.7, "p99": 11.97, "max": 12.0,
    }  # fmt: skip
    # Two dispatches under one label path: two identities, told apart by their ordinal.
    assert rows[("frame/post", "dispatch", 1)]["gpu_p50_ns"] == 302.5  # 301..304
    # Never timed: a distribution of its counters, none of GPU time.
    upload = rows[("upload", "buffer_transfer", 0)]
    assert (upload["frames"], upload["timed"], upload["gpu_p50_ns"]) == (4, 0, None)


def test_warmup_option_replaces_the_rule(slow: Path, capsys: pytest.CaptureFixture[str]) -> None:
    def shadows(*args: str) -> dict[str, Any]:
        doc = json.loads(report(capsys, slow, "--format", "json", "--table", "distributions",
                                *args))  # fmt: skip
        return by_labels(doc["distributions"])[("frame/shadows", "renderpass", 0)]

    every = shadows("--warmup", "0")
    assert (every["frames"], every["gpu_max_ns"], every["gpu_p50_ns"]) == (5, 5000, 300.0)
    three = shadows("--warmup", "3")
    assert (three["frames"], three["gpu_min_ns"], three["gpu_max_ns"]) == (2, 300, 400)
    assert main(["report", str(slow), "--warmup", "-1"]) == 2
    assert "--warmup must be 0 or more" in capsys.readouterr().err


def test_the_python_api_gives_the_same_distributions(slow: Path) -> None:
    with open_capture(slow) as capture:
        found = {
            (d.identity.label_path, d.identity.ordinal, d.identity.type): d
            for d in distributions(capture)
        }
        d = found[("frame/shadows", 0, "renderpass")]
        assert d.identity.queue == "0.0" and d.identity.labels == ("frame", "shadows")
        assert d.gpu_ns == Distribution(4, 100, 250.0, 370.0, 397.0, 400)
        assert d.value("fragment_shader_invocations") == d.counters["fragment_shader_invocations"]
        everything = distributions(capture, warmup_frames(capture, first=0))
        assert {x.frames for x in everything} == {5}


def test_a_capture_whose_every_frame_matches_the_rule_keeps_them(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    one = build(tmp_path / "one.vkscope", 1)
    text = report(capsys, one)
    assert "none: every frame matched the automatic rule, so all are kept" in text
    with open_capture(one) as capture:
        assert warmup_frames(capture).frames == {}
        assert {d.frames for d in distributions(capture)} == {1}


def test_the_summary_ranks_steady_frames(slow: Path, capsys: pytest.CaptureFixture[str]) -> None:
    text = report(capsys, slow)
    for expected in (
        "warm-up    1 frame left out (0: first frame)",
        "Queues over 4 frames, 1 warm-up left out: GPU time per frame",
        "Costliest workloads (of 4 frames, 1 warm-up left out, 12 timed workloads)",
        "Distributions over 4 frames, 1 warm-up left out: every workload",
        "GPU time by label subtree",
    ):
        assert expected in text, expected
    assert "5.00 µs" not in text  # frame 0's render pass is not the costliest
    queues = list(csv.DictReader(io.StringIO(report(capsys, slow, "--format", "csv", "--table",
                                                    "queues"))))  # fmt: skip
    # Frames 1-4: 100-400 ns of render pass, 201-204 and 301-304 of dispatches.
    assert [(q["queue"], q["frames"], q["workloads"], q["warmup_frames"]) for q in queues] == [
        ("0", "4", "16", "1")
    ]
    assert float(queues[0]["gpu_per_frame_p50_ns"]) == 250 + 202.5 + 302.5


def test_a_long_capture_gets_a_summary_of_the_same_length(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # One render pass a frame (building more workloads would only make the test longer).
    short = report(capsys, build(tmp_path / "short.vkscope", 20, passes=PASSES[:1]))
    path = build(tmp_path / "long.vkscope", 150_000, passes=PASSES[:1])
    long = report(capsys, path)
    assert "150,000 frames with work" in long
    assert "Costliest workloads (of 149,999 frames, 1 warm-up left out" in long
    assert len(long.splitlines()) == len(short.splitlines())
    assert len(long) < 2 * len(short)
    # The whole listing when asked for, every row of it.
    rows = report(capsys, path, "--format", "csv", "--frames", "140000-").splitlines()
    assert len(rows) == 1 + 10_000
