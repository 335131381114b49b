"""`vkscope report` in every format, on a capture made over a real socket: the rows parse back
(csv module, json.loads) with the right values, filters choose the right rows, and terminal
tables fit the console."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path
from typing import Any

import pytest
from rich.console import Console
from support.analysis_scenes import scene
from support.captures import capture_from

from vkscope.analysis.report import render_report
from vkscope.analysis.selection import Selection
from vkscope.capture import open_capture
from vkscope.capture.schema import SCHEMA_VERSION
from vkscope.cli import main


@pytest.fixture(scope="module")
def cap(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return capture_from(tmp_path_factory.mktemp("report"), scene("queue"))


def report(capsys: pytest.CaptureFixture[str], *args: str | Path) -> str:
    code = main(["report", *map(str, args)])
    out, err = capsys.readouterr()
    assert code == 0, err
    assert err == ""
    return out


def csv_rows(text: str) -> list[dict[str, str]]:
    return list(csv.DictReader(io.StringIO(text)))


def test_csv_workloads(cap: Path, capsys: pytest.CaptureFixture[str]) -> None:
    rows = csv_rows(report(capsys, cap, "--format", "csv"))
    assert len(rows) == 21
    assert list(rows[0])[:6] == ["frame", "process", "device", "queue", "index", "id"]
    frame1 = [r for r in rows if r["frame"] == "1"]
    assert [(r["queue"], r["index"], r["type"], r["label_path"]) for r in frame1] == [
        ("0", "1", "renderpass", "frame/shadows"), ("0", "2", "dispatch", "frame/post/bloom"),
        ("0", "3", "buffer_transfer", "frame"), ("1", "1", "dispatch", "frame/post/bloom"),
        ("1", "2", "image_transfer", ""),
    ]  # fmt: skip
    rp, dispatch, copy, indirect, blit = frame1
    assert (rp["size"], rp["draws"], rp["gpu_ns"], rp["share"]) == ("1920x1080", "12", "400", "0.4")
    assert (dispatch["dispatch"], dispatch["gpu_ns"], dispatch["share"]) == ("8x4x1", "200", "0.2")
    assert (copy["bytes"], copy["gpu_ns"], copy["details"]) == ("4096", "100", "copy 4.0 KiB")
    assert (indirect["dispatch"], indirect["share"]) == ("16x16x1", "0.3")  # from its annex
    assert (blit["size"], blit["gpu_ns"], blit["share"], blit["timing"]) == (
        "100",
        "",
        "",
        "untimed",
    )
    assert blit["timing_reason"] == "queue family has no timestamps"
    assert int(rp["gpu_end_ns"]) - int(rp["gpu_begin_ns"]) == 400
    assert {r["serialization"] for r in rows} == {"queue"}
    shares = sum(float(r["share"] or 0) for r in frame1)
    assert shares == pytest.approx(1.0)


def test_csv_other_tables(cap: Path, capsys: pytest.CaptureFixture[str]) -> None:
    frames = csv_rows(report(capsys, cap, "--format", "csv", "--table", "frames"))
    assert [(r["frame"], r["queue"]) for r in frames] == [
        (str(f), str(q)) for f in range(4) for q in (0, 1)
    ] + [("4", "0")]
    q0 = frames[2]
    assert (q0["workloads"], q0["gpu_sum_ns"], q0["busy_span_ns"], q0["busy_ns"]) == (
        "3", "700", "800", "700",
    )  # fmt: skip
    assert (q0["idle_ns"], q0["gaps"], q0["largest_gap_ns"], q0["overlap_ns"]) == (
        "100", "1", "100", "0",
    )  # fmt: skip
    assert (q0["captured"], q0["queue_flags"]) == ("True", "graphics/compute/transfer")
    assert (frames[8]["captured"], frames[8]["timed"], frames[8]["busy_span_ns"]) == (
        "False",
        "0",
        "",
    )
    top = csv_rows(report(capsys, cap, "--format", "csv", "--table", "costliest", "--top", "3",
                          "--warmup", "0"))  # fmt: skip
    assert [(r["rank"], r["frame"], r["type"], r["gpu_ns"]) for r in top] == [
        ("1", "0", "renderpass", "400"), ("2", "1", "renderpass", "400"),
        ("3", "2", "renderpass", "400"),
    ]  # fmt: skip
    # Frame 0 is a warm-up frame unless --warmup says otherwise: left out of what is summed up.
    top = csv_rows(report(capsys, cap, "--format", "csv", "--table", "costliest", "--top", "3"))
    assert [r["frame"] for r in top] == ["1", "2", "3"]
    labels = csv_rows(report(capsys, cap, "--format", "csv", "--table", "labels", "--warmup", "0"))
    assert [(r["label_path"], r["self_ns"], r["inclusive_ns"]) for r in labels] == [
        ("(all workloads)", "0", "4000"), ("frame", "400", "4000"), ("frame/post", "0", "2000"),
        ("frame/post/bloom", "2000", "2000"), ("frame/shadows", "1600", "1600"),
    ]  # fmt: skip


def test_json_holds_every_table(cap: Path, capsys: pytest.CaptureFixture[str]) -> None:
    doc: dict[str, Any] = json.loads(
        report(capsys, cap, "--format", "json", "--top", "4", "--warmup", "0")
    )
    assert list(doc) == [
        "capture", "workloads", "frames", "queues", "costliest", "distributions", "labels",
        "command_buffers",
    ]  # fmt: skip
    capture = doc["capture"]
    assert (capture["status"], capture["schema_version"], capture["workloads"]) == (
        "complete", SCHEMA_VERSION, 21,
    )  # fmt: skip
    assert capture["devices"][0]["clock_domain"] == "clock_monotonic"
    assert capture["timing"]["serialization"] == {"queue": 21}
    assert capture["timing"]["status"] == {"ok": 16, "untimed": 5}
    assert (len(doc["workloads"]), len(doc["frames"]), len(doc["costliest"])) == (21, 9, 4)
    w = doc["workloads"][0]
    assert (w["type"], w["gpu_ns"], w["share"], w["draws"], w["dispatch"]) == (
        "renderpass", 400, 0.4, 12, None,
    )  # fmt: skip
    assert sum(f["gpu_sum_ns"] for f in doc["frames"]) == 4000
    assert doc["labels"][0]["inclusive_ns"] == 4000
    assert doc["command_buffers"] == []  # no COMMAND_BUFFER-scope counters here
    only = json.loads(report(capsys, cap, "--format", "json", "--table", "labels"))
    assert list(only) == ["capture", "labels"]
    # Filters that each match but not together: empty tables, and a note on stderr.
    assert main(["report", str(cap), "--format", "json", "--type", "image_transfer",
                 "--queue", "0"]) == 0  # fmt: skip
    out, err = capsys.readouterr()
    empty = json.loads(out)
    assert (empty["workloads"], empty["costliest"], empty["labels"]) == ([], [], [])
    assert "no workload of" in err


def test_markdown(cap: Path, capsys: pytest.CaptureFixture[str]) -> None:
    text = report(capsys, cap, "--format", "markdown", "--frames", "1", "--all")
    for expected in (
        "# vkscope capture ",
        "- **timing**: 16 of 21 workloads timed; serialization queue (21)",
        "## Frame 1 · device Scene GPU · GPU time 1.00 µs",
        "### Queue 0 (graphics/compute/transfer)",
        "3 workloads · sum 700 ns · busy span 800 ns · idle 100 ns in 1 gap",
        "| 1 | renderpass | frame/shadows | 1920x1080, 12 draws, 0 attachments | 400 ns | 40.0% |",
        "| 2 | image_transfer |  | blit 100 pixels | untimed |  |",
        "## Costliest workloads (of 1 frame, 4 timed workloads)",
        "## Distributions over 1 frame: every workload",
        "## GPU time by label subtree",
        "| frame/post/bloom | 2 | 500 ns | 500 ns | 50.0% | 50.0% |",
    ):
        assert expected in text, expected
    assert "## Frame 0" not in text and "## Frame 2" not in text
    lines = [line for line in text.splitlines() if line.startswith("|")]
    assert all(line.endswith("|") for line in lines)


@pytest.mark.parametrize("width", [60, 80, 132])
def test_terminal_tables_fit_the_width(cap: Path, width: int) -> None:
    console = Console(width=width, record=True, color_system=None, force_terminal=False)
    with open_capture(cap) as capture:
        render_report(capture, console, selection=Selection.parse(frames="2-4"), everything=True)
    text = console.export_text()
    assert max(len(line) for line in text.splitlines()) <= width
    for expected in ("GPU time", "Costliest workloads", "GPU time by label subtree", "untimed"):
        assert expected in text, expected
    if width >= 80:
        for expected in ("400 ns", "40.0%", "1920x1080, 12 draws", "frame/post/bloom"):
            assert expected in text, expected


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        (["--frames", "1,3"], {("1", t) for t in range(5)} | {("3", t) for t in range(5)}),
        (["--frames", "2-", "--queue", "1"], {("2", 3), ("2", 4), ("3", 3), ("3", 4)}),
        (["--type", "dispatch", "--frames", "0"], {("0", 1), ("0", 3)}),
        (["--type", "dispatch,buffer_transfer", "--frames", "0"], {("0", 1), ("0", 2), ("0", 3)}),
        (["--label", "frame/*/bloom", "--frames", "0-1"], {("0", 1), ("0", 3), ("1", 1), ("1", 3)}),
        (["--label", "shadow"], {(str(f), 0) for f in range(5)}),
        (["--label", "frame", "--frames", "0"], {("0", t) for t in range(4)}),
        (["--label", "frame", "--queue", "1", "--frames", "0"], {("0", 3)}),
    ],
)
def test_filters(
    cap: Path, capsys: pytest.CaptureFixture[str], args: list[str], expected: set[tuple[str, int]]
) -> None:
    # Workloads of a frame by position in submission order: 0 render pass, 1 dispatch, 2 copy
    # (queue 0), 3 indirect dispatch, 4 blit (queue 1); frame 4 has its render pass alone.
    every = csv_rows(report(capsys, cap, "--format", "csv"))
    position = {r["id"]: (r["frame"], n % 5) for n, r in enumerate(every)}
    rows = csv_rows(report(capsys, cap, "--format", "csv", *args))
    assert {position[r["id"]] for r in rows} == expected
    ids = [int(r["id"]) for r in rows]
    assert ids == sorted(ids)  # submission order, whatever the filter


def test_output_file(cap: Path, capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    out = tmp_path / "r.json"
    assert report(capsys, cap, "--format", "json", "-o", out) == ""
    assert len(json.loads(out.read_text())["workloads"]) == 21
    table = tmp_path / "r.txt"
    assert report(capsys, cap, "-o", table, "--max-workloads", "1") == ""
    assert "Frame 4 · queue 0" in table.read_text() and "1 more" in table.read_text()


def test_a_capture_without_timing_reports_without_time_columns(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from vkscope.capture.write.client import Stream

    s = Stream()
    s.hello()
    s.device(1)
    s.workload(1, "dispatch", groups=[1, 2, 3])
    s.submit([(1, 0)])
    s.goodbye()
    path = capture_from(tmp_path, s)
    text = report(capsys, path, "--all")
    assert "1x2x3 groups" in text and "share" not in text
    assert "none: run with a timing setting" in text
    row = csv_rows(report(capsys, path, "--format", "csv"))[0]
    assert (row["gpu_ns"], row["share"], row["timing"]) == ("", "", "")
