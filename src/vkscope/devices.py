"""What every Vulkan physical device offers a GPU profiler.

`probe()` opens a private VkInstance through the PyPI `vulkan` bindings, reads properties,
features and queue families of each physical device, and closes the instance again.
`device_report` presents the result.
"""

from __future__ import annotations

import contextlib
import dataclasses
import os
import re
import struct
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from .protocol import QUEUE_FLAG

__all__ = [
    "DeviceInfo",
    "QueueFamilyInfo",
    "VulkanUnavailable",
    "probe",
]


class VulkanUnavailable(RuntimeError):
    """No Vulkan device can be used: loader missing, no driver, or no physical device."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


@dataclass(frozen=True)
class QueueFamilyInfo:
    index: int
    flags: list[str]
    queue_count: int
    timestamp_valid_bits: int
    performance_counters: int | None


@dataclass(frozen=True)
class DeviceInfo:
    index: int
    name: str
    device_type: str
    vendor_id: int
    device_id: int
    api_version: str
    driver_version: str
    driver_name: str
    driver_info: str
    timestamp_period_ns: float
    timestamp_compute_and_graphics: bool
    calibrated_time_domains: list[str]
    timeline_semaphore: bool
    pipeline_statistics_query: bool
    mesh_shader_queries: bool  # VK_EXT_mesh_shader's task and mesh shader statistics
    host_query_reset: bool
    dynamic_rendering: bool
    synchronization2: bool
    performance_query: bool
    debug_utils: bool
    debug_marker: bool
    frame_boundary: bool
    extensions: list[str]
    queue_families: list[QueueFamilyInfo]


# Numeric values are taken from the Vulkan registry rather than from the bindings: the `vulkan`
# package defines hundreds of alias constants (VK_TIME_DOMAIN_DEVICE_EXT, every *_KHR structure
# type that was promoted to core, ...) as None, and has no VK_API_VERSION_1_1 and later.
def _make_api_version(major: int, minor: int, patch: int = 0) -> int:
    return (major << 22) | (minor << 12) | patch


_API_1_0 = _make_api_version(1, 0)
_API_1_1 = _make_api_version(1, 1)
_API_1_2 = _make_api_version(1, 2)
_API_1_3 = _make_api_version(1, 3)

_VK_SUCCESS = 0
_VK_INCOMPLETE = 5
_VK_ERROR_INCOMPATIBLE_DRIVER = "VK_ERROR_INCOMPATIBLE_DRIVER"
_VENDOR_NVIDIA = 0x10DE
_INSTANCE_CREATE_ENUMERATE_PORTABILITY = 0x1

_STYPE_FEATURES_2 = 1000059000
_STYPE_PROPERTIES_2 = 1000059001
_STYPE_DRIVER_PROPERTIES = 1000196000
_STYPE_VULKAN_1_2_FEATURES = 51
_STYPE_VULKAN_1_3_FEATURES = 53

_EXT_PROPERTIES_2 = "VK_KHR_get_physical_device_properties2"
_EXT_PORTABILITY_ENUMERATION = "VK_KHR_portability_enumeration"
_EXT_DEBUG_UTILS = "VK_EXT_debug_utils"
_EXT_DRIVER_PROPERTIES = "VK_KHR_driver_properties"
_EXT_PERFORMANCE_QUERY = "VK_KHR_performance_query"
# KHR first: where a driver offers both, they are the same entry point under two names.
_CALIBRATION_EXTENSIONS = (
    ("VK_KHR_calibrated_timestamps", "vkGetPhysicalDeviceCalibrateableTimeDomainsKHR"),
    ("VK_EXT_calibrated_timestamps", "vkGetPhysicalDeviceCalibrateableTimeDomainsEXT"),
)

_DEVICE_TYPES = {
    0: "other",
    1: "integrated_gpu",
    2: "discrete_gpu",
    3: "virtual_gpu",
    4: "cpu",
}
_TIME_DOMAINS = {
    0: "device",
    1: "clock_monotonic",
    2: "clock_monotonic_raw",
    3: "query_performance_counter",
}

# Structures chained into vkGetPhysicalDeviceFeatures2. A feature promoted to core is read from
# VkPhysicalDeviceVulkan1xFeatures when the device's usable version has it, because drivers may
# drop the extension string once the feature is core; otherwise from the extension's own struct.
_CORE_FEATURE_STRUCTS = {
    _API_1_2: ("VkPhysicalDeviceVulkan12Features", _STYPE_VULKAN_1_2_FEATURES),
    _API_1_3: ("VkPhysicalDeviceVulkan13Features", _STYPE_VULKAN_1_3_FEATURES),
}


@dataclass(frozen=True)
class _ChainedFeature:
    key: str
    field: str
    core_version: int | None
    extension: str
    ctype: str
    stype: int


_CHAINED_FEATURES = (
    _ChainedFeature(
        "timeline_semaphore",
        "timelineSemaphore",
        _API_1_2,
        "VK_KHR_timeline_semaphore",
        "VkPhysicalDeviceTimelineSemaphoreFeatures",
        1000207000,
    ),
    _ChainedFeature(
        "host_query_reset",
        "hostQueryReset",
        _API_1_2,
        "VK_EXT_host_query_reset",
        "VkPhysicalDeviceHostQueryResetFeatures",
        1000261000,
    ),
    _ChainedFeature(
        "dynamic_rendering",
        "dynamicRendering",
        _API_1_3,
        "VK_KHR_dynamic_rendering",
        "VkPhysicalDeviceDynamicRenderingFeatures",
        1000044003,
    ),
    _ChainedFeature(
        "synchronization2",
        "synchronization2",
        _API_1_3,
        "VK_KHR_synchronization2",
        "VkPhysicalDeviceSynchronization2Features",
        1000314007,
    ),
    _ChainedFeature(
        "mesh_shader_queries",
        "meshShaderQueries",
        None,
        "VK_EXT_mesh_shader",
        "VkPhysicalDeviceMeshShaderFeaturesEXT",
        1000328000,
    ),
    _ChainedFeature(
        "performance_query",
        "performanceCounterQueryPools",
        None,
        _EXT_PERFORMANCE_QUERY,
        "VkPhysicalDevicePerformanceQueryFeaturesKHR",
        1000116000,
    ),
)

# These variables pull layers into an instance (VK_LOADER_LAYERS_ALLOW shields them from the
# disable filter). A profiling or capture layer enabled for the user's workloads (vkscope's own
# included) would otherwise profile the probe, write files or print into `--json` output, and
# any layer can add or hide extensions.
_LAYER_ENABLE_VARIABLES = (
    "VK_INSTANCE_LAYERS",
    "VK_LOADER_LAYERS_ENABLE",
    "VK_LOADER_LAYERS_ALLOW",
)
_LAYER_DISABLE_VARIABLE = "VK_LOADER_LAYERS_DISABLE"

_INSTALL_HINT = (
    "install a Vulkan driver (on Debian/Ubuntu: apt install mesa-vulkan-drivers, "
    "or the GPU vendor's driver)"
)


def probe() -> list[DeviceInfo]:
    """Describe every Vulkan physical device, in the loader's enumeration order.

    Layers are kept out of the probe's instance (implicit ones included, on loaders from
    1.3.234 on) so that it reports what the drivers offer. This briefly changes the process
    environment, so don't call it while another thread creates a Vulkan instance.

    Raises VulkanUnavailable when the loader, a driver or any physical device is missing.
    """
    vk = import_vulkan()
    with _layers_disabled():
        try:
            return _probe(vk)
        except (vk.VkError, vk.VkException) as exc:
            raise VulkanUnavailable(
                f"querying the Vulkan devices failed with {_result_name(exc)}"
            ) from exc


def import_vulkan() -> Any:
    """The `vulkan` bindings module; raises VulkanUnavailable saying what is missing."""
    try:
        import vulkan
    except OSError as exc:
        raise VulkanUnavailable(
            "the Vulkan loader (libvulkan.so.1) could not be loaded; install it together with "
            "a driver (on Debian/Ubuntu: apt install libvulkan1 mesa-vulkan-drivers)"
        ) from exc
    except ImportError as exc:
        raise VulkanUnavailable(
            f"the Python package 'vulkan' could not be imported ({exc})"
        ) from exc
    return vulkan


@contextlib.contextmanager
def _layers_disabled() -> Iterator[None]:
    # The loader reads these variables on every vkCreateInstance, so setting them for the
    # probe's lifetime is enough, and restoring them leaves the caller's environment as it was.
    names = (*_LAYER_ENABLE_VARIABLES, _LAYER_DISABLE_VARIABLE)
    saved = {name: os.environ.get(name) for name in names}
    try:
        for name in _LAYER_ENABLE_VARIABLES:
            os.environ.pop(name, None)
        os.environ[_LAYER_DISABLE_VARIABLE] = "~all~"
        yield
    finally:
        for name, value in saved.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value


@dataclass(frozen=True)
class _InstanceConfig:
    api_version: int
    extensions: tuple[str, ...]
    flags: int
    available_extensions: frozenset[str]

    @property
    def properties2_khr(self) -> bool:
        return _EXT_PROPERTIES_2 in self.extensions


def _probe(vk: Any) -> list[DeviceInfo]:
    config = _initial_config(vk)
    while True:
        with _instance(vk, config) as instance:
            handles = _physical_devices(vk, instance)
            if not handles:
                raise VulkanUnavailable(
                    f"the Vulkan loader found no physical device; {_INSTALL_HINT}, and check "
                    "that this user may open the GPU's device nodes"
                )
            # A device below Vulkan 1.1 only answers vkGetPhysicalDeviceFeatures2 and friends
            # through VK_KHR_get_physical_device_properties2, which must be enabled on the
            # instance; only then is it worth a second instance.
            if (
                not config.properties2_khr
                and _EXT_PROPERTIES_2 in config.available_extensions
                and any(_usable_version(vk, config, h) < _API_1_1 for h in handles)
            ):
                config = dataclasses.replace(
                    config, extensions=(*config.extensions, _EXT_PROPERTIES_2)
                )
                continue
            return [
                _describe(vk, instance, config, index, handle)
                for index, handle in enumerate(handles)
            ]


def _physical_devices(vk: Any, instance: Any) -> list[Any]:
    try:
        return list(vk.vkEnumeratePhysicalDevices(instance))
    except (vk.VkError, vk.VkException) as exc:
        # Typical for a hardware driver installed on a machine without its GPU, or for a user
        # without access to the GPU's device nodes (/dev/dri/*, /dev/nvidia*).
        raise VulkanUnavailable(
            f"vkEnumeratePhysicalDevices failed with {_result_name(exc)}: a Vulkan driver is "
            "installed but could not open any device; check that its GPU is present and that "
            f"this user may open the GPU's device nodes, or {_INSTALL_HINT}"
        ) from exc


def _initial_config(vk: Any) -> _InstanceConfig:
    try:
        loader_version = int(vk.vkEnumerateInstanceVersion())
    except AttributeError:
        # A Vulkan 1.0 loader does not export vkEnumerateInstanceVersion at all.
        loader_version = _API_1_0
    available = frozenset(
        str(ext.extensionName) for ext in vk.vkEnumerateInstanceExtensionProperties(None)
    )
    # A 1.0 loader rejects any other apiVersion with VK_ERROR_INCOMPATIBLE_DRIVER.
    api_version = _API_1_3 if loader_version >= _API_1_1 else _API_1_0
    extensions: tuple[str, ...] = ()
    flags = 0
    # Lists devices behind portability drivers (MoltenVK) that the loader hides otherwise.
    if _EXT_PORTABILITY_ENUMERATION in available:
        extensions = (_EXT_PORTABILITY_ENUMERATION,)
        flags = _INSTANCE_CREATE_ENUMERATE_PORTABILITY
    if api_version < _API_1_1 and _EXT_PROPERTIES_2 in available:
        extensions = (*extensions, _EXT_PROPERTIES_2)
    return _InstanceConfig(api_version, extensions, flags, available)


@contextlib.contextmanager
def _instance(vk: Any, config: _InstanceConfig) -> Iterator[Any]:
    app_info = vk.VkApplicationInfo(
        pApplicationName="vkscope devices",
        applicationVersion=1,
        pEngineName="vkscope",
        engineVersion=1,
        apiVersion=config.api_version,
    )
    create_info = vk.VkInstanceCreateInfo(
        flags=config.flags,
        pApplicationInfo=app_info,
        enabledExtensionCount=len(config.extensions),
        ppEnabledExtensionNames=list(config.extensions) or None,
    )
    try:
        instance = vk.vkCreateInstance(create_info, None)
    except (vk.VkError, vk.VkException, KeyError) as exc:
        name = _result_name(exc)
        if name == _VK_ERROR_INCOMPATIBLE_DRIVER:
            reason = "no usable Vulkan driver was found"
        else:
            reason = "the Vulkan loader or driver refused to start"
        raise VulkanUnavailable(
            f"vkCreateInstance failed with {name}: {reason}; {_INSTALL_HINT}, check "
            "VK_DRIVER_FILES / VK_ICD_FILENAMES if they are set, and run with "
            "VK_LOADER_DEBUG=error,driver to see why the loader rejected a driver"
        ) from exc
    try:
        yield instance
    finally:
        vk.vkDestroyInstance(instance, None)


def _result_name(exc: BaseException) -> str:
    # The bindings raise one class per VkResult (VkErrorIncompatibleDriver, ...) and a bare
    # KeyError holding the number for codes they do not know.
    if isinstance(exc, KeyError) and exc.args:
        return f"VkResult {exc.args[0]}"
    words = re.sub(r"(?<!^)(?=[A-Z])", "_", type(exc).__name__.removeprefix("Vk"))
    return f"VK_{words.upper()}"


def _usable_version(vk: Any, config: _InstanceConfig, handle: Any) -> int:
    properties = vk.ffi.new("VkPhysicalDeviceProperties *")
    vk.lib.vkGetPhysicalDeviceProperties(handle, properties)
    return _usable(config.api_version, int(properties.apiVersion))


def _usable(instance_version: int, device_version: int) -> int:
    # The core version an application may use with a device is capped by the apiVersion it
    # asked for at instance creation; patch numbers don't count.
    return min(instance_version, device_version) & ~0xFFF


def _describe(
    vk: Any, instance: Any, config: _InstanceConfig, index: int, handle: Any
) -> DeviceInfo:
    ffi = vk.ffi
    extensions = sorted(
        {str(ext.extensionName) for ext in vk.vkEnumerateDeviceExtensionProperties(handle, None)}
    )
    present = set(extensions)
    version = _usable_version(vk, config, handle)
    get_properties2, get_features2 = _query2_commands(vk, instance, config, version)

    properties2 = _out_struct(ffi, "VkPhysicalDeviceProperties2", _STYPE_PROPERTIES_2)
    features2 = _out_struct(ffi, "VkPhysicalDeviceFeatures2", _STYPE_FEATURES_2)
    driver = None
    chained: dict[str, tuple[Any, str]] = {}
    if get_properties2 is not None and get_features2 is not None:
        if version >= _API_1_2 or _EXT_DRIVER_PROPERTIES in present:
            driver = _out_struct(ffi, "VkPhysicalDeviceDriverProperties", _STYPE_DRIVER_PROPERTIES)
            properties2.pNext = driver
        chained = _chain_features(ffi, features2, version, present)
        get_properties2(handle, properties2)
        get_features2(handle, features2)
    else:
        # Only the Vulkan 1.0 structs can be filled: no driver name, every chained feature false.
        vk.lib.vkGetPhysicalDeviceProperties(handle, ffi.addressof(properties2, "properties"))
        vk.lib.vkGetPhysicalDeviceFeatures(handle, ffi.addressof(features2, "features"))

    props = properties2.properties
    limits = props.limits
    vendor_id = int(props.vendorID)
    feature = {key: bool(getattr(s, f)) for key, (s, f) in chained.items()}
    return DeviceInfo(
        index=index,
        name=_string(ffi, props.deviceName),
        device_type=_DEVICE_TYPES.get(int(props.deviceType), f"unknown_{props.deviceType}"),
        vendor_id=vendor_id,
        device_id=int(props.deviceID),
        api_version=_format_api_version(int(props.apiVersion)),
        driver_version=_format_driver_version(vendor_id, int(props.driverVersion)),
        driver_name=_string(ffi, driver.driverName) if driver is not None else "",
        driver_info=_string(ffi, driver.driverInfo) if driver is not None else "",
        timestamp_period_ns=_float32(float(limits.timestampPeriod)),
        timestamp_compute_and_graphics=bool(limits.timestampComputeAndGraphics),
        calibrated_time_domains=_time_domains(vk, instance, handle, present),
        timeline_semaphore=feature.get("timeline_semaphore", False),
        pipeline_statistics_query=bool(features2.features.pipelineStatisticsQuery),
        mesh_shader_queries=feature.get("mesh_shader_queries", False),
        host_query_reset=feature.get("host_query_reset", False),
        dynamic_rendering=feature.get("dynamic_rendering", False),
        synchronization2=feature.get("synchronization2", False),
        performance_query=feature.get("performance_query", False),
        debug_utils=_EXT_DEBUG_UTILS in config.available_extensions,
        debug_marker="VK_EXT_debug_marker" in present,
        frame_boundary="VK_EXT_frame_boundary" in present,
        extensions=extensions,
        queue_families=_queue_families(vk, instance, handle, present),
    )


def _query2_commands(
    vk: Any, instance: Any, config: _InstanceConfig, version: int
) -> tuple[Any, Any]:
    """vkGetPhysicalDeviceProperties2 and vkGetPhysicalDeviceFeatures2 as this device takes them."""
    if version >= _API_1_1:
        return vk.lib.vkGetPhysicalDeviceProperties2, vk.lib.vkGetPhysicalDeviceFeatures2
    if config.properties2_khr:
        return (
            instance_proc(vk, instance, "vkGetPhysicalDeviceProperties2KHR"),
            instance_proc(vk, instance, "vkGetPhysicalDeviceFeatures2KHR"),
        )
    return None, None


def _out_struct(ffi: Any, ctype: str, stype: int) -> Any:
    value = ffi.new(f"{ctype} *")
    value.sType = stype
    return value


def _chain_features(
    ffi: Any, head: Any, version: int, present: set[str]
) -> dict[str, tuple[Any, str]]:
    """Link the structures holding the wanted features behind `head`; map key -> (struct, field).

    The caller keeps the returned structures alive for as long as `head` points at them.
    """
    structs: dict[str, Any] = {}
    sources: dict[str, tuple[Any, str]] = {}
    for wanted in _CHAINED_FEATURES:
        if wanted.core_version is not None and version >= wanted.core_version:
            ctype, stype = _CORE_FEATURE_STRUCTS[wanted.core_version]
        elif wanted.extension in present:
            ctype, stype = wanted.ctype, wanted.stype
        else:
            continue
        if ctype not in structs:
            structs[ctype] = _out_struct(ffi, ctype, stype)
        sources[wanted.key] = (structs[ctype], wanted.field)
    tail = head
    for value in structs.values():
        tail.pNext = value
        tail = value
    return sources


def instance_proc(vk: Any, instance: Any, name: str) -> Any:
    """A raw, typed pointer to an instance-level command, or None where nothing provides it.

    The bindings' own wrappers from vkGetInstanceProcAddr are avoided on purpose: the one for
    vkEnumeratePhysicalDeviceQueueFamilyPerformanceQueryCountersKHR cannot work (it takes the
    first VkPerformanceCounterKHR for the counter count).
    """
    ffi = vk.ffi
    pointer = vk.lib.vkGetInstanceProcAddr(instance, name.encode("ascii"))
    if pointer == ffi.NULL:
        return None
    return ffi.cast(f"PFN_{name}", pointer)


def _time_domains(vk: Any, instance: Any, handle: Any, present: set[str]) -> list[str]:
    ffi = vk.ffi
    for extension, command in _CALIBRATION_EXTENSIONS:
        if extension not in present:
            continue
        function = instance_proc(vk, instance, command)
        if function is None:
            continue
        count = ffi.new("uint32_t *")
        if function(handle, count, ffi.NULL) != _VK_SUCCESS:
            continue
        domains = ffi.new("VkTimeDomainKHR[]", count[0])
        if function(handle, count, domains) not in (_VK_SUCCESS, _VK_INCOMPLETE):
            continue
        return [
            _TIME_DOMAINS.get(int(domain), f"time_domain_{int(domain)}")
            for domain in domains[0 : count[0]]
        ]
    return []


def _queue_families(
    vk: Any, instance: Any, handle: Any, present: set[str]
) -> list[QueueFamilyInfo]:
    ffi = vk.ffi
    counters = None
    if _EXT_PERFORMANCE_QUERY in present:
        counters = instance_proc(
            vk, instance, "vkEnumeratePhysicalDeviceQueueFamilyPerformanceQueryCountersKHR"
        )
    families = []
    for index, family in enumerate(vk.vkGetPhysicalDeviceQueueFamilyProperties(handle)):
        counter_count: int | None = None
        if counters is not None:
            count = ffi.new("uint32_t *")
            result = counters(handle, index, count, ffi.NULL, ffi.NULL)
            if result in (_VK_SUCCESS, _VK_INCOMPLETE):
                counter_count = int(count[0])
        families.append(
            QueueFamilyInfo(
                index=index,
                flags=_queue_flag_names(int(family.queueFlags)),
                queue_count=int(family.queueCount),
                timestamp_valid_bits=int(family.timestampValidBits),
                performance_counters=counter_count,
            )
        )
    return families


def _queue_flag_names(flags: int) -> list[str]:
    names = [name for bit, name in QUEUE_FLAG if flags & bit]
    known = 0
    for bit, _ in QUEUE_FLAG:
        known |= bit
    rest = flags & ~known
    # Bits added to the registry after this table still show up, by value.
    names.extend(f"0x{1 << bit:x}" for bit in range(32) if rest & (1 << bit))
    return names


def _string(ffi: Any, chars: Any) -> str:
    return str(ffi.string(chars).decode("utf-8", errors="replace"))


def _float32(value: float) -> float:
    """The shortest decimal that reads back as the same float32 (52.083332, not 52.0833320617)."""
    as_float32 = struct.unpack("<f", struct.pack("<f", value))[0]
    for digits in range(1, 10):
        shorter = float(f"{value:.{digits}g}")
        if struct.unpack("<f", struct.pack("<f", shorter))[0] == as_float32:
            return shorter
    return value


def _format_api_version(version: int) -> str:
    return f"{(version >> 22) & 0x7F}.{(version >> 12) & 0x3FF}.{version & 0xFFF}"


def _format_driver_version(vendor_id: int, version: int) -> str:
    if vendor_id == _VENDOR_NVIDIA:
        # NVIDIA packs 10.8.8.6 bits; decoded the Vulkan way, 550.54.14 would read 550.216.896.
        return (
            f"{(version >> 22) & 0x3FF}.{(version >> 14) & 0xFF}."
            f"{(version >> 6) & 0xFF}.{version & 0x3F}"
        )
    return f"{version >> 22}.{(version >> 12) & 0x3FF}.{version & 0xFFF}"
