"""The dataset's captures index (fleet/layout.py): one file holding every captures file's row,
which the engines read instead of a file per capture, only while it holds exactly the captures
in place; every writer brings it up to date."""

from __future__ import annotations

import shutil
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
from support.fleet import history

from vkscope.fleet import generate
from vkscope.fleet.engines import DuckDBEngine
from vkscope.fleet.layout import INDEX, Dataset
from vkscope.fleet.schema import CAPTURES


def _files_rows(dataset: Dataset) -> pa.Table:
    return pa.concat_tables(pq.read_table(p) for p in dataset.files("captures"))


def _captures(dataset: Dataset) -> pa.Table:
    engine = DuckDBEngine(dataset, threads=1)
    try:
        return engine.sql("SELECT * FROM captures ORDER BY capture_id")
    finally:
        engine.close()


def test_the_index_holds_every_captures_row_and_is_read(tmp_path: Path) -> None:
    dataset = history(tmp_path / "ds", builds=4, frames=2, workloads=4)
    index = pq.read_table(dataset.root / INDEX)
    assert index.schema.equals(CAPTURES)
    assert index.equals(_files_rows(dataset))  # in the files' order
    assert dataset.sources("captures") == [dataset.root / INDEX]
    assert dataset.sources("frames") == dataset.files("frames")
    ids = _captures(dataset).column("capture_id").to_pylist()
    assert ids == sorted(p.stem for p in dataset.files("captures")) and len(ids) == 8


def test_an_index_out_of_date_is_passed_over_then_rewritten(tmp_path: Path) -> None:
    dataset = history(tmp_path / "ds", builds=3, frames=2, workloads=4)
    whole = _captures(dataset)
    removed = dataset.files("captures")[0]
    kept = removed.with_suffix(".kept")
    shutil.move(removed, kept)  # a capture taken out by hand: the index holds one too many
    assert dataset.sources("captures") == dataset.files("captures")
    assert _captures(dataset).num_rows == whole.num_rows - 1
    shutil.move(kept, removed)
    (dataset.root / INDEX).write_bytes(b"not parquet")  # a damaged index: the files are read
    assert dataset.sources("captures") == dataset.files("captures")
    assert _captures(dataset).equals(whole)
    with dataset.writing():  # a writer that adds nothing still brings the index up to date
        pass
    assert dataset.sources("captures") == [dataset.root / INDEX]
    assert _captures(dataset).equals(whole)


def test_a_later_writer_adds_its_captures_to_the_index(tmp_path: Path) -> None:
    root = tmp_path / "ds"
    dataset = history(root, builds=2, frames=2, workloads=4)
    (root / INDEX).unlink()  # as a dataset written before the index was
    generate.write(dataset, generate.History(builds=3, frames=2, workloads=4))
    assert len(dataset.files("captures")) == 6
    assert dataset.sources("captures") == [root / INDEX]
    assert pq.read_table(root / INDEX).equals(_files_rows(dataset))


def test_a_captures_file_without_a_newer_column_reads_it_as_null(tmp_path: Path) -> None:
    dataset = history(tmp_path / "ds", builds=2, frames=2, workloads=4)
    first = dataset.files("captures")[0]
    pq.write_table(pq.read_table(first).drop_columns(["clocks"]), first)  # an older file
    (dataset.root / INDEX).unlink()
    with dataset.writing():
        pass
    index = pq.read_table(dataset.root / INDEX)
    assert index.schema.equals(CAPTURES)
    assert index.column("clocks").to_pylist() == [None] * 4
