"""vkscope: per-workload Vulkan GPU profiling."""

__version__ = "0.1.0"
