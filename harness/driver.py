"""What the Vulkan driver offers, probed without vkscope: the only reason a test may skip.

A test that needs something the driver may lack (ray tracing, a second queue, ...) asks
`driver_lacks(feature)` or `skip_unless(feature)`, never the workload program's own SKIP line
under the layer: if a regression made the layer hide an extension or a queue, the scenario would
skip under the layer and a test trusting that SKIP would pass. The probe runs once per session,
in a process of its own, through the PyPI `vulkan` bindings with no layer enabled (the layer
variables removed and every implicit layer disabled), on device 0, the one `vkscope-workload`
uses by default. `verdicts()` then checks a workload run's PASS/SKIP lines against it: a scenario
skips exactly when the driver lacks what it needs.

Run as a script, the module prints the probe as JSON (the device checks use it too).
"""

from __future__ import annotations

import functools
import json
import os
import subprocess
import sys
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

# What each scenario of vkscope-workload needs from the driver (workloads/src/scenarios/*.cpp
# throw SkipScenario exactly for these). Every scenario is listed; one missing here needs nothing.
SCENARIO_NEEDS: dict[str, tuple[str, ...]] = {
    "compute": (),
    "buffer_transfer": (),
    "reusable": (),
    "renderpass": ("graphics_queue", "vulkan_1_2"),
    "dynamic_rendering": ("graphics_queue", "dynamic_rendering"),
    "secondary": ("graphics_queue",),
    "multiview": ("graphics_queue", "multiview"),
    "image_transfer": ("msaa_4x",),
    "labels": ("debug_utils",),
    "multi_submit": ("synchronization2",),
    "multi_queue": ("second_queue", "timeline_semaphore"),
    "threads": ("graphics_queue",),
    "indirect_draw": ("graphics_queue", "multi_draw_indirect", "draw_indirect_count"),
    "ray_tracing": ("ray_tracing",),
    "app_statistics": ("pipeline_statistics_query",),
    "game": ("graphics_queue",),
}
FEATURES = (
    "graphics_queue",
    "second_queue",
    "vulkan_1_2",
    "timeline_semaphore",
    "synchronization2",
    "dynamic_rendering",
    "multiview",
    "multi_draw_indirect",
    "draw_indirect_count",
    "msaa_4x",
    "debug_utils",
    "ray_tracing",
    "pipeline_statistics_query",
    "inherited_queries",
    "mesh_shader",
    "mesh_shader_queries",
    # The GPU's PCI address (VK_EXT_pci_bus_info), and NVML knowing a GPU at it: what the host's
    # GPU sampler needs on NVIDIA (docs/gpu-state.md).
    "pci_bus_info",
    "nvml",
)
# Mesa's lavapipe, the driver CI runs on: one queue family of one queue, no ray tracing, no
# queries active across vkCmdExecuteCommands.
LAVAPIPE_LACKS = frozenset(
    {"second_queue", "ray_tracing", "inherited_queries", "mesh_shader", "mesh_shader_queries",
     "pci_bus_info", "nvml"}
)  # fmt: skip
LAVAPIPE_SKIPS = frozenset({"multi_queue", "ray_tracing"})


@dataclass(frozen=True)
class Driver:
    """Device 0 as the driver describes it, with no layer in between."""

    device: str
    driver_name: str
    driver_info: str
    api_version: str
    queue_families: list[dict[str, Any]]
    cpu_device: bool  # VK_PHYSICAL_DEVICE_TYPE_CPU: the device's work runs on the CPU
    have: dict[str, bool]
    why: dict[str, str]  # for each feature the driver lacks: what the probe saw
    pci: str | None = None  # the device's PCI address (VK_EXT_pci_bus_info), as sysfs writes it

    @property
    def lavapipe(self) -> bool:
        return self.driver_name == "llvmpipe" or self.device.startswith("llvmpipe")

    def lacks(self, feature: str) -> str | None:
        if feature not in self.have:
            raise KeyError(f"unknown driver feature {feature!r} (one of {', '.join(FEATURES)})")
        return None if self.have[feature] else self.why[feature]

    def scenario_lacks(self, scenario: str) -> str | None:
        """Why the driver cannot run `scenario`, or None when it has all the scenario needs."""
        reasons = [r for f in SCENARIO_NEEDS.get(scenario, ()) if (r := self.lacks(f))]
        return "; ".join(reasons) or None

    def expected_skips(self, scenarios: Iterable[str]) -> dict[str, str]:
        return {s: r for s in scenarios if (r := self.scenario_lacks(s))}

    def as_json(self) -> dict[str, Any]:
        return {
            "device": self.device,
            "driver_name": self.driver_name,
            "driver_info": self.driver_info,
            "api_version": self.api_version,
            "queue_families": self.queue_families,
            "cpu_device": self.cpu_device,
            "have": self.have,
            "why": self.why,
            "pci": self.pci,
        }


