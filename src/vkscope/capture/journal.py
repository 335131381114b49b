"""The journal: where a capture being written keeps its WORKLOAD, SUBMIT and ANNEX messages.

Those messages are nearly all of a busy stream (one per workload or instance), and turning each
into table rows as it arrives costs several microseconds of the capture host's CPU per workload,
on the cores the application runs on. So while capturing, the store appends them to the
`journal` table as they came, a connection's messages of one commit in one row per kind, each
row's entries encoded with msgpack in one call; build.py turns the journal into the workloads,
workload_instances and annexes tables when the capture is finalized, and readers of a capture
that was not finalized (still being written, or killed) do the same in their own temporary
schema. Each journal row is committed with the rest of its batch, so a capture killed at any
point keeps every message up to its last commit.
"""

from __future__ import annotations

from typing import Any, Final

import msgspec

WORKLOADS: Final = "workloads"
SUBMITS: Final = "submits"
ANNEXES: Final = "annexes"

# (stream offset of the first frame, frames): consecutive WORKLOAD frames, as they were sent
# (wire.split_workloads reads them).
WorkloadEntry = tuple[int, bytes]
# (submits.id, id of its first instance, submitID, [(tagID, label stack id), ...]): a SUBMIT.
SubmitEntry = tuple[int, int, int, list[tuple[int, int]]]
# (submitID, tagID, offset, payload JSON, submits.id of the last SUBMIT received before it): an
# ANNEX, whose payload is a JSON object. The last field places it among the SUBMITs, which
# says which one it names when a submitID was sent twice (build.py).
AnnexEntry = tuple[int, int, int, bytes, int]

# `count`: the rows a journal row stands for (workloads, instances or annexes), which is what
# finalizing shows its progress in.
INSERT: Final = "INSERT INTO journal (connection, process, kind, count, data) VALUES (?,?,?,?,?)"

_ENTRY_TYPES: Final[dict[str, Any]] = {
    WORKLOADS: list[WorkloadEntry],
    SUBMITS: list[SubmitEntry],
    ANNEXES: list[AnnexEntry],
}
_DECODERS: Final = {kind: msgspec.msgpack.Decoder(t) for kind, t in _ENTRY_TYPES.items()}
_encode = msgspec.msgpack.Encoder().encode


class JournalError(ValueError):
    """A journal row that cannot be read back: the file was damaged."""


def encode(entries: list[Any]) -> bytes:
    return _encode(entries)


def decode(row_id: int, kind: str, data: bytes) -> list[Any]:
    decoder = _DECODERS.get(kind)
    if decoder is None:
        raise JournalError(f"journal row {row_id} is of an unknown kind {kind!r}")
    try:
        return decoder.decode(data)  # type: ignore[no-any-return]
    except (msgspec.DecodeError, TypeError) as exc:
        raise JournalError(f"journal row {row_id} ({kind}) cannot be read: {exc}") from None
