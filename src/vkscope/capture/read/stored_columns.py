"""The instance columns a capture stored when it was finalized (schema 10 on: `instance_columns`),
read back as the columnar read's record batches (columns.py) with no per-row work in SQLite.

Each row of `instance_columns` is one Arrow IPC stream of one record batch, compressed with
LZ4: the columns of columns.SCHEMA (its text columns dictionary-encoded), then a float64 column
`counter:NAME` for each counter the capture collected. meta.instance_columns says how many rows
and blobs there are and which counters; it is written in the same transaction as the blobs, so
a capture that has it has them all, and one without it (older, never finalized, killed while
they were written) is read row by row. Every blob is checked (its CRC-32, its schema, its rows)
before a batch of it is given out: a damaged one is a CorruptCaptureError, never a batch that
differs from what the rows say.
"""

from __future__ import annotations

import zlib
from collections.abc import Iterator, Sequence
from typing import Final

import msgspec
import pyarrow as pa
import pyarrow.compute as pc

from ..errors import CorruptCaptureError
from .columnar import META_KEY as META_KEY  # where it was, for the writer and tests
from .columnar import stored_columns_meta
from .reader import Capture

COUNTER_PREFIX: Final = "counter:"
_ENCODED: Final = pa.dictionary(pa.int32(), pa.string())


class StoredMeta(msgspec.Struct, forbid_unknown_fields=True):
    """meta.instance_columns: what the stored columns hold."""

    rows: int
    blobs: int
    counters: list[str]


_decode_meta = msgspec.json.Decoder(StoredMeta).decode


def stored_meta(capture: Capture) -> StoredMeta | None:
    """What the capture's stored columns hold; None where it has none."""
    text = stored_columns_meta(capture)
    if text is None:
        return None
    try:
        found = _decode_meta(text if isinstance(text, str | bytes) else b"")
    except msgspec.DecodeError as exc:
        raise _damaged(capture, f"its meta {META_KEY} does not parse ({exc})") from None
    if found.rows < 0 or found.blobs < 0:
        raise _damaged(capture, f"its meta {META_KEY} counts {found.rows} rows in {found.blobs}")
    return found


def stored_schema(counters: Sequence[str], base: pa.Schema) -> pa.Schema:
    """The blobs' schema: `base`, its text columns dictionary-encoded (a capture repeats a few
    labels, types and queues in every frame), then the counters."""
    fields = [pa.field(f.name, _ENCODED) if f.type == pa.string() else f for f in base]
    return pa.schema([*fields, *(pa.field(COUNTER_PREFIX + c, pa.float64()) for c in counters)])


def stored_batches(
    capture: Capture,
    meta: StoredMeta,
    base: pa.Schema,
    counters: Sequence[str],
    batch_rows: int,
    dictionaries: bool = False,
    columns: Sequence[str] | None = None,
) -> Iterator[pa.RecordBatch]:
    """The stored columns, batches of `base`'s columns (only `columns` of them, in `base`'s
    order, where given) and then `counters` (all among meta.counters), at most `batch_rows` rows
    each; the text columns as stored, dictionary-encoded, where `dictionaries`. A column not
    asked for is never decompressed."""
    expected = stored_schema(meta.counters, base)
    asked = None if columns is None else set(columns)
    wanted = base.names if asked is None else [n for n in base.names if n in asked]
    names = [*wanted, *counters]
    picked = [*wanted, *(COUNTER_PREFIX + c for c in counters)]
    # The first column (the id) is read always: each blob's rows are checked by it.
    included = sorted({0, *(expected.get_field_index(n) for n in picked)})
    _, rows = capture.execute(
        "SELECT id, first_instance, rows, crc32, data FROM instance_columns ORDER BY id"
    )
    seen = blobs = 0
    for blob_id, first, count, crc, data in rows:
        where = f"instance_columns blob {blob_id}"
        if blob_id != blobs or not isinstance(data, bytes):
            raise _damaged(capture, f"{where} is out of place or holds no bytes")
        if zlib.crc32(data) != crc:
            raise _damaged(capture, f"{where} does not match its CRC-32")
        batch = _batch(capture, where, data, expected, included)
        del data
        if batch.num_rows != count or (count and batch.column(0)[0].as_py() != first):
            raise _damaged(capture, f"{where} holds other rows than its row says")
        arrays = [batch.column(n) for n in picked]
        if not dictionaries:
            arrays = [_decoded(c) for c in arrays]
        whole = pa.RecordBatch.from_arrays(arrays, names=names)
        del batch, arrays
        for start in range(0, whole.num_rows, batch_rows):
            yield whole.slice(start, batch_rows)
        seen += count
        blobs += 1
    if (seen, blobs) != (meta.rows, meta.blobs):
        raise _damaged(
            capture,
            f"instance_columns holds {seen} rows in {blobs} blobs, meta.{META_KEY} says "
            f"{meta.rows} in {meta.blobs}",
        )


def _decoded(column: pa.Array) -> pa.Array:
    return column.dictionary_decode() if isinstance(column, pa.DictionaryArray) else column


def _batch(
    capture: Capture, where: str, data: bytes, expected: pa.Schema, included: list[int]
) -> pa.RecordBatch:
    """The blob's one batch, only its columns at `included` (ascending), once its schema is
    `expected`: the columns left out are never decompressed. One thread: a blob's columns
    decompress in a few milliseconds, less than handing them to the thread pool costs in CPU
    time (readers are measured per core: docs/bench/fleet.md)."""
    try:
        if not pa.ipc.open_stream(pa.py_buffer(data)).schema.equals(expected):
            raise _damaged(capture, f"{where} holds other columns than meta.{META_KEY} says")
        options = pa.ipc.IpcReadOptions(use_threads=False, included_fields=included)
        reader = pa.ipc.open_stream(pa.py_buffer(data), options=options)
        batches = list(reader)
        if len(batches) != 1:
            raise ValueError(f"{len(batches)} record batches, not one")
        batches[0].validate()
        return batches[0]
    except (pa.ArrowException, OSError, ValueError) as exc:
        raise _damaged(capture, f"{where} does not read as Arrow ({exc})") from None


def _damaged(capture: Capture, what: str) -> CorruptCaptureError:
    return CorruptCaptureError(capture.path, f"damaged: {' '.join(what.split())}")


def encode(batch: pa.RecordBatch, schema: pa.Schema) -> bytes:
    """A batch of the columnar read as a blob of instance_columns, of `schema` (stored_schema):
    one Arrow IPC stream, LZ4. Measured on the export's capture (bench/fleet_scale.py): LZ4 read
    back in a third of zstd's time, and the dictionaries made both a third to a sixth of the
    bytes."""
    columns = [
        pc.dictionary_encode(c) if field.type == _ENCODED else c
        for c, field in zip(batch.columns, schema, strict=True)
    ]
    sink = pa.BufferOutputStream()
    options = pa.ipc.IpcWriteOptions(compression="lz4")
    with pa.ipc.new_stream(sink, schema, options=options) as writer:
        writer.write_batch(pa.RecordBatch.from_arrays(columns, schema=schema))
    return bytes(sink.getvalue())