def probe_env(environ: Mapping[str, str] | None = None) -> dict[str, str]:
    """The environment with every way of enabling a layer removed and implicit layers off."""
    env = {
        k: v
        for k, v in (os.environ if environ is None else environ).items()
        if not k.startswith("VK_VKSCOPE_")
        and k
        not in (
            "VK_INSTANCE_LAYERS",
            "VK_ADD_LAYER_PATH",
            "VK_LAYER_PATH",
            "VK_LOADER_LAYERS_ENABLE",
            "VK_LOADER_LAYERS_ALLOW",
        )
    }
    env["VK_LOADER_LAYERS_DISABLE"] = "~all~"
    env.setdefault("LP_NUM_THREADS", "0")
    return env


def probe(environ: Mapping[str, str] | None = None, python: str = sys.executable) -> Driver:
    """Probes the driver in a fresh process without any layer (see the module's docstring)."""
    res = subprocess.run(
        [python, str(Path(__file__).resolve())],
        env=probe_env(environ),
        capture_output=True,
        text=True,
        timeout=120,
    )
    if res.returncode != 0:
        raise RuntimeError(f"probing the Vulkan driver failed:\n{res.stdout}{res.stderr}")
    return Driver(**json.loads(res.stdout))


@functools.cache
def driver() -> Driver:
    """The probe, once per session."""
    return probe()


def driver_lacks(feature: str) -> str | None:
    """What the driver (without vkscope) lacks of `feature`, or None when it has it."""
    return driver().lacks(feature)


def skip_unless(feature: str) -> None:
    """The one way a test skips: the driver, probed without vkscope, lacks `feature`."""
    reason = driver_lacks(feature)
    if reason is not None:
        import pytest

        pytest.skip(f"the driver lacks {feature} (probed without vkscope): {reason}")


def verdicts(
    stdout: str, scenarios: Iterable[str] | None = None, probed: Driver | None = None
) -> dict[str, str]:
    """Checks a vkscope-workload run's verdict lines: every scenario passed, except those the
    driver (`probed`, by default this session's probe) lacks something for, which must have
    skipped. Returns the skipped ones and why."""
    lines = stdout.splitlines()
    ran = {line.split()[1].rstrip(":") for line in lines if line.startswith(("PASS ", "SKIP "))}
    names = list(ran if scenarios is None else scenarios)
    expected = (probed or driver()).expected_skips(names)
    wrong = []
    for name in names:
        passed = f"PASS {name}" in lines
        skipped = [line for line in lines if line.startswith(f"SKIP {name}:")]
        if name in expected and not skipped:
            wrong.append(f"{name}: the driver lacks {expected[name]}, yet it did not skip")
        elif name not in expected and not passed:
            why = skipped[0] if skipped else "no verdict"
            wrong.append(f"{name}: the driver has all it needs, yet: {why}")
    assert not wrong, "\n".join(wrong) + "\n" + stdout
    return expected


# -- the probe itself, in the child process ------------------------------------------------------

_DEVICE_TYPE_CPU = 4  # VK_PHYSICAL_DEVICE_TYPE_CPU
_STYPE_FEATURES_2 = 1000059000
_STYPE_VULKAN_1_1_FEATURES = 49
_STYPE_VULKAN_1_2_FEATURES = 51
_STYPE_VULKAN_1_3_FEATURES = 53
_STYPE_ACCELERATION_STRUCTURE_FEATURES = 1000150013
_STYPE_RAY_TRACING_PIPELINE_FEATURES = 1000347000
_STYPE_DRIVER_PROPERTIES = 1000196000
_STYPE_PROPERTIES_2 = 1000059001
_STYPE_MESH_SHADER_FEATURES = 1000328000
_STYPE_PCI_BUS_INFO_PROPERTIES = 1000212000
_MESH_SHADER_EXTENSION = "VK_EXT_mesh_shader"
_RAY_TRACING_EXTENSIONS = (
    "VK_KHR_ray_tracing_pipeline",
    "VK_KHR_acceleration_structure",
    "VK_KHR_deferred_host_operations",
)
_GRAPHICS, _COMPUTE, _TRANSFER = 0x1, 0x2, 0x4


def _version(major: int, minor: int) -> int:
    return (major << 22) | (minor << 12)


