"""Workload instances as columns: Apache Arrow record batches, for readers that take every
instance of a capture at once (the fleet export) rather than one record at a time.

A batch holds what the records hold (instances.py), by the same rules: each instance's place
(process, device, frame, queue), its identity (identity.py: the queue as family.index, the label
path, the type and the ordinal within its frame), its usable GPU time (gpu_time.py), its timing
status, its WORKLOAD's extracted fields and its counters (from its annex or, for khr counters,
joined over their passes: performance_query.py). tests/test_read_model.py holds the columns to
the records, instance by instance.

No Python object is made per instance:

- Rows come from SQLite in bulk. Where the reader's connection presents none of the tables read
  here through its temp schema, a second connection, through the ADBC SQLite driver, reads each
  statement's rows straight into Arrow arrays. Where it does present some (a capture of an older
  schema version, one never finalized, khr counters joined over their passes), only that
  connection sees them, and its cursor's rows are turned into arrays a batch at a time.
- The queue's family.index is QUEUE_SQL, per submit. The joins of an instance to its submit,
  WORKLOAD and label stack are array lookups, and the identity's ordinal is counted with numpy:
  the form of ORDINAL_SQL that a stream in submission order takes (as identity.Ordinals is for
  records), each scope's count carried from batch to batch while its frame is open.
- Counters: each instance's counters object, as JSON text from SQLite, parsed by Arrow's JSON
  reader into a column per counter.

Memory grows with the batch and the frames open at once, not with the capture.

A capture finalized by schema 10 on holds these columns already, written once by the capture
server when it finalized the file (write/instance_columns.py): they are read from there
(stored_columns.py) and none of the above runs.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator, Sequence
from itertools import islice
from typing import Any, Final

import msgspec
import numpy as np
import numpy.typing as npt
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.json as pa_json

from ..errors import CaptureError, CorruptCaptureError
from .gpu_time import gpu_ns_sql
from .identity import QUEUE_SQL, QUEUES_JOIN
from .numpy_arrow import arrow_bools, arrow_numbers
from .reader import Capture
from .stored_columns import stored_batches, stored_meta

BATCH_ROWS: Final = 131_072
# The tables whose cells this reader checks as it reads them (a cell of another type than its
# column holds is a CaptureError), so that open_capture need not check them first.
CHECKED_AS_READ: Final = ("submits", "workloads", "workload_instances")

Ints = npt.NDArray[np.int64]

# The tables read here: where the reader's connection presents any of them in its temp schema,
# rows are read through that connection (Capture.reads_file_directly).
_READ: Final = ("submits", "workloads", "workload_instances", "label_stacks", "queues")

# A text column that may be NULL, as text that never is ('' for NULL, '=' before a value): the
# ADBC driver types a column by its first rows and refuses a later value of another type.
_TEXT: Final = "coalesce('=' || {}, '')"

_SUBMITS: Final = f"""
SELECT s.id, s.process, s.device, s.queue, s.frame, {QUEUE_SQL}
FROM submits s {QUEUES_JOIN} ORDER BY s.id
"""
EXTRACTED: Final = ("draws", "width", "height", "groups_x", "groups_y", "groups_z",
                    "invocations", "bytes", "pixels")  # fmt: skip
_WORKLOADS: Final = (
    f"SELECT w.process, w.tag_id, {_TEXT.format('w.type')}, "
    + ", ".join(f"w.{c}" for c in EXTRACTED)
    + " FROM {workloads} w"
)
_LABEL_STACKS: Final = "SELECT process, device, id, path, label_path FROM label_stacks"
_ANNEX_COUNTERS: Final = "json_extract(i.annex, '$.counters')"
_INSTANCES: Final = f"""
SELECT i.id, i.submit_row, i.tag_id, i.label_stack_id,
       {gpu_ns_sql("i.gpu_begin_ns", "i.gpu_end_ns")},
       json_array(i.timing, i.timing_reason, i.serialization),
       CASE json_type(i.annex, '$.clock_changed') WHEN 'true' THEN 1 WHEN 'false' THEN 0 END,
       {_TEXT.format("%(counters)s")}
