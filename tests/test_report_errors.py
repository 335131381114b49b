"""Bad input to `report`, `query` and `overlap`: one line saying what is wrong, exit code 2, no
traceback; and `query` cannot change the capture or write any other file.

Each command runs as its own process (python -m vkscope), as a user would run it.
"""

from __future__ import annotations

import csv
import io
import json
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest
from support.analysis_scenes import scene
from support.captures import capture_from

from vkscope.capture import SCHEMA_VERSION
from vkscope.capture.write.store import CaptureStore


def run(*args: str | Path, cwd: Path | None = None) -> tuple[int, str, str]:
    res = subprocess.run(
        [sys.executable, "-m", "vkscope", *map(str, args)],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=cwd,
    )
    return res.returncode, res.stdout, res.stderr


def refused(*args: str | Path) -> str:
    code, out, err = run(*args)
    assert code == 2, (out, err)
    assert "Traceback" not in err and out == ""
    assert err.startswith("vkscope: ") and err.count("\n") == 1, err
    return err


@pytest.fixture(scope="module")
def cap(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return capture_from(tmp_path_factory.mktemp("errors"), scene("queue"))


def test_files_that_are_not_readable_captures(cap: Path, tmp_path: Path) -> None:
    newer = tmp_path / "newer.vkscope"
    newer.write_bytes(cap.read_bytes())
    with sqlite3.connect(newer) as db:
        db.execute(f"PRAGMA user_version = {SCHEMA_VERSION + 1}")
    cut = tmp_path / "cut.vkscope"
    cut.write_bytes(cap.read_bytes()[: cap.stat().st_size // 2])
    text = tmp_path / "notes.vkscope"
    text.write_text("a shopping list, not a capture\n" * 40)
    empty = tmp_path / "empty.vkscope"
    empty.touch()
    for path, words in (
        (newer, f"written by a newer vkscope (schema {SCHEMA_VERSION + 1}"),
        (cut, "truncated"),
        (text, "not an SQLite database"),
        (empty, "the file is empty (0 bytes)"),
        (tmp_path / "missing.vkscope", "no such file"),
        (tmp_path, "is a directory"),
    ):
        for command in (["report", path], ["query", path, "SELECT 1"], ["overlap", cap, path]):
            err = refused(*command)
            assert str(path) in err and words in err, err


def test_a_capture_with_no_workloads(tmp_path: Path) -> None:
    store = CaptureStore(tmp_path / "nothing.vkscope")
    store.finalize()
    err = refused("report", tmp_path / "nothing.vkscope")
    assert "holds no workloads" in err and "nothing to report" in err


@pytest.mark.parametrize(
    ("args", "words"),
    [
        (
            ["--frames", "9"],
            "--frames 9: the capture has no frame 9 (its frames with work: 0 to 4)",
        ),
        (["--frames", "3-12"], "no frame 5-12"),
        (["--frames", "50-"], "no frame 50-"),
        (["--frames", str(2**64 - 1)], f"no frame {2**64 - 1} "),
        (["--frames", "99999999999999999999"], "(frame numbers end at 2^64 - 1)"),
        (["--frames", "two"], "'two' is not a frame number"),
        (["--frames", "every:2"], "a report takes frame numbers and ranges"),
        (["--frames", "5-3"], "range '5-3' runs backwards"),
        (["--queue", "0-x"], "--queue '0-x'"),
        (["--queue", "99"], "--queue 99: the capture has no queue 99 (its queues with work: 0, 1)"),
        (["--type", "bogus"], "--type bogus: the capture has no bogus workload (its types: "),
        (["--type", "dispatch,trace_rays"], "the capture has no trace_rays workload"),
        (["--label", "no such pass"], "--label 'no such pass': is in no label path"),
        (["--label", "x*/y"], "--label 'x*/y': matches no label path"),
        (["--type", ","], "--type: no type given"),
        (["--format", "csv", "--table", "frames", "--table", "labels"], "writes one table"),
        (["--top", "-1"], "--top must be 0 or more"),
        (["-o", "/nonexistent/dir/out.csv"], "cannot write /nonexistent/dir/out.csv"),
    ],
)
def test_options_that_do_not_fit(cap: Path, args: list[str], words: str) -> None:
    err = refused("report", cap, *args)
    assert words in err, err


def test_filters_that_match_nothing_together_say_so(cap: Path) -> None:
    # Each filter names something the capture has; no workload has both.
    code, out, err = run("report", cap, "--type", "image_transfer", "--queue", "0", "--format",
                         "csv", "--table", "workloads")  # fmt: skip
    assert code == 0 and out.count("\n") == 1  # the heading only
    assert err == f"vkscope: no workload of {cap} matches --queue 0 --type image_transfer\n"


def test_query_formats(cap: Path) -> None:
    sql = "SELECT id, type, gpu_ns, timing FROM instances_view WHERE frame = 1 ORDER BY id"
    code, out, err = run("query", cap, sql, "--format", "csv")
    assert code == 0, err
    rows = list(csv.DictReader(io.StringIO(out)))
    assert [(r["type"], r["gpu_ns"], r["timing"]) for r in rows] == [
        ("renderpass", "400", "ok"), ("dispatch", "200", "ok"), ("buffer_transfer", "100", "ok"),
        ("dispatch", "300", "ok"), ("image_transfer", "", "untimed"),
    ]  # fmt: skip
    code, out, err = run("query", cap, sql, "--format", "json")
    assert code == 0, err
    assert [r["gpu_ns"] for r in json.loads(out)] == [400, 200, 100, 300, None]
    code, out, _ = run("query", cap, "SELECT excerpt, x'00ff' AS blob FROM diagnostics, "
                       "(SELECT 1) LIMIT 0", "--format", "json")  # fmt: skip
    assert code == 0 and json.loads(out) == []
    code, out, _ = run("query", cap, "SELECT x'00ff' AS blob", "--format", "json")
    assert json.loads(out) == [{"blob": "00ff"}]
    code, out, _ = run("query", cap, "SELECT key, value FROM meta WHERE key = 'status'")
    assert code == 0 and "status" in out and "complete" in out and "1 row" in out
    err = refused("query", cap, "SELECT * FROM no_such_table")
    assert "no such table: no_such_table" in err
    code, out, _ = run("query", cap, "SELECT id FROM workload_instances", "--max-rows", "3")
    assert code == 0 and "18 more rows" in out


def test_query_cannot_change_anything(cap: Path, tmp_path: Path) -> None:
    before = cap.read_bytes()
    other = tmp_path / "other.db"
    for sql, words in (
        ("DELETE FROM submits", "(DELETE submits)"),
        ("UPDATE meta SET value = 'x'", "(UPDATE meta)"),
        ("CREATE TABLE t (a)", "(INSERT sqlite_master)"),
        ("CREATE TEMP TABLE t (a)", "(INSERT sqlite_temp_master)"),
        (f"ATTACH '{other}' AS o", "(ATTACH"),
        (f"VACUUM INTO '{other}'", "(ATTACH"),
        ("PRAGMA user_version = 9", "(PRAGMA user_version=9)"),
        ("PRAGMA writable_schema = 1", "(PRAGMA writable_schema=1)"),
        ("PRAGMA journal_mode = WAL", "(PRAGMA journal_mode=WAL)"),
        ("PRAGMA query_only = 0", "(PRAGMA query_only=0)"),
        ("PRAGMA optimize", "(PRAGMA optimize)"),
        ("BEGIN", "(TRANSACTION BEGIN)"),
        ("BEGIN IMMEDIATE", "(TRANSACTION BEGIN)"),
        ("SAVEPOINT s", "(SAVEPOINT BEGIN)"),
        ("ANALYZE", "not authorized"),
        ("REINDEX", "not authorized"),
        ("SELECT 1; DELETE FROM submits", "one statement"),
        ("SELEC 1", "syntax error"),
    ):
        err = refused("query", cap, sql)
        assert "the query failed: SQLite says" in err and words in err, (sql, err)
    assert cap.read_bytes() == before
    assert not other.exists()
    assert sorted(p.name for p in cap.parent.iterdir()) == [cap.name]


def test_query_calls_only_functions_that_compute_a_value(cap: Path) -> None:
    # fts3_tokenizer hands out (and with two arguments replaces) a pointer inside the process;
    # load_extension would run a library's code; sqlite_log writes to the process's log.
    before = cap.read_bytes()
    for sql in (
        "SELECT fts3_tokenizer('simple')",
        "SELECT hex(fts3_tokenizer('simple')) FROM meta",
        "SELECT FTS3_TOKENIZER('simple', x'0000000000000000')",
        "SELECT load_extension('/nonexistent/lib.so')",
        "SELECT sqlite_log(1, 'x')",
        "SELECT 1 WHERE fts3_tokenizer('porter') IS NOT NULL",
    ):
        err = refused("query", cap, sql)
        assert "not authorized" in err and "(function " in err, (sql, err)
        assert "only SQLite's functions that compute a value" in err, err
    assert cap.read_bytes() == before
    assert sorted(p.name for p in cap.parent.iterdir()) == [cap.name]
    sql = ("SELECT count(*) AS n, max(abs(-2)), json_extract('{\"a\": 3}', '$.a') AS j, "
           "round(sqrt(16)), strftime('%Y', '2024-01-01') AS y, "
           "row_number() OVER () AS r, '[1]' ->> '$[0]' AS e FROM meta LIMIT 1")  # fmt: skip
    code, out, err = run("query", cap, sql, "--format", "json")
    assert code == 0, err
    (row,) = json.loads(out)
    assert (row["j"], row["y"], row["r"], row["e"]) == (3, "2024", 1, 1), row


def test_query_reads_with_pragmas_that_only_report(cap: Path) -> None:
    for sql, words in (
        ("PRAGMA table_info(submits)", "first_instance"),
        ("PRAGMA user_version", f"{SCHEMA_VERSION}"),
        ("PRAGMA quick_check", "ok"),
        ("EXPLAIN QUERY PLAN SELECT * FROM submits WHERE frame = 1", "submits_by_frame"),
        ("WITH n(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM n WHERE x < 3) SELECT sum(x) "
         "AS total FROM n", "6"),
    ):  # fmt: skip
        code, out, err = run("query", cap, sql, "--format", "csv")
        assert code == 0 and words in out, (sql, out, err)


def test_overlap_errors(cap: Path, tmp_path: Path) -> None:
    err = refused("overlap", cap, cap)
    assert "both captures were timed with serialization 'queue' and 'queue'" in err
    none = capture_from(tmp_path, scene("none", frames=2))
    err = refused("overlap", none, cap, "--frames", "3")
    assert "no frame 3" in err
    code, out, err = run(
        "overlap", cap, none, "--format", "csv", "--table", "workloads", "--frames", "0-1"
    )
    assert code == 0, err
    rows = list(csv.DictReader(io.StringIO(out)))
    assert len(rows) == 10 and {r["frame"] for r in rows} == {"0", "1"}
    assert {(r["type"], r["delta_ns"]) for r in rows if r["queue"] == "0"} == {
        ("renderpass", "50"), ("dispatch", "100"), ("buffer_transfer", "10"),
    }  # fmt: skip
