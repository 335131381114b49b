"""vkscope diff on bad input (exit 2, one clear message, no traceback), its JSON schema as
documented, its command line, and tables that fit the console."""

from __future__ import annotations

import argparse
import json
import re
import shutil
import sqlite3
from pathlib import Path
from typing import Any

import pytest
from support.diff_scenes import W, capture, diff, diff_json, layer_stream, scene, served, steady

from vkscope.capture import SCHEMA_VERSION
from vkscope.capture.write.store import CaptureStore, ingest_stream
from vkscope.cli import diff as diff_command
from vkscope.cli import main

DOC = Path(__file__).resolve().parent.parent / "docs" / "diff.md"


@pytest.fixture(scope="module")
def good(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return capture(tmp_path_factory.mktemp("good") / "good.vkscope", scene())


def bad_input(tmp_path: Path, good: Path, broken: Path, expected: str) -> None:
    for base, new in ((good, broken), (broken, good)):
        code, out, err = diff(base, new)
        assert code == 2, (out, err)
        assert err.startswith(f"vkscope diff: {broken}") and expected in err, err
        assert "Traceback" not in err and not out
        code, out, err = diff(base, new, fmt="json")
        assert code == 2 and expected in err and not out


def copy(good: Path, tmp_path: Path, name: str) -> Path:
    path = tmp_path / name
    shutil.copyfile(good, path)
    return path


def test_missing_file(tmp_path: Path, good: Path) -> None:
    bad_input(tmp_path, good, tmp_path / "nope.vkscope", "no such file")


def test_zero_byte_file(tmp_path: Path, good: Path) -> None:
    path = tmp_path / "zero.vkscope"
    path.touch()
    bad_input(tmp_path, good, path, "the file is empty (0 bytes)")


def test_not_sqlite(tmp_path: Path, good: Path) -> None:
    path = tmp_path / "notes.vkscope"
    path.write_text("frame time 16 ms\n" * 20)
    bad_input(tmp_path, good, path, "not an SQLite database")


def test_sqlite_but_not_a_capture(tmp_path: Path, good: Path) -> None:
    path = tmp_path / "other.db"
    with sqlite3.connect(path) as db:
        db.execute("CREATE TABLE t (x)")
    bad_input(tmp_path, good, path, "not a vkscope capture")


def test_truncated(tmp_path: Path, good: Path) -> None:
    path = copy(good, tmp_path, "cut.vkscope")
    data = path.read_bytes()
    path.write_bytes(data[: len(data) // 2 + 100])
    bad_input(tmp_path, good, path, "truncated")


def test_newer_schema(tmp_path: Path, good: Path) -> None:
    path = copy(good, tmp_path, "future.vkscope")
    with sqlite3.connect(path) as db:
        db.execute(f"PRAGMA user_version = {SCHEMA_VERSION + 1}")
    expected = f"written by a newer vkscope (schema {SCHEMA_VERSION + 1}, this one reads up to "
    bad_input(tmp_path, good, path, expected)


def test_damaged_pages(tmp_path: Path, good: Path) -> None:
    # Same size, header intact, the pages after the schema overwritten: only reading says so.
    path = copy(good, tmp_path, "damaged.vkscope")
    data = bytearray(path.read_bytes())
    page = int.from_bytes(data[16:18], "big")
    data[4 * page :] = b"\xa5" * (len(data) - 4 * page)
    path.write_bytes(bytes(data))
    code, out, err = diff(good, path)
    assert code == 2 and "Traceback" not in err and not out
    assert str(path) in err and re.search("damaged|malformed|not a database", err), err


def test_capture_without_workloads(tmp_path: Path, good: Path) -> None:
    path = served(tmp_path / "nothing.vkscope")  # a server nothing connected to
    bad_input(tmp_path, good, path, "the capture holds no workloads")


def test_capture_without_timings(tmp_path: Path, good: Path) -> None:
    untimed = [W(w.type, w.labels, lambda _f: None) for w in scene()]
    path = capture(tmp_path / "untimed.vkscope", untimed)
    bad_input(tmp_path, good, path, "no GPU timings in this capture (54 workloads, none timed)")


@pytest.mark.parametrize(
    ("options", "expected"),
    [
        ({"threshold_pct": -1.0}, "threshold must be a percentage of 0 or more"),
        ({"threshold_pct": float("nan")}, "threshold must be a percentage of 0 or more"),
        ({"min_frames": 0}, "minimum number of frames must be at least 1"),
        ({"noise_k": -2.0}, "noise multiple must be 0 or more"),
        ({"fmt": "xml"}, "unknown format 'xml'"),
    ],
)
def test_bad_options(good: Path, options: dict[str, Any], expected: str) -> None:
    code, out, err = diff(good, good, **options)
    assert (code, out) == (2, "") and expected in err


def test_a_capture_against_itself(good: Path) -> None:
    code, doc = diff_json(good, good)
    assert code == 0 and doc["counts"]["within_noise"] == 6


def test_a_capture_never_finalized(tmp_path: Path, good: Path) -> None:
    # Written, never finalized (vkscope killed): no index on workloads, and a tagID described
    # twice, of which the later description stands.
    stream = layer_stream(scene(), 9)
    path = tmp_path / "killed.vkscope"
    store = CaptureStore(path)
    ingest_stream(store, "test", [stream])
    store.commit()
    store.abandon()
    code, doc = diff_json(good, path)
    assert code == 0 and doc["new"]["status"] == "capturing"
    assert doc["counts"]["matched"] == 6 and not doc["added"]


# -- the JSON schema ------------------------------------------------------------------------------


def keys(value: Any) -> Any:
    """The shape of a JSON value: its keys, recursively; a list by its first element."""
    if isinstance(value, dict):
        return {k: keys(v) for k, v in value.items()}
    if isinstance(value, list):
        return [keys(value[0])] if value and isinstance(value[0], dict | list) else []
    return None


def documented_example() -> dict[str, Any]:
    text = DOC.read_text()
    section = text[text.index("## JSON output") :]
    block = re.search(r"```json\n(.*?)\n```", section, re.S)
    assert block, "docs/diff.md has no JSON example"
    doc: dict[str, Any] = json.loads(block.group(1))
    return doc


def test_json_output_has_the_documented_schema(tmp_path: Path) -> None:
    base = capture(tmp_path / "base.vkscope", scene())
    work = [w for w in scene() if w.type != "buffer_transfer"]
    new = capture(tmp_path / "new.vkscope",
                  [*work, W("dispatch", ["frame", "ui"], steady(20))])  # fmt: skip
    _, doc = diff_json(base, new)
    example = documented_example()
    assert keys(doc) == keys(example)
    assert doc["format"] == example["format"] == "vkscope-diff"
    assert doc["version"] == example["version"] == 1
    assert set(doc["counts"]) == {"matched", "added", "removed", "regression", "improvement",
                                  "within_noise", "too_few_frames", "measured_in_one",
                                  "untimed"}  # fmt: skip
    for status in ("regression", "improvement", "within_noise", "too_few_frames",
                   "measured_in_one", "untimed"):  # fmt: skip
        assert f"`{status}`" in DOC.read_text(), status


def test_every_option_is_documented() -> None:
    text = DOC.read_text()
    parser = argparse.ArgumentParser()
    diff_command.configure(parser)
    for action in parser._actions:
        for flag in action.option_strings:
            if flag not in ("-h", "--help"):
                assert f"`{flag}" in text, flag


# -- the command line ----------------------------------------------------------------------------


def test_command_line(tmp_path: Path, good: Path, capsys: pytest.CaptureFixture[str]) -> None:
    slower = capture(tmp_path / "slow.vkscope", scene(cull=steady(150)))
    assert main(["diff", str(good), str(slower), "--threshold", "30%"]) == 0
    assert "No regression beyond 30% and 3x the noise" in capsys.readouterr().out
    assert main(["diff", str(good), str(slower), "--format", "json", "--threshold", "5"]) == 1
    doc = json.loads(capsys.readouterr().out)
    assert doc["settings"]["threshold_pct"] == 5.0 and doc["counts"]["regression"] == 1
    code = main(["diff", str(good), str(slower), "--min-frames", "10", "--noise", "0"])
    assert code == 0 and "Not judged: fewer than 10 timed frames" in capsys.readouterr().out
    assert main(["diff", str(good), str(tmp_path / "missing")]) == 2
    assert "no such file" in capsys.readouterr().err
    with pytest.raises(SystemExit) as exited:
        main(["diff", str(good), str(good), "--threshold", "five"])
    assert exited.value.code == 2 and "not a percentage: 'five'" in capsys.readouterr().err


def test_limit_caps_the_rows_of_each_table(tmp_path: Path, good: Path) -> None:
    many = [W("dispatch", ["frame", f"pass {n}"], steady(10 + n)) for n in range(30)]
    new = capture(tmp_path / "many.vkscope", [*scene(), *many])
    _, text, _ = diff(good, new)
    assert "Added: only in new (largest 20 of 30, costliest first)" in text
    assert "pass 29" in text and "pass 9\n" not in text
    _, text, _ = diff(good, new, limit=None)
    assert "Added: only in new (30, costliest first)" in text and "pass 0" in text
    _, doc = diff_json(good, new, limit=3)
    assert len(doc["added"]) == 30  # JSON lists everything


@pytest.mark.parametrize("width", [60, 80, 120])
def test_tables_fit_the_console(tmp_path: Path, good: Path, width: int) -> None:
    long = ["frame", "a label that goes on and on about what this pass does", "and more"]
    new_work = [*scene(blur1=steady(360)), W("trace_rays", long, steady(1234.5))]
    new = capture(tmp_path / "new.vkscope", new_work, queues=1)
    code, text, _ = diff(good, new, width=width)
    assert code == 1
    lines = text.splitlines()
    assert max(len(line) for line in lines) <= width
    assert "Slower beyond 5%" in text and "Added" in text and "REGRESSION" in text
    assert "+20.0%" in text  # the change itself is never cut


def test_a_schema_1_capture_with_its_timings_in_the_annex_json(tmp_path: Path, good: Path) -> None:
    # A version 1 host kept the layer's timing annex fields as annex JSON: the diff reads them
    # from there, so captures taken before the timing columns can still be compared.
    path = copy(good, tmp_path, "v1.vkscope")
    with sqlite3.connect(path) as db:
        db.execute(
            "UPDATE workload_instances SET annex = json_set(coalesce(annex, '{}'), "
            "'$.gpu_begin_ns', gpu_begin_ns, '$.gpu_end_ns', gpu_end_ns, '$.timing', 'ok'), "
            "gpu_begin_ns = NULL, gpu_end_ns = NULL"
        )
        db.execute("DROP VIEW IF EXISTS instances_view")
        later = {"workload_instances": ("timing", "timing_reason", "serialization"),
                 "submits": ("cpu_complete_ns",), "frames": ("captured",),
                 "devices": ("clock_domain", "clock_max_deviation_ns")}  # fmt: skip
        for table, columns in later.items():
            have = {r[1] for r in db.execute(f"PRAGMA table_info({table})")}
            for column in set(columns) & have:
                db.execute(f"ALTER TABLE {table} DROP COLUMN {column}")
        db.execute("PRAGMA user_version = 1")
        db.execute("UPDATE meta SET value = 1 WHERE key = 'schema_version'")
    code, doc = diff_json(good, path)
    assert code == 0 and doc["new"]["schema_version"] == 1
    assert doc["new"]["timed_workloads"] == 54
    assert all(c["delta_ns"] == 0 for c in doc["changes"])
