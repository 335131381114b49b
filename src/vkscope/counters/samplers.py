"""Samplers (`--counters sampler:NAME` or `sampler:PATH`): plugins the layer samples between
workloads through the C interface of include/vkscope/sampler.h. The host checks each before the
application starts: a built-in name it knows, or a library that loads and answers the interface's
version, so that a typing error or a broken plugin is one clear message, not a silent absence."""

from __future__ import annotations

import ctypes
import ctypes.util
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

from ..paths import PACKAGE_DIR

if TYPE_CHECKING:
    from ..devices import DeviceInfo

PREFIX: Final = "sampler:"
ABI_VERSION: Final = 1
ENTRY: Final = "vkscope_sampler_entry"


# The mali sampler's plugin, installed next to the layer only when vkscope was built with Arm's
# libGPUCounters (layer/samplers/mali).
MALI_PLUGIN: Final = "libvkscope_sampler_mali.so"
MALI_BUILD: Final = (
    f"{MALI_PLUGIN} is not installed next to the layer: build vkscope with "
    "-DVKSCOPE_LIBGPUCOUNTERS=<libGPUCounters source> (docs/counters.md)"
)


@dataclass(frozen=True, slots=True)
class Builtin:
    name: str
    what: str
    vendor_id: int | None  # the only vendor it opens on; None: any
    vendor: str = ""  # that vendor's devices, as a message names them


BUILTIN: Final = (
    Builtin("cpu_time", "CPU time of the process less the sampling thread's (ns)", None),
    Builtin(
        "mali",
        "Arm Mali GPUs through Arm's libGPUCounters: active cycles, bus bytes, primitives, threads",
        0x13B5,
        "an Arm Mali",
    ),
)
BUILTIN_NAMES: Final = {b.name: b for b in BUILTIN}


class SamplerError(ValueError):
    """A sampler the `counters` setting names that cannot be used; the message says why."""


def requested(text: str) -> list[str]:
    """The `sampler:` items of a `counters` value, as written after the prefix."""
    out = []
    for raw in text.split(","):
        item = raw.strip()
        if item.startswith(PREFIX):
            spec = item.removeprefix(PREFIX).strip()
            if not spec:
                raise SamplerError("counters: 'sampler:' names no sampler (sampler:NAME or PATH)")
            out.append(spec)
    return out


def without_samplers(text: str) -> str:
    """The `counters` value less its `sampler:` items (what the other sources read)."""
    return ",".join(i for i in text.split(",") if not i.strip().startswith(PREFIX))


class _Api(ctypes.Structure):
    _fields_ = [
        ("abi_version", ctypes.c_uint32),
        ("name", ctypes.c_char_p),
        ("open", ctypes.c_void_p),
        ("counters", ctypes.c_void_p),
        ("sample", ctypes.c_void_p),
        ("close", ctypes.c_void_p),
    ]


def check_library(path: str) -> str:
    """The name a sampler library gives itself; SamplerError when it cannot serve the layer."""
    file = Path(path)
    if not file.is_file():
        raise SamplerError(f"counters: sampler:{path}: no such file")
    try:
        library = ctypes.CDLL(str(file.resolve()), mode=ctypes.RTLD_LOCAL)
    except OSError as exc:
        raise SamplerError(f"counters: sampler:{path} cannot be loaded: {exc}") from None
    try:
        entry = getattr(library, ENTRY)
    except AttributeError:
        raise SamplerError(f"counters: sampler:{path} exports no {ENTRY}") from None
    entry.restype = ctypes.POINTER(_Api)
    entry.argtypes = [ctypes.c_uint32]
    api = entry(ABI_VERSION)
    if not api:
        raise SamplerError(f"counters: sampler:{path} does not speak sampler ABI {ABI_VERSION}")
    table = api.contents
    if table.abi_version != ABI_VERSION or not all(
        (table.open, table.counters, table.sample, table.close)
    ):
        raise SamplerError(f"counters: sampler:{path} returned an incomplete function table")
    return (table.name or b"").decode("utf-8", "replace")


def check_samplers(text: str) -> list[str]:
    """Every sampler the `counters` value names, checked; SamplerError for the first bad one."""
    specs = requested(text)
    for spec in specs:
        if "/" in spec:
            check_library(spec)
        elif spec == "nvml":
            raise SamplerError(
                "counters: sampler:nvml is gone: `vkscope run` samples NVIDIA GPUs' clocks, "
                "power and energy itself, from the host, at no cost to the application, and "
                "gives each workload the energy it used (docs/gpu-state.md)"
            )
        elif spec not in BUILTIN_NAMES:
            known = ", ".join(BUILTIN_NAMES)
            raise SamplerError(
                f"counters: no sampler named {spec!r} (built in: {known}; a library is named "
                "by its path, with a '/')"
            )
    return specs


def listing(device: DeviceInfo) -> dict[str, Any]:
    """Every built-in sampler, whether it can open on `device` (and why not), and how samples
    would be taken there (what `vkscope counters` shows); a library given by path may open
    anywhere."""
    samplers = []
    for b in BUILTIN:
        why = unavailable(b.name, device)
        samplers.append({"name": b.name, "what": b.what, "available": why is None, "note": why})
    return {
        "sampling": "handover" if handover_supported(device) else "per_command_buffer",
        "samplers": samplers,
    }


def unavailable(name: str, device: DeviceInfo) -> str | None:
    """Why the built-in sampler `name` will not open on `device` (the layer would say the same
    in its log), or None."""
    b = BUILTIN_NAMES[name]
    if b.vendor_id is not None and b.vendor_id != device.vendor_id:
        return f"not {b.vendor} device"
    if name == "mali" and not (PACKAGE_DIR / "_layer" / MALI_PLUGIN).is_file():
        return MALI_BUILD
    return None


def check_devices(specs: list[str], devices: list[DeviceInfo]) -> None:
    """SamplerError for a built-in sampler that no device here can open: the run would collect
    nothing from it."""
    for spec in specs:
        if spec not in BUILTIN_NAMES or not devices:
            continue
        reasons = [(d, unavailable(spec, d)) for d in devices]
        if all(why for _, why in reasons):
            why = "; ".join(f"device {d.index} ({d.name}): {w}" for d, w in reasons)
            raise SamplerError(f"counters: sampler:{spec} cannot sample here: {why}")


def handover_supported(device: DeviceInfo) -> bool:
    """Whether the layer's list of drivers that support the event handover has this one (the
    list is the layer's: layer/src/instruments/samplers/instrument.cpp)."""
    if device.vendor_id == 0x10005:
        return device.name.startswith("llvmpipe")
    if device.vendor_id == 0x10DE:
        major = device.driver_version.split(".")[0]
        return major.isdigit() and int(major) >= 580
    return device.vendor_id == 0x13B5


def sampling_notes(devices: list[DeviceInfo], sampling: str | None) -> list[str]:
    """What the user should know before the application starts: where samplers are not taken
    between workloads."""
    if sampling in ("handover", "per_command_buffer"):
        return [f"counters: samplers sampled by {sampling.replace('_', ' ')} on every device"]
    return [
        f"counters: device {d.index} ({d.name}) is not known to support the event handover: "
        "samplers are sampled per command buffer there (each submitted alone and waited for; "
        "-s counter_sampling=handover forces the handover)"
        for d in devices
        if not handover_supported(d)
    ]
