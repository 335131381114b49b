"""Consistency checks run once when a capture is finalized, recorded as diagnostics.

They look for what only the end of the stream can tell: instances naming a workload or label
stack the layer never described. (Annexes whose SUBMIT never came are reported when the journal
is built: build.py.)
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Sequence
from typing import Any

_MISSING_WORKLOADS = """
SELECT i.process, count(*), min(i.submit_id), min(i.tag_id)
FROM workload_instances i
WHERE NOT EXISTS (SELECT 1 FROM workloads w WHERE w.process = i.process AND w.tag_id = i.tag_id)
GROUP BY i.process
"""

_MISSING_LABELS = """
SELECT i.process, count(*), min(i.label_stack_id)
FROM workload_instances i JOIN submits s ON s.id = i.submit_row
WHERE i.label_stack_id != 0 AND NOT EXISTS (
    SELECT 1 FROM label_stacks l
    WHERE l.process = i.process AND l.device = s.device AND l.id = i.label_stack_id)
GROUP BY i.process
"""


def final_checks(
    db: sqlite3.Connection, connections: Sequence[Any], note: Callable[..., None]
) -> None:
    by_id = {c.id: c for c in connections}
    if not connections:
        note(None, "no_connection", "no application connected to the capture server")
    for process, count, submit_id, tag in db.execute(_MISSING_WORKLOADS):
        reason = (
            f"{count} workload instances name a tagID no WORKLOAD message described "
            f"(first: submit {submit_id}, tagID {tag}); they have no type or metadata"
        )
        note(by_id.get(process), "missing_workload", reason)
    for process, count, label_id in db.execute(_MISSING_LABELS):
        reason = (
            f"{count} workload instances name a label stack no LABELS message described "
            f"(first: id {label_id}); they show no labels"
        )
        note(by_id.get(process), "missing_labels", reason)
