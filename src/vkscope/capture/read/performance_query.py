"""khr counters (VK_KHR_performance_query) joined over their pass cycle, as every reader sees
them. A captured frame collects one pass of the selection, so an instance's own annex holds only
that pass's counters; the reader joins the passes per workload (join_passes, below) when it
opens a capture that has khr counters, into a temporary table of its connection (the file is
not changed):

    temp.khr_joined (id, counters, missing): per instance id, the JSON object of its joined
    values and the one of the counters it lacks, each with why.

The reader's workloads(), the `instance_counters` view and the report's sums read the joined
values in place of the annex's own; `counters_pass` in the annex still says which pass the
instance itself collected.

Each captured frame collects one pass of the selection (frame f: pass f mod N), so a workload's
full set comes from N consecutive frames: the instances of one workload are found in each frame
of its cycle by their identity (identity.py), within their process and device. A counter that no
frame of the cycle gave says why it is missing. Under a cost budget (docs/budget.md) a workload
is measured in some frames only: a pass its own cycle did not measure comes from the nearest
frame of that pass that did, by identity alike.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Final

import msgspec

from .identity import WorkloadIdentity
from .records import WorkloadInstance

TABLE: Final = "temp.khr_joined"
SOURCE: Final = "performance_query"

_encode = msgspec.json.encode


def create(db: sqlite3.Connection) -> None:
    """The empty table, made on every reader's connection so SQL may always name it."""
    db.execute(
        "CREATE TEMP TABLE khr_joined (id INTEGER PRIMARY KEY, counters TEXT NOT NULL, "
        "missing TEXT NOT NULL)"
    )


def has_khr_counters(db: sqlite3.Connection) -> bool:
    found = db.execute(
        "SELECT 1 FROM device_counters WHERE source = ? AND name IS NOT NULL LIMIT 1", (SOURCE,)
    ).fetchone()
    return found is not None


def fill(db: sqlite3.Connection, workloads: Callable[[], Iterable[WorkloadInstance]]) -> int:
    """Joins the passes of every instance of `workloads()` into the table; how many rows."""
    passes: dict[str, int] = {}
    scopes: dict[str, str] = {}
    sql = (
        "SELECT name, min(pass_index), max(pass_index), max(scope) FROM device_counters "
        "WHERE source = ? AND name IS NOT NULL GROUP BY name"
    )
    for name, low, high, scope in db.execute(sql, (SOURCE,)):
        if low is not None and low == high:  # families that split a selection alike
            passes[name] = low
        if scope is not None:
            scopes[name] = scope
    joined = join_passes(workloads(), passes, scopes)
    db.executemany(
        f"INSERT INTO {TABLE} VALUES (?, ?, ?)",
        ((i, _encode(j.values).decode(), _encode(j.missing).decode()) for i, j in joined.items()),
    )
    return len(joined)


# The start of the reason a workload of a command buffer recorded once and submitted in every
# frame lacks the counters of the other passes (docs/counters.md).
RECORDED_ONCE = "recorded_once"

# An earlier submission of a set whose values came with a later one (docs/counters.md).
PASSES_ON_LATER_SUBMISSION = "passes_on_later_submission"

# The cost budget left a workload out of a frame (docs/budget.md).
BUDGET = "budget"

RENDER_PASS = "render_pass"
COMMAND_BUFFER = "command_buffer"
RENDER_PASS_TYPE = "renderpass"  # the workload type of a render pass instance

# (process, device, the cycle's first frame // cycle, identity): one workload in one pass cycle.
CycleKey = tuple[int, int | None, int, WorkloadIdentity]


@dataclass
class JoinedCounters:
    values: dict[str, float] = field(default_factory=dict)
    passes: dict[str, int] = field(default_factory=dict)  # counter -> the pass that gave it
    missing: dict[str, str] = field(default_factory=dict)  # counter -> why it has no value


def _pass_of(instance: WorkloadInstance) -> int | None:
    found = instance.metadata.get("counters_pass")
    return found if isinstance(found, int) else None


def _whole(instance: WorkloadInstance) -> bool:
    """Its values are the whole selection's, whose passes its command buffer (recorded once) ran
    over several submissions, the last of them this one."""
    return isinstance(instance.metadata.get("counters_submissions"), int)


def _has_khr(instance: WorkloadInstance) -> bool:
    return _pass_of(instance) is not None or _whole(instance)