FROM workload_instances i %(khr)s ORDER BY i.id
"""
_KHR: Final = {"khr": "LEFT JOIN temp.khr_joined k ON k.id = i.id",
               "counters": f"coalesce(k.counters, {_ANNEX_COUNTERS})"}  # fmt: skip
_NO_KHR: Final = {"khr": "", "counters": _ANNEX_COUNTERS}

# What each batch holds, before the counters (a float64 column each, by the names asked for).
SCHEMA: Final = pa.schema(
    [
        pa.field("id", pa.int64()),  # the instance's row: its order of submission
        pa.field("process", pa.int64()),
        pa.field("device", pa.int64()),
        pa.field("frame", pa.int64()),
        pa.field("queue_id", pa.int64()),  # the layer's number for the queue, in this capture
        pa.field("queue", pa.string()),  # the identity's queue: family.index
        pa.field("label_path", pa.string()),  # its labels joined by "/" ("" for none)
        pa.field("labels_json", pa.string()),  # its labels as the identity compares them
        pa.field("type", pa.string()),  # NULL: the layer never described its tagID
        pa.field("ordinal", pa.int64()),  # the identity's ordinal within its frame
        pa.field("gpu_ns", pa.int64()),  # its usable GPU time; NULL: none
        pa.field("timing", pa.string()),
        pa.field("timing_reason", pa.string()),
        pa.field("serialization", pa.string()),
        *(pa.field(c, pa.int64()) for c in EXTRACTED),
        pa.field("clock_changed", pa.bool_()),  # a sampler saw the GPU clock change during it
    ]
)


_decode = msgspec.json.Decoder().decode


def _untext(array: pa.Array) -> pa.Array:
    """A _TEXT column's text back, NULL where it was."""
    return pc.if_else(
        pc.equal(array, ""), pa.scalar(None, pa.string()), pc.utf8_slice_codeunits(array, 1)
    )


def _timing(arrays: pa.Array, dictionaries: bool) -> list[pa.Array]:
    """The timing, timing_reason and serialization columns, from their JSON arrays: each
    distinct array decoded once (a capture has a few)."""
    encoded = pc.dictionary_encode(arrays)
    decoded = [_decode(v) for v in encoded.dictionary.to_pylist()]  # text: the columns' affinity
    columns = (pa.array([d[n] for d in decoded], pa.string()) for n in range(3))
    return [_Texts(c).of(encoded.indices, dictionaries) for c in columns]


class _Texts:
    """A text column of a small table (or of a batch's distinct values), dictionary-encoded
    once: the values of the rows an instance batch refers to, as text or dictionary-encoded."""

    def __init__(self, values: pa.Array) -> None:
        self.values = values
        self.encoded = pc.dictionary_encode(values)

    def of(self, rows: pa.Array, dictionaries: bool) -> pa.Array:
        """The values at `rows` (NULL where a row is NULL)."""
        if not dictionaries:
            return self.values.take(rows)
        encoded = self.encoded
        return pa.DictionaryArray.from_arrays(encoded.indices.take(rows), encoded.dictionary)


def _ints(array: pa.Array | pa.ChunkedArray, null: int = 0) -> Ints:
    """An integer column as int64 values, NULL as `null`."""
    return np.asarray(pc.fill_null(array, null).to_numpy(), np.int64)


def _nulls(array: pa.Array | pa.ChunkedArray) -> Ints:
    return np.asarray(array.is_null().to_numpy(zero_copy_only=False), np.int64)


def _codes(*columns: Ints) -> tuple[Ints, int]:
    """Dense codes of the rows of equally long columns (equal rows, equal codes), and how many."""
    n = len(columns[0])
    if not n:
        return np.zeros(0, np.int64), 0
    order = np.lexsort(columns[::-1])
    new = np.zeros(n, bool)
    new[0] = True
    for column in columns:
        ordered = column[order]
        new[1:] |= ordered[1:] != ordered[:-1]
    codes = np.empty(n, np.int64)
    codes[order] = np.cumsum(new) - 1
    return codes, int(new.sum())


class _Lookup:
    """A table's rows by an integer key within a group (a process; a process and a device):
    find() gives each query's row of the table, -1 where it has none."""

    def __init__(self, groups: Sequence[Ints], keys: Ints) -> None:
        self._tables: dict[tuple[int, ...], tuple[Ints, Ints]] = {}
        codes, n = _codes(*groups)
        for code in range(n):
            rows = np.flatnonzero(codes == code)
            order = np.argsort(keys[rows], kind="stable")
            group = tuple(int(g[rows[0]]) for g in groups)
            self._tables[group] = (keys[rows][order], rows[order])

    def find(self, groups: Sequence[Ints], keys: Ints) -> Ints:
        out = np.full(len(keys), -1, np.int64)
        if len(self._tables) == 1:  # one process (and device): the usual capture
            (group,) = self._tables
            same = np.logical_and.reduce([g == v for g, v in zip(groups, group, strict=True)])
            self._find(group, np.flatnonzero(same), keys, out)
            return out
        codes, n = _codes(*groups)
        for code in range(n):
            rows = np.flatnonzero(codes == code)
            self._find(tuple(int(g[rows[0]]) for g in groups), rows, keys, out)
        return out

    def _find(self, group: tuple[int, ...], rows: Ints, keys: Ints, out: Ints) -> None:
        found = self._tables.get(group)
        if found is None or not len(rows):
            return
        table, index = found
        at = np.minimum(np.searchsorted(table, keys[rows]), len(table) - 1)
        hit = table[at] == keys[rows]
        out[rows[hit]] = index[at[hit]]


