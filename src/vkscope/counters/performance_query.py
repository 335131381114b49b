"""`khr:` counters (VK_KHR_performance_query) in the `counters` setting, checked on the host
before the application starts: every named counter must exist on some queue family of some
device (as the layers below vkscope present them), the selection must fit in the passes the
`counter_passes` setting allows, and a `frames` list is widened to whole pass cycles, since each
captured frame collects one pass (docs/counters.md).

`khr:NAME,NAME` is short for `khr:NAME,khr:NAME`: after a `khr:` item, names that are no
pipeline statistic belong to it. The layer gets every item with its prefix.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from ..frame_selection import parse_frame_selection
from ..pipeline_statistics import BY_NAME, SOURCE
from .performance_query_probe import KhrDevice, counter_key, probe_khr
from .selection import CounterError

PREFIX = "khr:"


@dataclass(frozen=True)
class KhrSelection:
    keys: tuple[str, ...]  # counter keys, or ("all",)
    others: tuple[str, ...]  # the setting's other items, as written

    @property
    def text(self) -> str:
        """The setting as the layer reads it: every khr item with its prefix."""
        return ",".join([*self.others, *(PREFIX + k for k in self.keys)])


def split(text: str) -> KhrSelection:
    keys: list[str] = []
    others: list[str] = []
    in_khr = False
    for raw in text.split(","):
        item = raw.strip()
        if not item:
            continue
        if item.startswith(PREFIX):
            in_khr = True
            name = item[len(PREFIX) :].strip()
            keys.append("all" if name == "all" else counter_key(name))
        elif (
            in_khr
            and item != SOURCE
            and not item.startswith(SOURCE + ".")
            and (item not in BY_NAME)
        ):
            keys.append(counter_key(item))
        else:
            in_khr = False
            others.append(item)
    return KhrSelection(tuple(dict.fromkeys(keys)), tuple(others))


def _offered(devices: list[KhrDevice]) -> str:
    parts = []
    for d in devices:
        if not d.has_extension:
            parts.append(f"device {d.index} ({d.name}): no VK_KHR_performance_query")
            continue
        for f in d.families:
            names = ", ".join(c.name for c in f.counters) or "none"
            parts.append(f"device {d.index} ({d.name}) family {f.family}: {names}")
    return "; ".join(parts) or "no device"


def check(selection: KhrSelection, max_passes: int, devices: list[KhrDevice]) -> int:
    """The frames one complete set takes (the most passes any family needs), or CounterError."""
    if selection.others:
        raise CounterError(
            "counters: khr counters and pipeline statistics cannot be collected in one run "
            f"(both fill each workload's counters); choose one of {', '.join(selection.others)} "
            f"and the khr: counters"
        )
    if not any(d.has_extension for d in devices):
        raise CounterError(
            "counters: no device here has VK_KHR_performance_query (enable a layer or driver "
            f"that has it); {_offered(devices)}"
        )
    wanted = [k for k in selection.keys if k != "all"]
    for key in wanted:
        offered = (c for d in devices for f in d.families for c in f.counters)
        found = [c for c in offered if key in (c.name, c.uuid)]
        if not found:
            raise CounterError(
                f"counters: no queue family here has the performance counter {key!r}; "
                + _offered(devices)
            )
    cycle = 1
    for d in devices:
        for f in d.families:
            for groups in f.groups.values():
                if groups > max_passes:
                    raise CounterError(
                        f"counters: the selection needs {groups} passes on device {d.index} "
                        f"family {f.family} (one captured frame each) and counter_passes allows "
                        f"{max_passes}: choose fewer counters or set -s counter_passes={groups}"
                    )
                cycle = max(cycle, groups)
    return cycle


def widen_frames(text: str, cycle: int) -> str:
    """A `frames` list of numbers and ranges, each widened to whole cycles of `cycle` frames
    (frame f collects pass f mod cycle); other selections unchanged."""
    if cycle <= 1:
        return text
    selection = parse_frame_selection(text)
    if selection.kind != "ranges":
        return text
    items = []
    for first, last in selection.ranges:
        lo = first - first % cycle
        if last is None:
            items.append(f"{lo}-")
        else:
            items.append(f"{lo}-{last + cycle - 1 - last % cycle}")
    return ",".join(items)


def prepare(settings: Mapping[str, str], max_passes: int) -> tuple[str, str | None] | None:
    """For a setting with khr items: the counters text for the layer and the widened frames
    (None: unchanged); None when the setting names no khr counter. CounterError when the
    selection cannot be collected here."""
    selection = split(settings.get("counters", ""))
    if not selection.keys:
        return None
    devices = probe_khr([list(selection.keys)])
    cycle = check(selection, max_passes, devices)
    frames = settings.get("frames")
    widened = widen_frames(frames, cycle) if frames else None
    return selection.text, widened if widened != frames else None
