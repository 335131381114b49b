"""The VK_KHR_performance_query part of `vkscope counters`: every device's performance counters
per queue family (unit, scope, storage, description) as the layers below vkscope present them,
and for `--select` the passes the selection needs there (one captured frame each)."""

from __future__ import annotations

from typing import Any

from rich import box
from rich.console import Console
from rich.table import Table
from rich.text import Text

from ..counters.performance_query import split
from ..counters.performance_query_probe import probe_khr


def khr_listing(select: str | None) -> list[dict[str, Any]]:
    keys = list(split(select).keys) if select else []
    devices = probe_khr([keys] if keys else [])
    out = []
    for d in devices:
        families = []
        for f in d.families:
            entry: dict[str, Any] = {
                "family": f.family,
                "counters": [c.as_json() for c in f.counters],
            }
            if keys:
                # The driver's passes for the selection, and the frames vkscope takes for it.
                entry["passes"] = next(iter(f.passes.values()), None)
                entry["frames_per_set"] = next(iter(f.groups.values()), None)
            families.append(entry)
        out.append(
            {
                "device": d.index,
                "name": d.name,
                "performance_query": d.has_extension,
                "queue_families": families,
            }
        )
    return out


def render_khr(found: list[dict[str, Any]], console: Console) -> None:
    for d in found:
        if not d["performance_query"]:
            console.print(Text(f"GPU {d['device']}: no VK_KHR_performance_query", "dim"))
            continue
        for f in d["queue_families"]:
            title = f"GPU {d['device']} queue family {f['family']}: khr (VK_KHR_performance_query)"
            if "passes" in f:
                title += f"; the selection: {f['passes']} passes, {f['frames_per_set']} frames"
            table = Table(title=title, title_justify="left", box=box.SIMPLE_HEAD, pad_edge=False)
            for column in ("counter", "unit", "scope", "storage"):
                table.add_column(column, no_wrap=True)
            table.add_column("what it counts", overflow="fold")
            for c in f["counters"]:
                name = "khr:" + c["name"] + (" *" if c["concurrently_impacted"] else "")
                table.add_row(name, c["unit"], c["scope"], c["storage"], c["description"])
            console.print(table)
    if any(c["concurrently_impacted"] for d in found for f in d["queue_families"]
           for c in f["counters"]):  # fmt: skip
        console.print("* concurrently impacted: other work running at the same time changes it")
