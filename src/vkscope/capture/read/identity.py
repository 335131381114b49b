"""A workload's stable identity: the one definition every reader joins on.

Two captures never share IDs (tagIDs, submitIDs and label stack IDs are numbered by the layer as
the application runs), and neither do two frames of one capture. A workload is identified by
what it is and where it sits:

    identity = queue + label path + type + ordinal

- **queue**: the queue family and the queue's index in it, `"family.index"` (`"0.0"`): the queue
  the application asked for, not the layer's per-capture queue number. `"id N"` for a queue that
  no DEVICE message listed, `"?"` when the submit named none.
- **label path**: the debug labels open around the workload, outermost first, compared label by
  label (the empty path is a scope of its own).
- **type**: the WORKLOAD type (`renderpass`, `dispatch`, ...); None (`unknown`) when the layer
  never described the tagID.
- **ordinal**: how many workloads of the same type were submitted before it under the same label
  path, on the same queue, in the same frame (of the same process and device), from 0.

In a frame (process, device, frame number) an identity names one instance; across the frames of
a capture, and across captures, the same identity is the same workload. `vkscope diff`,
`vkscope overlap`, the khr counters' pass join and every join across frames use this definition
and no other (docs/capture-schema.md, "Workload identity").

It is computed three ways, which tests/test_read_model.py holds to the same answer: SQL (the
fragments below) where instances are wanted sorted by identity, `Ordinals` where they stream in
submission order as records and sorting them would cost more than counting, and its numpy form
(columns.py) where they stream as columns: the queue by QUEUE_SQL, the ordinal counted per scope.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Final

import msgspec

# The SQL of the definition, over a statement's `s` (submits), `i` (workload_instances), `w`
# (workloads), `l` (label_stacks) and `q` (queues: joined by QUEUES_JOIN) rows. Within one
# process and device, a queue id and its family.index name the same queue, so the ordinal may
# count by either.
QUEUES_JOIN: Final = (
    "LEFT JOIN queues q ON q.process = s.process AND q.device = s.device AND q.id = s.queue"
)
QUEUE_SQL: Final = "coalesce(q.family || '.' || q.queue_index, 'id ' || s.queue, '?')"
LABELS_SQL: Final = "coalesce(l.path, '[]')"
TYPE_SQL: Final = "coalesce(w.type, '')"
ORDINAL_SQL: Final = (
    "row_number() OVER (PARTITION BY s.process, s.device, s.frame, s.queue, "
    f"{LABELS_SQL}, {TYPE_SQL} ORDER BY i.id) - 1"
)
# The order SQLite sorts identities in with these columns, and Python's with IdentityOrder:
# both compare text by code point (UTF-8 bytes) and the labels as their JSON text.
ORDER_SQL: Final = "queue_key, labels_json, type_text, ordinal"

IdentityOrder = tuple[str, str, str, int]  # (queue, labels as JSON, type or "", ordinal)


class WorkloadIdentity(msgspec.Struct, frozen=True, gc=False):
    queue: str  # "family.index"; "id N" for a queue no DEVICE message listed; "?" for none
    labels: tuple[str, ...]
    type: str | None  # None: the layer never described the workload
    ordinal: int

    @property
    def label_path(self) -> str:
        return "/".join(self.labels)


_decode_labels = msgspec.json.Decoder(list[str]).decode


@lru_cache(maxsize=4096)
def labels_of(path: str | None) -> tuple[str, ...]:
    """A label stack's labels, from its JSON path (None: no labels)."""
    return tuple(_decode_labels(path)) if path else ()


def queue_key(family: int | None, index: int | None, queue: int | None) -> str:
    """The identity's queue, as QUEUE_SQL gives it."""
    if family is not None and index is not None:
        return f"{family}.{index}"
    return "?" if queue is None else f"id {queue}"


# The scope an ordinal counts in, within its frame: (queue id, labels as JSON, type or "").
Scope = tuple[int | None, str, str]
FrameKeyTuple = tuple[int, int | None, int | None]  # (process, device, frame)


class Ordinals:
    """Counts ordinals over instances met in submission order (the Python form of ORDINAL_SQL).

    A frame's counts are kept until `release` says the stream is past its last submit, so a
    stream of any length holds the counts of the frames it is in, not of every frame.
    """

    def __init__(self) -> None:
        self._frames: dict[FrameKeyTuple, dict[Scope, int]] = {}

    def next(self, frame: FrameKeyTuple, scope: Scope) -> int:
        counts = self._frames.get(frame)
        if counts is None:
            counts = self._frames[frame] = {}
        n = counts.get(scope, 0)
        counts[scope] = n + 1
        return n

    def counts(self, frame: FrameKeyTuple) -> dict[Scope, int]:
        """The frame's counts, to count in directly (a hot loop's shortcut for `next`)."""
        counts = self._frames.get(frame)
        if counts is None:
            counts = self._frames[frame] = {}
        return counts

    def release(self, frame: FrameKeyTuple) -> None:
        self._frames.pop(frame, None)

    def __len__(self) -> int:
        return len(self._frames)
