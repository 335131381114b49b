"""`vkscope counters`: every counter vkscope can collect, per device and queue family."""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from typing import Any

from rich import box
from rich.console import Console
from rich.table import Table
from rich.text import Text

from .command import Command


def listing(devices: Sequence[Any]) -> list[dict[str, Any]]:
    """Per device, per queue family, the counters it collects (what `--json` prints)."""
    from ..counters.samplers import listing as sampler_listing
    from ..pipeline_statistics import family_counters

    return [
        {
            "device": d.index,
            "name": d.name,
            "pipeline_statistics_query": d.pipeline_statistics_query,
            "samplers": sampler_listing(d),
            "queue_families": [
                {
                    "family": f.index,
                    "flags": f.flags,
                    "counters": [
                        c.as_json()
                        for c in family_counters(
                            f.flags, d.pipeline_statistics_query, d.mesh_shader_queries
                        )
                    ],
                }
                for f in d.queue_families
            ],
        }
        for d in devices
    ]


def _render(found: list[dict[str, Any]], console: Console) -> None:
    for d in found:
        console.print(Text.assemble((f"GPU {d['device']}: ", "bold"), (d["name"], "bold cyan")))
        if not d["pipeline_statistics_query"]:
            console.print(Text("  no pipelineStatisticsQuery: no pipeline statistics", "yellow"))
        for f in d["queue_families"]:
            title = f"queue family {f['family']} ({'/'.join(f['flags'])})"
            if not f["counters"]:
                console.print(Text(f"{title}: none", style="dim"))
                continue
            sources = sorted({c["source"] for c in f["counters"]})
            table = Table(
                title=f"{title}: {', '.join(sources)}",
                title_justify="left",
                box=box.SIMPLE_HEAD,
                pad_edge=False,
            )
            table.add_column("counter", no_wrap=True)
            table.add_column("unit", no_wrap=True)
            table.add_column("what it counts", overflow="fold")
            for c in f["counters"]:
                table.add_row(c["name"], c["unit"], c["description"])
            console.print(table)
        _render_samplers(d["samplers"], console)


def _render_samplers(found: dict[str, Any], console: Console) -> None:
    how = (
        "between workloads (event handover)"
        if found["sampling"] == "handover"
        else "per command buffer (this driver is not known to support the event handover)"
    )
    console.print(Text(f"samplers (--counters sampler:NAME or sampler:PATH), sampled {how}:"))
    for s in found["samplers"]:
        if s["available"]:
            console.print(Text(f"  {s['name']}: {s['what']}"))
        else:
            line = Text(f"  {s['name']}: {s['what']}", style="dim")
            line.append(f" (unavailable: {s['note']})", style="yellow")
            console.print(line)


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--json", action="store_true", help="print JSON instead of tables")
    parser.add_argument(
        "--select",
        metavar="khr:NAME,...",
        help="also give the passes (captured frames) a khr: selection needs on each family",
    )


def run(args: argparse.Namespace) -> int:
    from ..devices import VulkanUnavailable, probe

    try:
        devices = probe()
    except VulkanUnavailable as exc:
        print(f"vkscope: {exc.message}", file=sys.stderr)
        return 2
    found = listing(devices)
    from .counters_performance_query import khr_listing, render_khr

    khr = khr_listing(args.select)
    if args.json:
        for d, k in zip(found, khr, strict=False):
            d["khr"] = k["queue_families"] if k["performance_query"] else None
        print(json.dumps(found, indent=2))
    else:
        _render(found, Console())
        render_khr(khr, Console())
    return 0


COMMAND = Command(
    name="counters",
    help="list the counters vkscope can collect, per device and queue family",
    description="Lists, for every Vulkan device and each of its queue families, the counters "
    "`vkscope run --counters` can collect there, with their units and what they count.",
    configure=configure,
    run=run,
)
