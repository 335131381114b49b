"""The GPU's state during a capture, sampled by the host: clocks, power, energy, temperature,
utilization and throttle reasons of each GPU the application uses (docs/gpu-state.md).

The sources (NVML, amdgpu, i915 and xe sysfs files) and the sampler thread; the capture stores
what they give (capture/write) and the readers join it to frames and workloads (capture/read).
"""

from .gpus import normal_pci, open_gpu
from .metrics import METRIC_NAMES, METRICS, NOT_THROTTLING, GpuInfo, GpuSource, Metric, NoGpu
from .sampler import (
    DEFAULT_RATE_HZ,
    OVERRIDE,
    PCI_BUS_INFO,
    SLOW_INTERVAL_NS,
    DeviceGpu,
    DeviceRequest,
    GpuRow,
    GpuSampler,
    GpuStateBatch,
    Lost,
    Sample,
    SamplerSummary,
)
from .sysfs import ROOT_VARIABLE
from .sysfs import root as sysfs_root

__all__ = [
    "DEFAULT_RATE_HZ",
    "METRICS",
    "METRIC_NAMES",
    "NOT_THROTTLING",
    "OVERRIDE",
    "PCI_BUS_INFO",
    "ROOT_VARIABLE",
    "SLOW_INTERVAL_NS",
    "DeviceGpu",
    "DeviceRequest",
    "GpuInfo",
    "GpuRow",
    "GpuSampler",
    "GpuSource",
    "GpuStateBatch",
    "Lost",
    "Metric",
    "NoGpu",
    "Sample",
    "SamplerSummary",
    "normal_pci",
    "open_gpu",
    "sysfs_root",
]
