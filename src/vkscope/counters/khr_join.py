"""Joins the passes of khr counters (VK_KHR_performance_query) per workload. Each captured frame
collects one pass of the selection (frame f: pass f mod N), so a workload's full set comes from N
consecutive frames: the instances of one workload are found in each frame of its cycle by the
identity `vkscope diff` uses (process, device, queue, label path, type, and its ordinal among the
workloads of that type under that path on that queue in the frame). A counter that no frame of
the cycle gave says why it is missing."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

from ..capture.records import WorkloadInstance

Identity = tuple[int, int | None, int | None, int, str, str | None, int]


@dataclass
class JoinedCounters:
    values: dict[str, float] = field(default_factory=dict)
    passes: dict[str, int] = field(default_factory=dict)  # counter -> the pass that gave it
    missing: dict[str, str] = field(default_factory=dict)  # counter -> why it has no value


def _pass_of(instance: WorkloadInstance) -> int | None:
    found = instance.metadata.get("counters_pass")
    return found if isinstance(found, int) else None


def join_passes(instances: Iterable[WorkloadInstance]) -> dict[int, JoinedCounters]:
    """Per instance id, its khr counters joined over its pass cycle; empty when no instance has
    khr counters (no `counters_pass`)."""
    items = list(instances)
    counter_pass: dict[str, int] = {}
    for i in items:
        p = _pass_of(i)
        if p is not None:
            for name in i.counters:
                counter_pass[name] = p
    if not counter_pass:
        return {}
    cycle = max(counter_pass.values()) + 1
    frames = {i.frame for i in items if i.frame is not None}
    ordinals: dict[tuple[object, ...], int] = {}
    groups: dict[Identity, dict[int, WorkloadInstance]] = {}
    keys: dict[int, Identity] = {}
    for i in items:
        if i.frame is None:
            continue
        place = (i.process, i.device, i.queue, i.frame, i.label_path, i.type)
        ordinal = ordinals.get(place, 0)
        ordinals[place] = ordinal + 1
        key = (i.process, i.device, i.queue, i.frame // cycle, i.label_path, i.type, ordinal)
        keys[i.id] = key
        groups.setdefault(key, {})[i.frame % cycle] = i
    out: dict[int, JoinedCounters] = {}
    for i in items:
        if i.id not in keys:
            continue
        key = keys[i.id]
        joined = JoinedCounters()
        members = groups[key]
        for name, p in sorted(counter_pass.items(), key=lambda kv: (kv[1], kv[0])):
            other = members.get(p)
            if other is not None and name in other.counters:
                joined.values[name] = other.counters[name]
                joined.passes[name] = p
                continue
            frame = key[3] * cycle + p
            if other is not None:
                joined.missing[name] = other.counters_reason or f"frame {frame} did not count it"
            elif frame not in frames:
                joined.missing[name] = f"frame {frame} (pass {p}) was not captured"
            else:
                joined.missing[name] = f"frame {frame} (pass {p}) had no such workload"
        out[i.id] = joined
    return out
