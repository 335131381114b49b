"""A workload instance's stable identity in a dataset, as text: the same work in every frame of
every capture of a scene (docs/fleet.md). The identity is the capture read side's, the one
`vkscope diff` and every reader use (capture/read/identity.py: queue as family.index, label path,
type, and the ordinal within its frame); this module only writes it for the dataset.
"""

from __future__ import annotations

from collections.abc import Iterable

from ..capture import Queue


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
