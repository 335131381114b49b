"""open_capture on files that are not good captures: each gets its own error and message."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from vkscope.capture import (
    SCHEMA_VERSION,
    CaptureError,
    CaptureNotFoundError,
    CorruptCaptureError,
    EmptyCaptureError,
    NewerCaptureError,
    NotACaptureError,
    NotSQLiteError,
    open_capture,
)
from vkscope.capture.write.client import Stream
from vkscope.capture.write.store import CaptureStore, ingest_stream


def make_capture(path: Path, workloads: int = 2000) -> Path:
    s = Stream()
    s.hello()
    s.labels(1, ["a", "b"])
    for tag in range(1, workloads + 1):
        s.workload(tag, "renderpass", width=tag, height=2, draws=3, attachments=[])
    for first in range(1, workloads + 1, 100):
        s.submit([(t, 1) for t in range(first, min(first + 100, workloads + 1))])
    s.goodbye()
    store = CaptureStore(path)
    ingest_stream(store, "test", [s.data()])
    assert store.finalize() == "complete"
    return path


def test_a_good_capture_opens(tmp_path: Path) -> None:
    with open_capture(make_capture(tmp_path / "ok.vkscope")) as cap:
        assert cap.meta.schema_version == SCHEMA_VERSION
        assert cap.workload_count() == 2000
        cap.check()


def test_missing_file(tmp_path: Path) -> None:
    with pytest.raises(CaptureNotFoundError, match="no such file"):
        open_capture(tmp_path / "nothing.vkscope")


def test_empty_file(tmp_path: Path) -> None:
    path = tmp_path / "empty.vkscope"
    path.touch()
    with pytest.raises(EmptyCaptureError, match=r"empty \(0 bytes\)") as info:
        open_capture(path)
    assert str(path) in str(info.value)


def test_text_file(tmp_path: Path) -> None:
    path = tmp_path / "notes.txt"
    path.write_text("these are not the frames you are looking for\n" * 10)
    with pytest.raises(NotSQLiteError, match="not an SQLite database") as info:
        open_capture(path)
    assert "these are not t" in str(info.value)


def test_directory(tmp_path: Path) -> None:
    with pytest.raises(NotSQLiteError, match="is a directory"):
        open_capture(tmp_path)


def test_sqlite_but_not_a_capture(tmp_path: Path) -> None:
    path = tmp_path / "other.db"
    with sqlite3.connect(path) as db:
        db.execute("CREATE TABLE recipes (name TEXT)")
    with pytest.raises(NotACaptureError, match="an SQLite database, but not a vkscope capture"):
        open_capture(path)


def test_newer_schema(tmp_path: Path) -> None:
    path = make_capture(tmp_path / "future.vkscope", workloads=10)
    with sqlite3.connect(path) as db:
        db.execute(f"PRAGMA user_version = {SCHEMA_VERSION + 7}")
    with pytest.raises(NewerCaptureError) as info:
        open_capture(path)
    assert (
        f"written by a newer vkscope (schema {SCHEMA_VERSION + 7}, this one reads up to "
        f"{SCHEMA_VERSION})" in str(info.value)
    )
    assert info.value.file_version == SCHEMA_VERSION + 7


@pytest.mark.parametrize("keep", [0.5, 0.9])
def test_truncated_capture(tmp_path: Path, keep: float) -> None:
    path = make_capture(tmp_path / "cut.vkscope")
    data = path.read_bytes()
    path.write_bytes(data[: int(len(data) * keep)])
    with pytest.raises(CorruptCaptureError, match="truncated"):
        open_capture(path)


def test_truncated_to_less_than_a_header(tmp_path: Path) -> None:
    path = make_capture(tmp_path / "cut.vkscope")
    path.write_bytes(path.read_bytes()[:60])
    with pytest.raises(CorruptCaptureError, match="shorter than an SQLite header"):
        open_capture(path)


def test_damage_inside_is_found_when_read(tmp_path: Path) -> None:
    path = make_capture(tmp_path / "bad.vkscope")
    data = bytearray(path.read_bytes())
    page = int.from_bytes(data[16:18], "big")
    for start in range(2 * page, len(data) - page, page):  # every b-tree page but the first
        data[start : start + 16] = b"\xa5" * 16
    path.write_bytes(bytes(data))
    with pytest.raises(CorruptCaptureError, match="damaged"), open_capture(path) as cap:
        list(cap.workloads())
        cap.check()


def test_every_error_is_a_capture_error() -> None:
    for cls in (CaptureNotFoundError, EmptyCaptureError, NotSQLiteError, NotACaptureError,
                CorruptCaptureError, NewerCaptureError):  # fmt: skip
        assert issubclass(cls, CaptureError)


def test_only_the_capture_package_opens_capture_files() -> None:
    # The schema and its compatibility rules live in one package: every reader goes through it.
    package = Path(__file__).resolve().parents[1] / "src" / "vkscope"
    for source in package.rglob("*.py"):
        if "capture" in source.relative_to(package).parts:
            continue
        text = source.read_text()
        for needle in ("sqlite3.connect", "ATTACH DATABASE", "table_info", "user_version"):
            assert needle not in text, f"{source.relative_to(package)} uses {needle}"