def _probe_here() -> dict[str, Any]:  # pragma: no cover - runs in the child process
    import vulkan as vk

    ffi = vk.ffi
    instance_extensions = {
        str(e.extensionName) for e in vk.vkEnumerateInstanceExtensionProperties(None)
    }
    app = vk.VkApplicationInfo(
        sType=vk.VK_STRUCTURE_TYPE_APPLICATION_INFO,
        pApplicationName="vkscope driver probe",
        apiVersion=_version(1, 3),
    )
    instance = vk.vkCreateInstance(
        vk.VkInstanceCreateInfo(
            sType=vk.VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO, pApplicationInfo=app
        ),
        None,
    )
    try:
        physical = vk.vkEnumeratePhysicalDevices(instance)[0]
        props = vk.vkGetPhysicalDeviceProperties(physical)
        api = min(int(props.apiVersion) & ~0xFFF, _version(1, 3))
        extensions = {
            str(e.extensionName) for e in vk.vkEnumerateDeviceExtensionProperties(physical, None)
        }
        families = [
            {
                "index": i,
                "flags": int(f.queueFlags),
                "count": int(f.queueCount),
                "timestamp_valid_bits": int(f.timestampValidBits),
            }
            for i, f in enumerate(vk.vkGetPhysicalDeviceQueueFamilyProperties(physical))
        ]

        def out(ctype: str, stype: int) -> Any:
            value = ffi.new(f"{ctype} *")
            value.sType = stype
            return value

        head = out("VkPhysicalDeviceFeatures2", _STYPE_FEATURES_2)
        v11 = out("VkPhysicalDeviceVulkan11Features", _STYPE_VULKAN_1_1_FEATURES)
        v12 = out("VkPhysicalDeviceVulkan12Features", _STYPE_VULKAN_1_2_FEATURES)
        v13 = out("VkPhysicalDeviceVulkan13Features", _STYPE_VULKAN_1_3_FEATURES)
        rt = out(
            "VkPhysicalDeviceRayTracingPipelineFeaturesKHR", _STYPE_RAY_TRACING_PIPELINE_FEATURES
        )
        accel = out(
            "VkPhysicalDeviceAccelerationStructureFeaturesKHR",
            _STYPE_ACCELERATION_STRUCTURE_FEATURES,
        )
        chain = [s for s, ok in ((v11, api >= _version(1, 2)), (v12, api >= _version(1, 2)),
                                 (v13, api >= _version(1, 3))) if ok]  # fmt: skip
        has_rt_extensions = all(e in extensions for e in _RAY_TRACING_EXTENSIONS)
        if has_rt_extensions:
            chain += [rt, accel]
        mesh = out("VkPhysicalDeviceMeshShaderFeaturesEXT", _STYPE_MESH_SHADER_FEATURES)
        has_mesh_extension = _MESH_SHADER_EXTENSION in extensions
        if has_mesh_extension:
            chain.append(mesh)
        tail = head
        for s in chain:
            tail.pNext = s
            tail = s
        vk.lib.vkGetPhysicalDeviceFeatures2(physical, head)
        driver = out("VkPhysicalDeviceDriverProperties", _STYPE_DRIVER_PROPERTIES)
        props2 = out("VkPhysicalDeviceProperties2", _STYPE_PROPERTIES_2)
        props2.pNext = driver
        pci_info = out("VkPhysicalDevicePCIBusInfoPropertiesEXT", _STYPE_PCI_BUS_INFO_PROPERTIES)
        has_pci = "VK_EXT_pci_bus_info" in extensions
        if has_pci:
            driver.pNext = pci_info
        vk.lib.vkGetPhysicalDeviceProperties2(physical, props2)
        image = ffi.new("VkImageFormatProperties *")
        # R8G8B8A8_UNORM, 2D, optimal tiling, transfer source and destination, color attachment:
        # the image the image_transfer scenario resolves from.
        msaa_result = vk.lib.vkGetPhysicalDeviceImageFormatProperties(
            physical, 37, 1, 0, 0x1 | 0x2 | 0x10, 0, image
        )
    finally:
        vk.vkDestroyInstance(instance, None)

    main = next(
        (f for f in families if f["flags"] & (_GRAPHICS | _COMPUTE) == _GRAPHICS | _COMPUTE),
        next((f for f in families if f["flags"] & _COMPUTE), None),
    )
    others = [
        f
        for f in families
        if main is not None
        and f["index"] != main["index"]
        and f["count"] > 0
        and f["flags"] & (_GRAPHICS | _COMPUTE | _TRANSFER)
    ]
    second = bool(others) or (main is not None and main["count"] >= 2)
    has12, has13 = api >= _version(1, 2), api >= _version(1, 3)
    rt_features = {
        "rayTracingPipeline": bool(rt.rayTracingPipeline),
        "rayTracingPipelineTraceRaysIndirect": bool(rt.rayTracingPipelineTraceRaysIndirect),
        "accelerationStructure": bool(accel.accelerationStructure),
        "bufferDeviceAddress": bool(v12.bufferDeviceAddress) if has12 else False,
    }
    missing_rt = [e for e in _RAY_TRACING_EXTENSIONS if e not in extensions]
    pci = (
        f"{pci_info.pciDomain:04x}:{pci_info.pciBus:02x}:{pci_info.pciDevice:02x}."
        f"{pci_info.pciFunction:x}"
        if has_pci
        else None
    )
    nvml, nvml_why = _nvml_knows(pci)
    version = f"{api >> 22}.{(api >> 12) & 0x3FF}"
    facts: dict[str, tuple[bool, str]] = {
        "graphics_queue": (
            main is not None and bool(main["flags"] & _GRAPHICS),
            "no queue family with graphics and compute",
        ),
        "second_queue": (
            second,
            "no second queue in the queue families "
            + ", ".join(f"#{f['index']} ({f['count']} x flags {f['flags']:#x})" for f in families),
        ),
        "vulkan_1_2": (has12, f"device API version {version}"),
        "timeline_semaphore": (has12 and bool(v12.timelineSemaphore), "timelineSemaphore is false"),
        "synchronization2": (has13 and bool(v13.synchronization2), "synchronization2 is false"),
        "dynamic_rendering": (has13 and bool(v13.dynamicRendering), "dynamicRendering is false"),
        "multiview": (has12 and bool(v11.multiview), "multiview is false"),
        "multi_draw_indirect": (
            bool(head.features.multiDrawIndirect),
            "multiDrawIndirect is false",
        ),
        "draw_indirect_count": (
            has12 and bool(v12.drawIndirectCount),
            "drawIndirectCount is false",
        ),
        "msaa_4x": (
            msaa_result == 0 and bool(image.sampleCounts & 0x4),
            "no 4x MSAA for R8G8B8A8_UNORM",
        ),
        "pipeline_statistics_query": (
            bool(head.features.pipelineStatisticsQuery) and main is not None,
            "pipelineStatisticsQuery is false",
        ),
        "inherited_queries": (
            bool(head.features.inheritedQueries),
            "inheritedQueries is false",
        ),
        "mesh_shader": (
            has_mesh_extension and has12 and bool(mesh.taskShader) and bool(mesh.meshShader),
            f"no {_MESH_SHADER_EXTENSION} device extension"
            if not has_mesh_extension
            else "taskShader or meshShader is false",
        ),
        "mesh_shader_queries": (
            has_mesh_extension and bool(mesh.meshShaderQueries),
            f"no {_MESH_SHADER_EXTENSION} device extension"
            if not has_mesh_extension
            else "meshShaderQueries is false",
        ),
        "pci_bus_info": (has_pci, "no VK_EXT_pci_bus_info device extension"),
        "nvml": (nvml, nvml_why),
        "debug_utils": (
            "VK_EXT_debug_utils" in instance_extensions,
            "no VK_EXT_debug_utils instance extension",
        ),
        "ray_tracing": (
            not missing_rt and has12 and all(rt_features.values()),
            f"no {', '.join(missing_rt)} device extension"
            if missing_rt
            else f"device API version {version}"
            if not has12
            else "features false: " + ", ".join(k for k, v in rt_features.items() if not v),
        ),
    }
    return {
        "device": str(props.deviceName),
        "driver_name": ffi.string(driver.driverName).decode(errors="replace"),
        "driver_info": ffi.string(driver.driverInfo).decode(errors="replace"),
        "api_version": version,
        "queue_families": families,
        "cpu_device": int(props.deviceType) == _DEVICE_TYPE_CPU,
        "have": {k: ok for k, (ok, _) in facts.items()},
        "why": {k: why for k, (ok, why) in facts.items() if not ok},
        "pci": pci,
    }


def _nvml_knows(pci: str | None) -> tuple[bool, str]:  # pragma: no cover - the child process
    """Whether NVML (NVIDIA's maintained binding, nvidia-ml-py) starts and has a GPU at `pci`."""
    if pci is None:
        return False, "no PCI address to find the GPU by (no VK_EXT_pci_bus_info)"
    try:
        import pynvml
    except ImportError as exc:
        return False, f"the NVML binding (nvidia-ml-py) is not installed: {exc}"
    try:
        pynvml.nvmlInit()
    except pynvml.NVMLError as exc:
        return False, f"NVML cannot start: {exc}"
    try:
        pynvml.nvmlDeviceGetHandleByPciBusId(pci)
    except pynvml.NVMLError as exc:
        return False, f"NVML knows no GPU at {pci}: {exc}"
    finally:
        pynvml.nvmlShutdown()
    return True, ""


if __name__ == "__main__":  # pragma: no cover
    # Asked from a shell, the probe still runs in an environment without layers.
    bare = os.environ.get("VK_LOADER_LAYERS_DISABLE") == "~all~"
    print(json.dumps(_probe_here() if bare else probe().as_json()))
