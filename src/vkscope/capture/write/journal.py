"""The journal: where a capture being written keeps the messages that come with every workload,
submission or frame (WORKLOAD, SUBMIT, SUBMIT_DONE, ANNEX and FRAME).

Those messages are nearly all of a busy stream, and turning each into table rows as it arrives
costs several microseconds of the capture host's CPU per message, on the cores the application
runs on: an INSERT binds each value, and updates the table's indexes. So while capturing, the
store appends them to the `journal` table, a connection's messages of one commit in one row per
kind, each row's entries encoded with msgpack in one call; build.py turns the journal into the
submits, workloads, workload_instances, annexes and frames tables when the capture is
finalized, and readers of a capture that was not finalized (still being written, or killed) do
the same in their own temporary schema. Each journal row is committed with the rest of its
batch, so a capture killed at any point keeps every message up to its last commit.
"""

from __future__ import annotations

from typing import Any, Final

import msgspec

from ...protocol import FRAME, WORKLOAD, split_run
from ..errors import JournalError
from ..schema import storable

WORKLOADS: Final = "workloads"
SUBMITS: Final = "submits"
ANNEXES: Final = "annexes"
FRAMES: Final = "frames"
SUBMIT_ROWS: Final = "submit_rows"
COMPLETIONS: Final = "completions"

# (stream offset of the first frame, frames): consecutive frames of one message type, as they
# were sent (frames() reads them): WORKLOADs in a WORKLOADS row, FRAMEs in a FRAMES row.
RunEntry = tuple[int, bytes]
# (submits.id, id of its first instance, submitID, [(tagID, label stack id), ...]): a SUBMIT.
SubmitEntry = tuple[int, int, int, list[tuple[int, int]]]
# The submits row of a SUBMIT, in the order of build.SUBMIT_COLUMNS (an ID past i64 as
# schema.to_sql_int stores it, when one of the row's values was past 64 bits).
SubmitRow = tuple[
    int, int, int, int | None, int | None, int | None, int | None, str | None, int | None, int, int
]
# (submitID, cpu_ns, stream offset): a SUBMIT_DONE, for the last submit row with that submitID.
Completion = tuple[int, int | None, int]
# (submitID, tagID, offset, payload JSON, submits.id of the last SUBMIT received before it): an
# ANNEX, whose payload is a JSON object. The last field places it among the SUBMITs, which
# says which one it names when a submitID was sent twice (build.py).
AnnexEntry = tuple[int, int, int, bytes, int]

# `count`: the rows a journal row stands for (workloads, instances or annexes), which is what
# finalizing shows its progress in.
INSERT: Final = "INSERT INTO journal (connection, process, kind, count, data) VALUES (?,?,?,?,?)"

_ENTRY_TYPES: Final[dict[str, Any]] = {
    WORKLOADS: list[RunEntry],
    SUBMITS: list[SubmitEntry],
    ANNEXES: list[AnnexEntry],
    FRAMES: list[RunEntry],
    SUBMIT_ROWS: list[SubmitRow],
    COMPLETIONS: list[Completion],
}
_DECODERS: Final = {kind: msgspec.msgpack.Decoder(t) for kind, t in _ENTRY_TYPES.items()}
_encode = msgspec.msgpack.Encoder().encode


def encode(entries: list[Any]) -> bytes:
    return _encode(entries)


def encode_rows(rows: list[Any]) -> bytes:
    """Entries of plain values (submit rows, completions); a value msgpack cannot hold (an
    integer past 64 bits, text that is not valid UTF-8) is first made storable, as an INSERT
    would have stored it. Rare, so the fast path pays nothing for it."""
    try:
        return _encode(rows)
    except (OverflowError, ValueError):
        return _encode([tuple(map(storable, row)) for row in rows])


def decode(row_id: int, kind: str, data: bytes) -> list[Any]:
    decoder = _DECODERS.get(kind)
    if decoder is None:
        raise JournalError(f"journal row {row_id} is of an unknown kind {kind!r}")
    try:
        return decoder.decode(data)  # type: ignore[no-any-return]
    except (msgspec.DecodeError, TypeError) as exc:
        raise JournalError(f"journal row {row_id} ({kind}) cannot be read: {exc}") from None


_RUN_TYPES: Final = {WORKLOADS: WORKLOAD, FRAMES: FRAME}  # the message type of each kind's runs


def frames(row_id: int, kind: str, runs: list[RunEntry]) -> list[tuple[int, int, bytes]]:
    """(tag, stream offset, payload) of every frame of a WORKLOADS or FRAMES row's runs."""
    try:
        return [f for run in runs for f in split_run(*run, _RUN_TYPES[kind])]
    except ValueError as exc:
        raise JournalError(f"journal row {row_id}: {exc}") from None
