"""Provenance in the capture: `vkscope run --tag KEY=VALUE` and the capture's own id (schema 8),
and a capture of schema 7, which has neither, still opens."""

from __future__ import annotations

import re
import sqlite3
import tempfile
from pathlib import Path

import pytest

from harness.env import base_env, run, vkscope_cli
from vkscope.capture import open_capture
from vkscope.capture.write.store import CaptureStore

ODD = "forêt 'night' \"v2\" / = % ; \\ \t 雪"


@pytest.mark.vulkan
def test_run_stores_its_tags_and_an_id(tmp_path: Path, workload: Path) -> None:
    capture = tmp_path / "tagged.vkscope"
    res = run(
        [vkscope_cli(), "run", "--no-report", "--no-trace", "--no-html", "-o", capture,
         "--tag", "build=1234", "--tag", f"scene={ODD}", "--tag", "empty=",
         "--", workload, "--scenario", "compute"],
        base_env(), cwd=tmp_path,
    )  # fmt: skip
    assert res.returncode == 0, res.stderr
    with open_capture(capture) as cap:
        assert cap.tags() == {"build": "1234", "scene": ODD, "empty": ""}
        assert cap.meta.capture_id is not None and re.fullmatch("[0-9a-f]{32}", cap.meta.capture_id)


@pytest.mark.parametrize(
    ("tag", "message"),
    [
        ("build", "--tag 'build': expected KEY=VALUE"),
        ("my build=1", "tag name 'my build'"),
        ("=1", "tag name ''"),
    ],
)
def test_bad_tags_are_refused_before_launch(tag: str, message: str, tmp_path: Path) -> None:
    res = run([vkscope_cli(), "run", "--tag", tag, "--", "true"], base_env(), cwd=tmp_path)
    assert res.returncode == 2 and message in res.stderr, res.stderr
    assert res.stderr.count("\n") == 1
    assert not list(tmp_path.iterdir())


def test_a_tag_given_twice_is_refused(tmp_path: Path) -> None:
    args = ["--tag", "build=1", "--tag", "build=2"]
    res = run([vkscope_cli(), "run", *args, "--", "true"], base_env(), cwd=tmp_path)
    assert res.returncode == 2 and "--tag build given twice ('1' and '2')" in res.stderr


def test_a_capture_of_schema_7_reads_without_tags() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "old.vkscope"
        store = CaptureStore(path, tags={"build": "7"})
        store.finalize()
        with open_capture(path) as cap:
            assert cap.tags() == {"build": "7"}
        with sqlite3.connect(path) as db:  # what a vkscope of schema 7 wrote
            db.execute("DROP TABLE tags")
            db.execute("DELETE FROM meta WHERE key = 'capture_id'")
            db.execute("UPDATE meta SET value = 7 WHERE key = 'schema_version'")
            db.execute("PRAGMA user_version = 7")
        with open_capture(path) as cap:
            assert cap.schema_version == 7
            assert cap.tags() == {} and cap.meta.capture_id is None
