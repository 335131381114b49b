"""VK_KHR_performance_query counters as the application will see them: per device and queue
family, each counter's name, unit, scope, storage and description, and the passes a selection
needs (vkGetPhysicalDeviceQueueFamilyPerformanceQueryPassesKHR).

Unlike `devices.probe()`, this probe keeps the layers the user enables with VK_INSTANCE_LAYERS:
the counters a run can collect are those of the layer stack below vkscope (a layer may be what
implements the extension), never vkscope's own.
"""

from __future__ import annotations

import contextlib
import dataclasses
import os
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from ..devices import VulkanUnavailable, import_vulkan, instance_proc

# The scopes vkscope queries around workloads (a render pass scope one around render passes).
PER_WORKLOAD = ("command", "render_pass")

__all__ = ["PER_WORKLOAD", "KhrCounter", "KhrDevice", "KhrFamily", "passes", "probe_khr"]

EXTENSION = "VK_KHR_performance_query"
_API_1_1 = (1 << 22) | (1 << 12)
_VK_SUCCESS = 0
_VK_INCOMPLETE = 5
_STYPE_COUNTER = 1000116005
_STYPE_DESCRIPTION = 1000116006
_STYPE_POOL_INFO = 1000116002
_CONCURRENTLY_IMPACTED = 0x2
# vkscope's own switch (launch.py): the probe must not load the layer it is preparing.
_VKSCOPE_ENABLE = "VKSCOPE_ENABLE_LAYER"

UNITS = {
    0: "generic",
    1: "percentage",
    2: "nanoseconds",
    3: "bytes",
    4: "bytes_per_second",
    5: "kelvin",
    6: "watts",
    7: "volts",
    8: "amps",
    9: "hertz",
    10: "cycles",
}
SCOPES = {0: "command_buffer", 1: "render_pass", 2: "command"}
STORAGES = {0: "int32", 1: "int64", 2: "uint32", 3: "uint64", 4: "float32", 5: "float64"}


@dataclass(frozen=True)
class KhrCounter:
    index: int  # in the family's enumeration: what a query pool names
    name: str
    unit: str
    scope: str
    storage: str
    uuid: str
    category: str
    description: str
    concurrently_impacted: bool

    def as_json(self) -> dict[str, Any]:
        return {
            "source": "khr",
            "name": self.name,
            "unit": self.unit,
            "scope": self.scope,
            "storage": self.storage,
            "uuid": self.uuid,
            "category": self.category,
            "description": self.description,
            "concurrently_impacted": self.concurrently_impacted,
        }


@dataclass(frozen=True)
class KhrFamily:
    family: int
    counters: tuple[KhrCounter, ...]
    # Passes per selection of counter indices, asked of the implementation while probing.
    passes: dict[tuple[int, ...], int]
    # Per selection, the groups of one pass each that vkscope splits it into (one captured
    # frame each), as the layer splits it: those of the workloads' counters, then those of
    # COMMAND_BUFFER scope; a counter joins the current group while the group still needs one
    # pass.
    groups: dict[tuple[int, ...], int] = dataclasses.field(default_factory=dict)


@dataclass(frozen=True)
class KhrDevice:
    index: int
    name: str
    has_extension: bool
    families: tuple[KhrFamily, ...]


def counter_key(name: str) -> str:
    """The name a counter is selected by: its own, lower case, spaces and dashes as underscores."""
    return "_".join(name.lower().replace("-", " ").split())


@contextlib.contextmanager
def _without_vkscope() -> Iterator[None]:
    # The loader reads these on every vkCreateInstance: vkscope's own layer stays out of the
    # probe (implicit as `vkscope run` enables it, or named in VK_INSTANCE_LAYERS), every other
    # layer the user enabled stays in.
    from ..settings import LAYER_NAME

    saved = {name: os.environ.get(name) for name in (_VKSCOPE_ENABLE, "VK_INSTANCE_LAYERS")}
    try:
        os.environ.pop(_VKSCOPE_ENABLE, None)
        layers = saved["VK_INSTANCE_LAYERS"]
        if layers is not None:
            kept = [n for n in layers.split(":") if n and n != LAYER_NAME]
            os.environ["VK_INSTANCE_LAYERS"] = ":".join(kept)
        yield
    finally:
        for name, value in saved.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value


def probe_khr(selections: Sequence[Sequence[str]] = ()) -> list[KhrDevice]:
    """Every device's performance counters; for each selection of counter keys a family has,
    the passes it needs there. Raises VulkanUnavailable without a loader or device."""
    vk = import_vulkan()
    with _without_vkscope():
        try:
            return _probe(vk, selections)
        except (vk.VkError, vk.VkException) as exc:
            raise VulkanUnavailable(f"querying performance counters failed: {exc!r}") from exc


