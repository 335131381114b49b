"""The `counters` setting (`vkscope run --counters LIST`), read and checked on the host before
the application starts: a name vkscope does not collect, or that no device here can count, is
refused with one message that says what the devices offer (exit 2), rather than discovered by the
layer inside the application."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from ..pipeline_statistics import BY_NAME, COLLECTED, MESH, SOURCE, family_counters

if TYPE_CHECKING:
    from ..devices import DeviceInfo


class CounterError(ValueError):
    """A `counters` value that cannot be collected; the message says why and what can."""


def parse_counters(text: str) -> list[str]:
    """The counter names a `counters` value selects, in catalog order. `pipeline_statistics`
    selects every one vkscope collects; a name may also be written `pipeline_statistics.NAME`."""
    return _parse(text)[0]


def _parse(text: str) -> tuple[list[str], set[str]]:
    """The names selected, and those named one by one (not through the source)."""
    wanted: set[str] = set()
    named: set[str] = set()
    for raw in text.split(","):
        item = raw.strip()
        if not item:
            continue
        if item == SOURCE:
            wanted.update(c.name for c in COLLECTED)
            continue
        name = item.removeprefix(SOURCE + ".")
        counter = BY_NAME.get(name)
        if counter is None or counter not in COLLECTED:
            known = ", ".join(c.name for c in COLLECTED)
            what = "is not collected yet" if counter else "is no counter vkscope knows"
            raise CounterError(f"counters: {item!r} {what}; sources: {SOURCE}; names: {known}")
        wanted.add(name)
        named.add(name)
    return [c.name for c in COLLECTED if c.name in wanted], named


def offered(device: DeviceInfo) -> list[str]:
    """Every counter name some queue family of `device` collects."""
    names: set[str] = set()
    for family in device.queue_families:
        names.update(
            c.name
            for c in family_counters(
                family.flags, device.pipeline_statistics_query, device.mesh_shader_queries
            )
        )
    return [c.name for c in COLLECTED if c.name in names]


def check_counters(text: str, devices: Sequence[DeviceInfo]) -> None:
    """Refuses names that no device can count, saying what each device offers. Task and mesh
    shader statistics selected through the source alone are wanted only where a device has them."""
    names, named = _parse(text)
    if not names:
        return
    needed = [n for n in names if n in named or n not in MESH]
    missing = [n for n in needed if not any(n in offered(d) for d in devices)]
    if not missing:
        return
    lines = [
        f"device {d.index} ({d.name}): {', '.join(offered(d)) or 'no pipeline statistics'}"
        for d in devices
    ]
    raise CounterError(
        f"counters: no device here counts {', '.join(missing)}; " + "; ".join(lines or ["none"])
    )
