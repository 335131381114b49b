"""A workload instance's stable identity in a dataset: the same work in every frame of every
capture of a scene (docs/fleet.md): its type, label path, queue (family.index) and ordinal, the
n-th workload of that type and label path on that queue within its frame, in submission order.

This is the identity `vkscope diff` matches workloads by. The capture package's read side is
to own that rule (one definition for diff, the khr pass join and this export); until it hands
identities out, this module applies it to the reader's records, in one place.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from ..capture import Queue, WorkloadInstance


@dataclass(frozen=True, slots=True)
class Identity:
    queue: str
    ordinal: int
    text: str


def identity_text(kind: str | None, label_path: str, queue: str, ordinal: int) -> str:
    """`renderpass Frame/GBuffer #0 q0.0`: what the analyses group by, readable as it is."""
    return f"{kind or '?'} {label_path} #{ordinal} q{queue}"


def queue_names(queues: Iterable[Queue]) -> dict[tuple[int, int | None, int | None], str]:
    """(process, device, queue id) -> family.index, for every queue the capture lists."""
    return {
        (q.process, q.device, q.id): f"{q.family}.{q.index}"
        for q in queues
        if q.family is not None and q.index is not None
    }


class Identities:
    """Gives each instance of a capture, read in submission order, its identity."""

    def __init__(self, queues: dict[tuple[int, int | None, int | None], str]) -> None:
        self._queues = queues
        self._seen: dict[tuple[object, ...], int] = {}

    def of(self, w: WorkloadInstance) -> Identity:
        queue = self._queues.get((w.process, w.device, w.queue)) or f"id {w.queue}"
        key = (w.process, w.device, w.frame, queue, w.type, w.labels)
        ordinal = self._seen.get(key, 0)
        self._seen[key] = ordinal + 1
        return Identity(queue, ordinal, identity_text(w.type, w.label_path, queue, ordinal))