def join_passes(
    instances: Iterable[WorkloadInstance],
    passes: Mapping[str, int] | None = None,
    scopes: Mapping[str, str] | None = None,
) -> dict[int, JoinedCounters]:
    """Per instance id, its khr counters joined over its pass cycle; empty when no instance has
    khr counters (no `counters_pass`). `passes`: each counter's pass as the layer announced it
    (else found from the instances' values); `scopes`: each counter's scope, so that a
    RENDER_PASS-scope counter belongs to render pass workloads only, and one of COMMAND_BUFFER
    scope to no workload (it is counted per command buffer)."""
    items = list(instances)
    counter_pass: dict[str, int] = dict(passes or {})
    for i in items:
        p = _pass_of(i)
        if p is not None:
            for name in i.counters:
                counter_pass.setdefault(name, p)
    if not any(_has_khr(i) for i in items):
        return {}
    scopes = scopes or {}
    cycle_counters = {n: p for n, p in counter_pass.items() if scopes.get(n) != COMMAND_BUFFER}
    render_pass_only = {n for n in counter_pass if scopes.get(n) == RENDER_PASS}
    cycle = max(counter_pass.values(), default=0) + 1
    frames = {i.frame for i in items if i.frame is not None}
    groups: dict[CycleKey, dict[int, WorkloadInstance]] = {}
    keys: dict[int, CycleKey] = {}
    for i in items:
        if i.frame is None:
            continue
        assert i.identity is not None  # every record the reader makes has one
        key = (i.process, i.device, i.frame // cycle, i.identity)
        keys[i.id] = key
        groups.setdefault(key, {})[i.frame % cycle] = i
    # A workload (tagID) submitted in several frames belongs to a command buffer recorded once:
    # its queries are those of the pass of the frame it was recorded in, in every frame.
    tag_frames: dict[tuple[int, int], set[int]] = {}
    # Per workload (tagID), the instances whose values are a whole selection's, in submission
    # order: the earlier submissions of each set say `passes_on_later_submission`.
    whole: dict[tuple[int, int], list[WorkloadInstance]] = {}
    for i in items:
        if i.frame is not None:
            tag_frames.setdefault((i.process, i.tag_id), set()).add(i.frame)
        if _whole(i):
            whole.setdefault((i.process, i.tag_id), []).append(i)
    for found in whole.values():
        found.sort(key=lambda m: m.submit_id)
    # Per workload identity, the frames of each pass that measured it (a budget's rotation).
    measured: dict[tuple[int, int | None, WorkloadIdentity], dict[int, list[WorkloadInstance]]]
    measured = {}
    for i in items:
        p = _pass_of(i)
        if i.frame is not None and p is not None and i.counters and i.identity is not None:
            by_pass = measured.setdefault((i.process, i.device, i.identity), {})
            by_pass.setdefault(p, []).append(i)
    out: dict[int, JoinedCounters] = {}
    for i in items:
        if i.id not in keys or i.counters_reason == BUDGET:
            continue  # left out of its frame: it has nothing to join
        key = keys[i.id]
        members = groups[key]
        wanted = (
            cycle_counters
            if i.type == RENDER_PASS_TYPE
            else {n: p for n, p in cycle_counters.items() if n not in render_pass_only}
        )
        again = len(tag_frames.get((i.process, i.tag_id), ())) > 1
        completing = _completing(i, whole.get((i.process, i.tag_id), []))
        joined = _join_one(i, members, wanted, key[2] * cycle, frames, again, completing)
        if BUDGET in joined.missing.values() and i.identity is not None:
            _from_other_cycles(joined, i, wanted, measured.get((i.process, i.device, i.identity)))
        out[i.id] = joined
    return out


def _from_other_cycles(
    joined: JoinedCounters,
    own: WorkloadInstance,
    counter_pass: Mapping[str, int],
    by_pass: dict[int, list[WorkloadInstance]] | None,
) -> None:
    """The counters the budget left out of `own`'s cycle, from the nearest frame of their pass
    that measured the same workload identity."""
    for name, why in list(joined.missing.items()):
        p = counter_pass.get(name)
        if why != BUDGET or p is None or not by_pass or p not in by_pass:
            continue
        at = own.frame or 0
        found = min(by_pass[p], key=lambda m: (abs((m.frame or 0) - at), m.id))
        if name in found.counters:
            joined.values[name] = found.counters[name]
            joined.passes[name] = p
            del joined.missing[name]


def _completing(own: WorkloadInstance, sets: list[WorkloadInstance]) -> WorkloadInstance | None:
    """The instance that carries the values of `own`'s set: the first later submission of the
    same workload that completed one (for an instance that says `passes_on_later_submission`)."""
    if own.counters_reason != PASSES_ON_LATER_SUBMISSION:
        return None
    return next((m for m in sets if m.submit_id > own.submit_id), None)


def _join_one(
    own: WorkloadInstance,
    members: dict[int, WorkloadInstance],
    counter_pass: dict[str, int],
    first_frame: int,
    frames: set[int],
    resubmitted: bool,
    completing: WorkloadInstance | None = None,
) -> JoinedCounters:
    joined = JoinedCounters()
    # Its own values first (or those of the submission that completed its set); then the frame
    # of the counter's pass; then any frame of the cycle (a command buffer recorded once with one
    # frame's pass carries that pass in every frame).
    for name, p in sorted(counter_pass.items(), key=lambda kv: (kv[1], kv[0])):
        other = members.get(p)
        found = next(
            (
                m
                for m in (own, completing, other, *members.values())
                if m is not None and name in m.counters
            ),
            None,
        )
        if found is not None:
            joined.values[name] = found.counters[name]
            joined.passes[name] = p
            continue
        frame = first_frame + p
        recorded = _pass_of(own)
        if other is not None and other.counters_reason:
            joined.missing[name] = other.counters_reason
        elif resubmitted and recorded is not None and recorded != p:
            joined.missing[name] = (
                f"{RECORDED_ONCE}: its command buffer was recorded in a frame of pass {recorded} "
                f"and submitted again in later frames, with pass {recorded}'s queries in each"
            )
        elif other is not None:
            joined.missing[name] = f"frame {frame} did not count it"
        elif frame not in frames:
            joined.missing[name] = f"frame {frame} (pass {p}) was not captured"
        else:
            joined.missing[name] = f"frame {frame} (pass {p}) had no such workload"
    return joined
