"""Which GPU a Vulkan device runs on, by its PCI address, and the source that samples it.

The layer sends the device's PCI address in DEVICE where the driver has VK_EXT_pci_bus_info.
The address names the GPU in sysfs (its driver: nvidia, amdgpu, i915 or xe) and in NVML; a
device index would not (Vulkan, NVML and the kernel each number GPUs their own way). A device
without an address (lavapipe, drivers without the extension) is sampled only when the user
names one (`vkscope run --gpu-pci ADDRESS`).
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Final

from . import sysfs
from .amdgpu import open_amdgpu
from .intel import open_intel
from .metrics import GpuSource, NoGpu
from .nvml import open_nvml

NVIDIA_VENDOR: Final = 0x10DE
_ADDRESS: Final = re.compile(r"([0-9a-fA-F]{1,8}):([0-9a-fA-F]{1,2}):([0-9a-fA-F]{1,2})\.([0-7])")


def normal_pci(text: str) -> str:
    """`domain:bus:device.function` as sysfs writes it (0000:03:00.0); ValueError otherwise."""
    found = _ADDRESS.fullmatch(text.strip())
    if not found:
        raise ValueError(
            f"{text!r} is not a PCI address (domain:bus:device.function, e.g. 0000:03:00.0)"
        )
    domain, bus, device, function = (int(g, 16) for g in found.groups())
    if domain > 0xFFFF:
        return f"{domain:08x}:{bus:02x}:{device:02x}.{function:x}"
    return f"{domain:04x}:{bus:02x}:{device:02x}.{function:x}"


def open_gpu(pci: str, vendor_id: int | None, root: Path) -> GpuSource:
    """The source of the GPU at `pci`; NoGpu says why there is none."""
    device = sysfs.pci_device(root, pci)
    try:
        event = sysfs.uevent(device)
    except OSError:
        if vendor_id == NVIDIA_VENDOR:
            return open_nvml(pci)
        raise NoGpu(f"no PCI device {pci} under {root}/bus/pci/devices") from None
    driver = event.get("DRIVER", "")
    pci_id = event.get("PCI_ID", "")
    if driver == "nvidia":
        return open_nvml(pci)
    if driver == "amdgpu":
        return open_amdgpu(device, pci, pci_id)
    if driver in ("i915", "xe"):
        return open_intel(device, pci, pci_id, driver)
    said = f"driver {driver}" if driver else "no driver bound"
    raise NoGpu(f"{pci} has {said}: vkscope samples nvidia (NVML), amdgpu, i915 and xe")