class _Ordinals:
    """ORDINAL_SQL over batches in submission order: per scope (a frame's queue, a label path and
    a type, as one integer), how many instances came before. A frame's scopes are dropped once
    the batches are past its last submit."""

    def __init__(self, frame_of_scope: Ints, frame_last_submit: Ints, scale: int) -> None:
        self._frame_of = frame_of_scope  # by a scope's queue part: key // scale
        self._last = frame_last_submit
        self._scale = scale
        self._keys = np.zeros(0, np.int64)
        self._counts = np.zeros(0, np.int64)

    def count(self, scopes: Ints, last_submit: int) -> Ints:
        """The ordinals of a batch's instances; `last_submit`: its last instance's submit row."""
        unique, inverse, sizes = np.unique(scopes, return_inverse=True, return_counts=True)
        inverse = inverse.reshape(-1)
        carried = np.zeros(len(unique), np.int64)
        if len(self._keys):
            at = np.minimum(np.searchsorted(self._keys, unique), len(self._keys) - 1)
            carried = np.where(self._keys[at] == unique, self._counts[at], 0)
        order = np.argsort(inverse, kind="stable")
        rank = np.empty(len(scopes), np.int64)
        rank[order] = np.arange(len(scopes)) - np.repeat(np.cumsum(sizes) - sizes, sizes)
        ordinals: Ints = carried[inverse] + rank
        # The counts after this batch, for the frames that go on past it.
        kept = ~np.isin(self._keys, unique, assume_unique=True)
        keys = np.concatenate((self._keys[kept], unique))
        counts = np.concatenate((self._counts[kept], carried + sizes))
        going_on = self._last[self._frame_of[keys // self._scale]] >= last_submit
        order = np.argsort(keys[going_on])
        self._keys, self._counts = keys[going_on][order], counts[going_on][order]
        return ordinals


class _Rows:
    """Statements' rows as Arrow arrays: through the ADBC driver on the file where `direct`,
    else through the reader's own connection."""

    def __init__(self, capture: Capture, direct: bool, batch_rows: int) -> None:
        self._capture = capture
        self._batch_rows = batch_rows
        self._adbc: Any = None
        self.direct = direct
        if direct:
            import adbc_driver_sqlite.dbapi as adbc

            self._error: type[Exception] = adbc.Error
            try:
                self._adbc = adbc.connect(capture.uri)
            except adbc.Error as exc:
                raise CaptureError(capture.path, f"cannot open: {exc}") from None

    def close(self) -> None:
        if self._adbc is not None:
            self._adbc.close()

    def batches(self, sql: str, types: Sequence[pa.DataType]) -> Iterator[list[pa.Array]]:
        """The statement's rows, a batch at a time, as arrays of `types`; a value of another
        type is a CaptureError (the file is damaged)."""
        if self._adbc is None:
            _, rows = self._capture.execute(sql)
            while chunk := list(islice(rows, self._batch_rows)):
                values = zip(*chunk, strict=True)
                try:
                    yield [pa.array(v, t) for v, t in zip(values, types, strict=True)]
                except (pa.ArrowInvalid, pa.ArrowTypeError, OverflowError) as exc:
                    raise self.damaged(str(exc)) from None
            return
        cursor = self._adbc.cursor()
        try:
            cursor.adbc_statement.set_options(
                **{"adbc.sqlite.query.batch_rows": str(self._batch_rows)}
            )
            cursor.execute(sql)
            for batch in cursor.fetch_record_batch():
                yield [self._typed(c, t) for c, t in zip(batch.columns, types, strict=True)]
        except (self._error, pa.ArrowException, OSError) as exc:  # OSError: what the batches raise
            raise self.damaged(str(exc)) from None
        finally:
            cursor.close()

    def _typed(self, array: pa.Array, type: pa.DataType) -> pa.Array:
        if array.type == type:
            return array
        if pa.types.is_null(array.type):
            return pa.nulls(len(array), type)
        raise self.damaged(f"{array.type} values where the column holds {type}")

    def damaged(self, what: str) -> CaptureError:
        return CorruptCaptureError(self._capture.path, f"damaged: {' '.join(what.split())}")

    def table(self, sql: str, types: Sequence[pa.DataType]) -> list[pa.Array]:
        """All of a statement's rows, a column each."""
        columns: list[list[pa.Array]] = [[] for _ in types]
        for batch in self.batches(sql, types):
            for column, array in zip(columns, batch, strict=True):
                column.append(array)
        return [
            pa.concat_arrays(c) if c else pa.array([], t)
            for c, t in zip(columns, types, strict=True)
        ]


def instance_batches(
    capture: Capture,
    counters: Sequence[str] = (),
    batch_rows: int = BATCH_ROWS,
    *,
    stored: bool = True,
    dictionaries: bool = False,
    columns: Sequence[str] | None = None,
) -> Iterator[pa.RecordBatch]:
    """Every instance of the capture in submission order, as record batches of SCHEMA followed
    by a float64 column for each name in `counters` (NULL where an instance has no number for
    it). Raises CaptureError where SQLite cannot read the file.

    Where the capture stored its columns when it was finalized (stored_columns.py) and they
    hold every counter asked for, they are read instead of the rows, unless `stored` is False.

    `dictionaries`: the text columns dictionary-encoded (as stored: no decoding), for a reader
    that groups by them or writes them on dictionary-encoded. `columns`: only these of SCHEMA's
    (in its order), for a reader that needs few: the stored columns left out are never read."""
    meta = stored_meta(capture) if stored else None
    if meta is not None and set(counters) <= set(meta.counters):
        yield from stored_batches(
            capture, meta, SCHEMA, counters, batch_rows, dictionaries, columns
        )
        return
    rows = _Rows(capture, capture.reads_file_directly(_READ), batch_rows)
    with contextlib.closing(rows):
        keep = None if columns is None else set(columns) | set(counters)
        for batch in _Instances(capture, rows, counters, dictionaries).batches():
            if keep is not None:
                batch = batch.select([n for n in batch.schema.names if n in keep])
            yield batch


class _Instances:
    """The small tables, held while the instances stream past them."""

    def __init__(
        self, capture: Capture, rows: _Rows, counters: Sequence[str], dictionaries: bool
    ) -> None:
        self._rows = rows
        self._counters = list(counters)
        self._dictionaries = dictionaries
        i64, text = pa.int64(), pa.string()
        # Submits: where their instances ran, and the frame and queue they count ordinals in.
        s = rows.table(_SUBMITS, (i64, i64, i64, i64, i64, text))
        self._submit_row = _ints(s[0])
        self._process, self._device, self._queue_id, self._frame = s[1:5]
        self._queue = _Texts(s[5])
        process, no_device, device = _ints(s[1]), _nulls(s[2]), _ints(s[2])
        frames, n_frames = _codes(process, no_device, device, _nulls(s[4]), _ints(s[4]))
        self._scope, n_scopes = _codes(frames, _nulls(s[3]), _ints(s[3]))
        self._label_device = np.where(no_device == 1, -1, device)  # NULL meets no label stack
        # Workloads: each type (a code of the scope) and the extracted fields.
        w = rows.table(
            _WORKLOADS.format(workloads=capture.workloads_table()),
            (i64, i64, text, *(i64 for _ in EXTRACTED)),
        )
        self._workloads = _Lookup((_ints(w[0]),), _ints(w[1]))
        self._type = _Texts(_untext(w[2]))
        # TYPE_SQL: "" for a type the layer never gave, as for a tagID never described (last).
        types = pc.dictionary_encode(
            pa.concat_arrays([pc.fill_null(self._type.values, ""), pa.array([""])])
        )
        self._type_code = _ints(types.indices)
        n_types = len(types.dictionary)
        self._extracted = w[3:]
        # Label stacks: each path (a code of the scope); past the last, an instance without.
        ls = rows.table(_LABEL_STACKS, (i64, i64, i64, text, text))
        self._stacks = _Lookup((_ints(ls[0]), _ints(ls[1])), _ints(ls[2]))
        self._labels_json = _Texts(pa.concat_arrays([ls[3], pa.array(["[]"])]))
        self._label_path = _Texts(pa.concat_arrays([ls[4], pa.array([""])]))
        paths = self._labels_json.encoded
        self._path_code = _ints(paths.indices)
        self._n_paths, self._n_types = len(paths.dictionary), n_types
        frame_of_scope = np.zeros(n_scopes, np.int64)
        frame_of_scope[self._scope] = frames
        last = np.full(max(n_frames, 1), -1, np.int64)
        np.maximum.at(last, frames, self._submit_row)
        self._ordinals = _Ordinals(frame_of_scope, last, self._n_paths * n_types)
        self._sql = _INSTANCES % (_NO_KHR if rows.direct else _KHR)

    def batches(self) -> Iterator[pa.RecordBatch]:
        i64, text = pa.int64(), pa.string()
        types = (i64, i64, i64, i64, i64, text, i64, text)
        names = [*SCHEMA.names, *self._counters]
        for b in self._rows.batches(self._sql, types):
            b, at = self._in_submits(b)
            if len(at):
                yield pa.RecordBatch.from_arrays(self._columns(b, at), names=names)

    def _in_submits(self, b: list[pa.Array]) -> tuple[list[pa.Array], Ints]:
        """The batch without instances outside any submit (the records have none either), and
        each one's submit (its index in the submits)."""
        rows, submits = _ints(b[1]), self._submit_row
        if not len(submits):
            return b, np.zeros(0, np.int64)
        at = np.minimum(np.searchsorted(submits, rows), len(submits) - 1)
        inside = submits[at] == rows
        if inside.all():
            return b, at
        return [c.filter(arrow_bools(inside)) for c in b], at[inside]

    def _columns(self, b: list[pa.Array], at: Ints) -> list[pa.Array]:
        sub = arrow_numbers(at)
        process = _ints(self._process.take(sub))
        workload = self._workloads.find((process,), _ints(b[2]))
        stack = self._stacks.find((process, self._label_device[at]), _ints(b[3]))
        stack = np.where(stack >= 0, stack, len(self._path_code) - 1)
        kind = self._type_code[workload]  # -1: the last, a tagID never described
        scopes = (self._scope[at] * self._n_paths + self._path_code[stack]) * self._n_types + kind
        ordinals = self._ordinals.count(scopes, int(self._submit_row[at[-1]]))
        undescribed = workload < 0
        described = arrow_numbers(workload, undescribed)
        labels = arrow_numbers(stack)
        text = self._dictionaries
        return [
            b[0],
            arrow_numbers(process),
            self._device.take(sub),
            self._frame.take(sub),
            self._queue_id.take(sub),
            self._queue.of(sub, text),
            self._label_path.of(labels, text),
            self._labels_json.of(labels, text),
            self._type.of(described, text),
            arrow_numbers(ordinals),
            b[4],
            *_timing(b[5], text),
            *(c.take(described) for c in self._extracted),
            b[6].cast(pa.bool_()),
            *self._counter_columns(_untext(b[7])),
        ]

    def _counter_columns(self, text: pa.Array) -> list[pa.Array]:
        if not self._counters:
            return []
        valid = text.is_valid()
        values = text.filter(valid)
        parsed = counter_values(values, self._counters)
        index = np.full(len(text), -1, np.int64)
        index[np.asarray(valid.to_numpy(zero_copy_only=False), bool)] = np.arange(len(values))
        at = arrow_numbers(index, index < 0)
        return [column.take(at) for column in parsed]


def counter_values(objects: pa.Array, names: Sequence[str]) -> list[pa.Array]:
    """Counters objects (JSON text, none NULL) as a float64 column per name: NULL where an
    object has no number of that name (the records' `counters` leave such values out)."""
    schema = pa.schema([pa.field(n, pa.float64()) for n in dict.fromkeys(names)])
    if not len(objects):
        return [pa.array([], pa.float64()) for _ in names]
    lines = pc.binary_join_element_wise(objects, pa.scalar(""), "\n")  # each with its newline
    offsets = np.frombuffer(lines.buffers()[1], np.int32)[lines.offset :]
    start, end = int(offsets[0]), int(offsets[len(lines)])
    try:
        table = pa_json.read_json(
            pa.BufferReader(lines.buffers()[2].slice(start, end - start)),
            read_options=pa_json.ReadOptions(use_threads=False, block_size=end - start + 1),
            parse_options=pa_json.ParseOptions(
                explicit_schema=schema, unexpected_field_behavior="ignore"
            ),
        )
        return [table.column(n).combine_chunks() for n in names]
    except pa.ArrowInvalid:  # a value that is not a number (a file other tools wrote): one by one
        decoded = [_decode(v) for v in objects.to_pylist()]
        return [pa.array([_number(d, n) for d in decoded], pa.float64()) for n in names]


def _number(counters: Any, name: str) -> float | None:
    value = counters.get(name) if isinstance(counters, dict) else None
    return float(value) if isinstance(value, int | float) else None  # as the records have it
