"""The instance columns a capture stores when it is finalized (schema 10 on): on a real lavapipe
capture (the workload program under `vkscope run`, counted), they are what the row path reads,
column by column; a damaged blob is a CorruptCaptureError (exit 2 from the CLI, no traceback);
a capture without them (older, or whose columns were never written) reads row by row as before.
"""

from __future__ import annotations

import shutil
import sqlite3
import zlib
from collections.abc import Callable
from pathlib import Path

import pyarrow as pa
import pytest
from support.counted_captures import counted_capture

from vkscope.capture import CorruptCaptureError, open_capture
from vkscope.capture.read.column_store import restore_instance_columns
from vkscope.capture.read.columns import CHECKED_AS_READ, instance_batches
from vkscope.capture.read.stored_columns import META_KEY, stored_meta
from vkscope.cli import main

pytestmark = pytest.mark.vulkan


@pytest.fixture(scope="module")
def captured(workload: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Compute, render passes and secondaries, timed and counted, several frames."""
    return counted_capture(workload, tmp_path_factory.mktemp("stored"), frames=3)


def _table(
    path: Path, *, stored: bool, batch_rows: int = 1 << 17, dictionaries: bool = False
) -> pa.Table:
    with open_capture(path, cells_checked_as_read=CHECKED_AS_READ) as cap:
        counters = cap.counter_names()
        batches = list(instance_batches(cap, counters, batch_rows, stored=stored,
                                        dictionaries=dictionaries))  # fmt: skip
    if dictionaries:  # the text columns, as the plain batches have them
        assert any(pa.types.is_dictionary(c.type) for c in batches[0].columns)
        batches = [
            pa.RecordBatch.from_arrays(
                [c.cast(pa.string()) if pa.types.is_dictionary(c.type) else c for c in b.columns],
                names=b.schema.names,
            )
            for b in batches
        ]
    return pa.Table.from_batches(batches).combine_chunks()


@pytest.mark.parametrize("batch_rows", [7, 1 << 17])
def test_the_stored_columns_are_the_row_paths(captured: Path, batch_rows: int) -> None:
    with open_capture(captured) as cap:
        meta = stored_meta(cap)
        counters = cap.counter_names()
        instances = cap.workload_count()
    assert meta is not None and meta.rows == instances > 50 and meta.counters == list(counters)
    assert "compute_shader_invocations" in counters
    stored = _table(captured, stored=True, batch_rows=batch_rows)
    rows = _table(captured, stored=False)
    assert stored.schema.equals(rows.schema)
    for name in stored.column_names:
        assert stored.column(name).equals(rows.column(name)), name
    for dictionaries in (_table(captured, stored=True, batch_rows=batch_rows, dictionaries=True),
                         _table(captured, stored=False, dictionaries=True)):  # fmt: skip
        assert dictionaries.equals(rows)
    assert stored.column("compute_shader_invocations").null_count < stored.num_rows
    assert stored.column("gpu_ns").null_count < stored.num_rows


def test_columns_stored_in_several_blobs_read_as_one(captured: Path, tmp_path: Path) -> None:
    again = tmp_path / "again.vkscope"
    shutil.copy(captured, again)
    stored = restore_instance_columns(again, batch_rows=16)
    assert stored is not None and stored.blobs == -(-stored.rows // 16) > 2
    assert _table(again, stored=True).equals(_table(captured, stored=False))


def test_a_counter_not_stored_is_read_from_the_rows(captured: Path) -> None:
    with open_capture(captured) as cap:
        (batch,) = instance_batches(cap, ("no such counter",), 1 << 20)
    assert batch.column("no such counter").null_count == batch.num_rows


def _damage(captured: Path, tmp_path: Path, sql: str, *args: object) -> Path:
    damaged = tmp_path / "damaged.vkscope"
    shutil.copy(captured, damaged)
    with sqlite3.connect(damaged) as db:
        db.execute(sql, args)
    return damaged


def _flip_middle(data: bytes) -> bytes:
    middle = len(data) // 2
    return data[:middle] + bytes([data[middle] ^ 0x5A]) + data[middle + 1 :]


@pytest.mark.parametrize(
    ("sql", "blob", "same_crc"),
    [
        # a byte changed in the middle of the blob: its CRC-32 no longer matches
        ("", _flip_middle, False),
        # cut short, or one byte, with a CRC-32 that matches: Arrow itself refuses it
        ("", lambda data: data[:100], True),
        ("", lambda data: b"\x00", True),
        ("UPDATE instance_columns SET rows = rows + 1", None, False),
        ("DELETE FROM instance_columns", None, False),
        (f"UPDATE meta SET value = '{{\"rows\": 3}}' WHERE key = '{META_KEY}'", None, False),
    ],
)  # fmt: skip
def test_a_damaged_blob_is_a_capture_error(
    captured: Path,
    tmp_path: Path,
    sql: str,
    blob: Callable[[bytes], bytes] | None,
    same_crc: bool,
) -> None:
    damaged = _damage(captured, tmp_path, sql or "SELECT 1")
    with sqlite3.connect(damaged) as db:
        if blob is not None:
            (data,) = db.execute("SELECT data FROM instance_columns WHERE id = 0").fetchone()
            db.execute("UPDATE instance_columns SET data = ? WHERE id = 0", (blob(data),))
        if same_crc:
            db.create_function("crc32", 1, zlib.crc32)
            db.execute("UPDATE instance_columns SET crc32 = crc32(data)")
    with pytest.raises(CorruptCaptureError, match=r"damaged: .*instance_columns"):
        _table(damaged, stored=True)
    # The rows still say what they said.
    assert _table(damaged, stored=False).equals(_table(captured, stored=False))


def test_the_export_of_a_damaged_blob_exits_2(
    captured: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = tmp_path / "nightly"
    folder.mkdir()
    _damage(captured, folder, "UPDATE instance_columns SET crc32 = crc32 + 1 WHERE id = 0")
    assert main(["export", "--parquet", str(tmp_path / "ds"), str(folder)]) == 2
    err = capsys.readouterr().err
    assert "damaged.vkscope: skipped: " in err and "instance_columns blob 0" in err
    assert "Traceback" not in err


def test_a_capture_without_stored_columns_reads_its_rows(captured: Path, tmp_path: Path) -> None:
    """As a capture killed before its columns were stored is left."""
    bare = _damage(captured, tmp_path, "DELETE FROM meta WHERE key = ?", META_KEY)
    with sqlite3.connect(bare) as db:
        db.execute("DELETE FROM instance_columns")
    with open_capture(bare) as cap:
        assert stored_meta(cap) is None
    assert _table(bare, stored=True).equals(_table(captured, stored=True))
