"""The pipeline statistics vkscope collects: each one's name, unit and one line on what it counts,
in Vulkan's bit order.

At the package's bottom, beside the protocol, so that the capture reader (which orders and
describes a capture's counters) and the counters package both use it. Pipeline statistics are
Vulkan's VkQueryPipelineStatisticFlagBits; their names are the protocol definition's
(enums.pipeline_statistic), so the layer and the host cannot disagree. The layer announces only
names for them (COUNTERS): units and descriptions come from here.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

from .protocol import PIPELINE_STATISTIC

SOURCE: Final = "pipeline_statistics"


@dataclass(frozen=True, slots=True)
class Counter:
    source: str
    name: str
    unit: str
    description: str

    def as_json(self) -> dict[str, str]:
        return {
            "source": self.source,
            "name": self.name,
            "unit": self.unit,
            "description": self.description,
        }


_UNITS_AND_TEXT: Final = {
    "input_assembly_vertices": ("vertices", "vertices the input assembler read"),
    "input_assembly_primitives": ("primitives", "primitives the input assembler made"),
    "vertex_shader_invocations": ("invocations", "vertex shader invocations"),
    "geometry_shader_invocations": ("invocations", "geometry shader invocations"),
    "geometry_shader_primitives": ("primitives", "primitives geometry shaders emitted"),
    "clipping_invocations": ("primitives", "primitives that reached the clipping stage"),
    "clipping_primitives": ("primitives", "primitives the clipping stage let through"),
    "fragment_shader_invocations": ("invocations", "fragment shader invocations"),
    "tessellation_control_shader_patches": (
        "patches",
        "patches tessellation control shaders processed",
    ),
    "tessellation_evaluation_shader_invocations": (
        "invocations",
        "tessellation evaluation shader invocations",
    ),
    "compute_shader_invocations": ("invocations", "compute shader invocations"),
    "task_shader_invocations": ("invocations", "task shader invocations"),
    "mesh_shader_invocations": ("invocations", "mesh shader invocations"),
}

# In the order Vulkan writes them (bit order).
ALL: Final = tuple(
    Counter(SOURCE, name, *_UNITS_AND_TEXT[name]) for _, name in sorted(PIPELINE_STATISTIC)
)
# Every statistic is collected where the device can count it.
COLLECTED: Final = ALL
# Task and mesh shader statistics need VK_EXT_mesh_shader's meshShaderQueries feature, and count
# only in an application that enabled task or mesh shaders (the layer then enables the queries).
MESH: Final = frozenset({"task_shader_invocations", "mesh_shader_invocations"})
BY_NAME: Final = {c.name: c for c in ALL}
_COMPUTE: Final = "compute_shader_invocations"


def family_counters(
    flags: list[str] | tuple[str, ...], statistics: bool = True, mesh_queries: bool = False
) -> list[Counter]:
    """What a queue family with these flags (the protocol's queue_flag names) collects: graphics
    statistics need a graphics family, compute invocations a compute one (VUIDs 00804/00805 of
    vkCmdBeginQuery). None without the device's pipelineStatisticsQuery (`statistics`); task and
    mesh shader invocations only with its meshShaderQueries (`mesh_queries`)."""
    if not statistics:
        return []
    graphics, compute = "graphics" in flags, "compute" in flags
    return [
        c
        for c in COLLECTED
        if (compute if c.name == _COMPUTE else graphics and (mesh_queries or c.name not in MESH))
    ]


def describe(name: str) -> Counter | None:
    return BY_NAME.get(name)
