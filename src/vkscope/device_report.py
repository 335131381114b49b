"""Presents probed Vulkan devices: JSON for scripts, rich tables for people (`vkscope devices`)."""

from __future__ import annotations

import dataclasses
import json
import sys
from collections.abc import Sequence

from rich import box
from rich.console import Console, Group
from rich.rule import Rule
from rich.table import Table
from rich.text import Text

from .devices import DeviceInfo, VulkanUnavailable, probe


def to_json(devices: Sequence[DeviceInfo]) -> str:
    """A JSON array of the devices, fields in declaration order, for scripts and bug reports."""
    return json.dumps([dataclasses.asdict(device) for device in devices], indent=2)


def render(devices: Sequence[DeviceInfo], console: Console) -> None:
    """Print one block per device, sized to fit an 80-column terminal."""
    for position, device in enumerate(devices):
        if position:
            console.print(Rule(style="dim"))
        console.print(_device_block(device))


def _device_block(device: DeviceInfo) -> Group:
    title = Text.assemble(
        (f"GPU {device.index}: ", "bold"),
        (device.name, "bold cyan"),
        (f"  ({device.device_type})", ""),
    )
    driver = f"driver {device.driver_version}"
    if device.driver_name:
        driver = f"{driver} · {device.driver_name}"
    if device.driver_info:
        driver = f"{driver}: {device.driver_info}"
    versions = Text(f"Vulkan {device.api_version} · {driver}")
    ids = Text(
        f"vendor 0x{device.vendor_id:04x} · device 0x{device.device_id:04x} · "
        f"{len(device.extensions)} device extensions (--json lists them)",
        style="dim",
    )
    return Group(title, versions, ids, Text(), _queue_table(device), Text(), _support_table(device))


def _queue_table(device: DeviceInfo) -> Table:
    table = Table(
        title="Queue families",
        title_justify="left",
        title_style="bold",
        box=box.SIMPLE_HEAD,
        show_edge=False,
        pad_edge=False,
    )
    table.add_column("#", justify="right")
    table.add_column("flags", overflow="fold", ratio=1)
    table.add_column("queues", justify="right")
    table.add_column("timestamp bits", justify="right")
    table.add_column("perf counters", justify="right")
    for family in device.queue_families:
        table.add_row(
            str(family.index),
            ", ".join(family.flags) or "-",
            str(family.queue_count),
            str(family.timestamp_valid_bits) if family.timestamp_valid_bits else "none",
            "-" if family.performance_counters is None else str(family.performance_counters),
        )
    return table


def _support_table(device: DeviceInfo) -> Table:
    table = Table.grid(padding=(0, 2))
    table.title = "Profiling support"
    table.title_justify = "left"
    table.title_style = "bold"
    table.add_column(no_wrap=True)
    table.add_column(no_wrap=True)
    table.add_column(overflow="fold")

    timestamps = any(family.timestamp_valid_bits for family in device.queue_families)
    stamp_detail = f"period {device.timestamp_period_ns:g} ns"
    if timestamps and not device.timestamp_compute_and_graphics:
        stamp_detail += ", not on every graphics/compute queue"
    rows = (
        ("timestamps", timestamps, stamp_detail),
        (
            "calibrated timestamps",
            bool(device.calibrated_time_domains),
            ", ".join(device.calibrated_time_domains),
        ),
        ("timeline semaphores", device.timeline_semaphore, ""),
        ("pipeline statistics", device.pipeline_statistics_query, ""),
        ("host query reset", device.host_query_reset, ""),
        ("dynamic rendering", device.dynamic_rendering, ""),
        ("synchronization2", device.synchronization2, ""),
        ("VK_KHR_performance_query", device.performance_query, ""),
        ("VK_EXT_debug_utils", device.debug_utils, "instance extension"),
        ("VK_EXT_debug_marker", device.debug_marker, ""),
        ("VK_EXT_frame_boundary", device.frame_boundary, ""),
    )
    for label, supported, detail in rows:
        answer = Text("yes", style="green") if supported else Text("no", style="yellow")
        table.add_row(label, answer, Text(detail, style="dim"))
    return table


def main(as_json: bool) -> int:
    """Print the devices as JSON or as text; 2 with a one-line message when Vulkan is missing."""
    try:
        devices = probe()
    except VulkanUnavailable as exc:
        print(f"vkscope: {exc.message}", file=sys.stderr)
        return 2
    if as_json:
        print(to_json(devices))
    else:
        render(devices, Console())
    return 0