def _probe(vk: Any, selections: Sequence[Sequence[str]]) -> list[KhrDevice]:
    app = vk.VkApplicationInfo(pApplicationName="vkscope-counters", apiVersion=_API_1_1)
    instance = vk.vkCreateInstance(vk.VkInstanceCreateInfo(pApplicationInfo=app), None)
    try:
        enumerate_counters = instance_proc(
            vk, instance, "vkEnumeratePhysicalDeviceQueueFamilyPerformanceQueryCountersKHR"
        )
        get_passes = instance_proc(
            vk, instance, "vkGetPhysicalDeviceQueueFamilyPerformanceQueryPassesKHR"
        )
        found = []
        for index, handle in enumerate(vk.vkEnumeratePhysicalDevices(instance)):
            props = vk.vkGetPhysicalDeviceProperties(handle)
            extensions = {
                e.extensionName for e in vk.vkEnumerateDeviceExtensionProperties(handle, None)
            }
            has = EXTENSION in extensions
            families = []
            if has and enumerate_counters is not None:
                count = len(vk.vkGetPhysicalDeviceQueueFamilyProperties(handle))
                for family in range(count):
                    counters = _counters(vk, enumerate_counters, handle, family)
                    passes_of, groups_of = _passes(
                        vk, get_passes, handle, family, counters, selections
                    )
                    families.append(KhrFamily(family, counters, passes_of, groups_of))
            found.append(KhrDevice(index, str(props.deviceName), has, tuple(families)))
        return found
    finally:
        vk.vkDestroyInstance(instance, None)


def _counters(vk: Any, function: Any, handle: Any, family: int) -> tuple[KhrCounter, ...]:
    ffi = vk.ffi
    count = ffi.new("uint32_t *")
    if function(handle, family, count, ffi.NULL, ffi.NULL) != _VK_SUCCESS or count[0] == 0:
        return ()
    n = count[0]
    counters = ffi.new("VkPerformanceCounterKHR[]", n)
    descriptions = ffi.new("VkPerformanceCounterDescriptionKHR[]", n)
    for i in range(n):
        counters[i].sType = _STYPE_COUNTER
        descriptions[i].sType = _STYPE_DESCRIPTION
    if function(handle, family, count, counters, descriptions) not in (_VK_SUCCESS, _VK_INCOMPLETE):
        return ()
    out = []
    for i in range(count[0]):
        c, d = counters[i], descriptions[i]
        out.append(
            KhrCounter(
                index=i,
                name=counter_key(ffi.string(d.name).decode("utf-8", "replace")),
                unit=UNITS.get(int(c.unit), f"unit_{int(c.unit)}"),
                scope=SCOPES.get(int(c.scope), f"scope_{int(c.scope)}"),
                storage=STORAGES.get(int(c.storage), f"storage_{int(c.storage)}"),
                uuid=bytes(ffi.buffer(c.uuid, 16)).hex(),
                category=ffi.string(d.category).decode("utf-8", "replace"),
                description=ffi.string(d.description).decode("utf-8", "replace"),
                concurrently_impacted=bool(int(d.flags) & _CONCURRENTLY_IMPACTED),
            )
        )
    return tuple(out)


def _passes(
    vk: Any,
    function: Any,
    handle: Any,
    family: int,
    counters: tuple[KhrCounter, ...],
    selections: Sequence[Sequence[str]],
) -> tuple[dict[tuple[int, ...], int], dict[tuple[int, ...], int]]:
    by_key = {c.name: c.index for c in counters} | {c.uuid: c.index for c in counters}
    out: dict[tuple[int, ...], int] = {}
    groups: dict[tuple[int, ...], int] = {}
    if function is None:
        return out, groups
    for selection in selections:
        if "all" in selection:
            chosen = [c.index for c in counters if c.scope in PER_WORKLOAD]
        else:
            chosen = [by_key[k] for k in selection if k in by_key]
        if not chosen:
            continue
        indices = tuple(sorted(set(chosen)))
        out[indices] = passes(vk, function, handle, family, indices)
        scope = {c.index: c.scope for c in counters}
        count = 0
        for part in (
            [i for i in indices if scope[i] in PER_WORKLOAD],
            [i for i in indices if scope[i] not in PER_WORKLOAD],
        ):
            current: list[int] = []
            for index in part:
                current.append(index)
                if len(current) == 1 or passes(vk, function, handle, family, current) > 1:
                    count, current = count + 1, [index]
        groups[indices] = count
    return out, groups


def passes(vk: Any, function: Any, handle: Any, family: int, indices: Sequence[int]) -> int:
    ffi = vk.ffi
    array = ffi.new("uint32_t[]", list(indices))
    info = ffi.new("VkQueryPoolPerformanceCreateInfoKHR *")
    info.sType = _STYPE_POOL_INFO
    info.queueFamilyIndex = family
    info.counterIndexCount = len(indices)
    info.pCounterIndices = array
    result = ffi.new("uint32_t *")
    function(handle, info, result)
    return int(result[0])
