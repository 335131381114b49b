"""What the Python API hands out when reading a capture: plain frozen records.

A workload instance, of which a capture holds millions, is a msgspec Struct (made several times
faster than a frozen dataclass); the rest are dataclasses."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, NamedTuple

import msgspec

from .gpu_time import usable_gpu_ns
from .identity import IdentityOrder, WorkloadIdentity, labels_of


@dataclass(frozen=True, slots=True)
class CaptureMeta:
    schema_version: int
    vkscope_version: str | None
    created_utc: str | None
    finished_utc: str | None
    status: str
    protocol_version: int | None
    process_name: str | None
    pid: int | None
    connections: int
    messages: int
    bad_messages: int
    skipped_messages: int
    dropped: int
    capture_id: str | None = None  # the capture's own identity (schema 8 on); None before
    refused_connections: int = 0  # from processes of other users, closed unread
    extra: dict[str, Any] = field(default_factory=dict)  # keys this vkscope does not know


@dataclass(frozen=True, slots=True)
class Process:
    """One connection; `process` is the id its rows are filed under (see capture-schema.md)."""

    id: int
    process: int
    peer: str | None
    pid: int | None
    name: str | None
    layer_version: str | None
    protocol: int | None
    state: str
    messages: int
    bad_messages: int
    skipped_messages: int
    dropped: int


@dataclass(frozen=True, slots=True)
class Queue:
    process: int
    device: int
    id: int
    family: int | None
    index: int | None
    flags: tuple[str, ...]
    timestamp_valid_bits: int | None


@dataclass(frozen=True, slots=True)
class Device:
    process: int
    id: int
    name: str | None
    vendor_id: int | None
    device_id: int | None
    driver_name: str | None
    driver_info: str | None
    api_version: str | None
    timestamp_period_ns: float | None
    # With timing on: `clock_monotonic` (GPU times on the CPU's CLOCK_MONOTONIC, like every
    # cpu_ns) or `device` (the GPU's own clock, comparable within the device only).
    clock_domain: str | None = None
    clock_max_deviation_ns: int | None = None
    pci: str | None = None  # its PCI address (VK_EXT_pci_bus_info; schema 9 on)
    # The cost budget its instruments were held to, in percent of the frame (docs/budget.md);
    # None: every workload of every captured frame was measured.
    budget_percent: float | None = None


@dataclass(frozen=True, slots=True)
class CommandBufferCounters:
    """performance_query's COMMAND_BUFFER-scope counters of one submitted command buffer (one
    SUBMIT): counted from its first command to its last, in a frame of their pass."""

    process: int
    submit_id: int
    device: int | None
    queue: int | None
    frame: int | None
    batch: int | None
    counters: dict[str, float]  # empty with counters_reason
    counters_reason: str | None
    counters_pass: int | None

    def as_json(self) -> dict[str, Any]:
        return {
            "process": self.process,
            "submit_id": self.submit_id,
            "device": self.device,
            "queue": self.queue,
            "frame": self.frame,
            "batch": self.batch,
            "counters": self.counters,
            "counters_reason": self.counters_reason,
            "counters_pass": self.counters_pass,
        }


@dataclass(frozen=True, slots=True)
class CounterDetail:
    unit: str | None
    concurrently_impacted: bool  # performance_query: other work running at once affects it
    scope: str | None  # performance_query: command, render_pass or command_buffer

    def as_json(self) -> dict[str, Any]:
        return {
            "unit": self.unit,
            "concurrently_impacted": self.concurrently_impacted,
            "scope": self.scope,
        }


@dataclass(frozen=True, slots=True)
class Frame:
    process: int
    device: int | None
    number: int
    queue: int | None
    cpu_ns: int | None
    reason: str | None
    captured: bool | None = None  # whether the frame selection captured it; None: not said
    # What the application created in it (schema 12 on; None before): pipelines and shader
    # objects, and shader modules. A frame that created any is a warm-up frame (warmup.py).
    pipelines: int | None = None
    shader_modules: int | None = None


@dataclass(frozen=True, slots=True)
class BudgetFrame:
    """What a device's cost budget controller saw at the end of a captured frame and decided
    for the next (docs/budget.md): a FRAME message's `budget`."""

    process: int
    device: int
    number: int  # the frame that ended
    # warmup, baseline (measured nothing: the frame's time without instruments), or measured
    state: str
    workloads: int  # workloads its recordings began
    measured: int  # of them, those given instruments
    interval_ns: int  # since the previous captured frame ended; 0: none just before it
    sample: bool  # the interval counted in an estimate
    base_ns: int | None  # the frame without instruments, as estimated after it
    unit_ns: float | None  # what one measured workload adds to the frame, as estimated
    frame_ns: float | None  # what measuring anything adds to a frame beside its workloads
    rotation: int  # frames a rotation over every workload takes at that cost; 0: none
    next: int  # workloads the next frame measures
    # the application's own recording time in the frame (without the instruments' calls), and
    # the share of it the controller took out of every time it compared; None before schema 13
    recording_ns: int | None = None
    recording_share: float | None = None


@dataclass(frozen=True, slots=True)
class Diagnostic:
    connection: int | None
    offset: int | None
    kind: str
    message_type: int | None
    reason: str
    excerpt: bytes


class WorkloadInstance(msgspec.Struct, frozen=True, gc=False):
    """One execution of a recorded workload, with its WORKLOAD fields and every ANNEX merged."""

    id: int  # order of submission within the capture
    process: int
    submit_id: int
    tag_id: int
    ordinal: int  # position within its submit
    device: int | None
    queue: int | None
    frame: int | None
    type: str | None  # None when the layer never described this tagID
    api: str | None
    labels: tuple[str, ...]
    metadata: dict[str, Any]
    submit_cpu_ns: int | None
    gpu_begin_ns: int | None  # on the device's clock (Device.clock_domain)
    gpu_end_ns: int | None
    timing: str | None = None  # ok, untimed, ambiguous; None: no timing annex
    timing_reason: str | None = None  # why it is untimed or ambiguous
    serialization: str | None = None  # none, queue, full: what was injected around it
    submit_cpu_complete_ns: int | None = None  # when the layer saw its submission complete
    # Which workload it is, in its frame and across frames and captures (identity.py).
    identity: WorkloadIdentity | None = None
    # What its GPU time may hold of the timer's own cost, and whether that time is near the
    # timer's floor (timer_floor.py); None without a GPU time or a floor of its queue family.
    gpu_ns_uncertainty: float | None = None
    near_floor: bool | None = None

    @property
    def label_path(self) -> str:
        return "/".join(self.labels)

    @property
    def counters(self) -> dict[str, float]:
        """Counter name -> value (docs/counters.md); empty when it has none."""
        found = self.metadata.get("counters")
        if not isinstance(found, dict):
            return {}
        return {k: v for k, v in found.items() if isinstance(v, int | float)}

    @property
    def counters_missing(self) -> dict[str, str]:
        """khr counters only: counter name -> why this workload has no value of it after its
        passes were joined (docs/counters.md); empty when none is missing."""
        found = self.metadata.get("counters_missing")
        if not isinstance(found, dict):
            return {}
        return {k: v for k, v in found.items() if isinstance(v, str)}

    @property
    def counters_reason(self) -> str | None:
        """Why it has no counters (the protocol's counters_reason), when collected and absent."""
        reason = self.metadata.get("counters_reason")
        return reason if isinstance(reason, str) else None

    @property
    def gpu_ns(self) -> int | None:
        """Its usable GPU time (gpu_time.py), or None."""
        return usable_gpu_ns(self.gpu_begin_ns, self.gpu_end_ns)


@dataclass(frozen=True, slots=True)
class FrameKey:
    """A frame of a capture: its process, device and frame number."""

    process: int
    device: int | None
    frame: int

    def triple(self) -> tuple[int, int | None, int]:
        """(process, device, frame), as warm-up frames and values streams name a frame."""
        return (self.process, self.device, self.frame)

    def order(self) -> tuple[int, bool, int, int]:
        """The order SQLite sorts (process, device, frame) in: a NULL device first."""
        return (self.process, self.device is not None, self.device or 0, self.frame)


@dataclass(frozen=True, slots=True)
class Submit:
    """One SUBMIT: a command buffer's submission and the workload instances it listed."""

    process: int
    submit_id: int
    device: int | None
    queue: int | None
    frame: int | None
    cpu_ns: int | None
    instances: int
    api: str | None
    batch: int | None
    cpu_complete_ns: int | None


@dataclass(frozen=True, slots=True)
class TimingCount:
    """How many instances share one combination of how they were timed (timing_counts())."""

    serialization: str | None
    timing: str | None
    timing_reason: str | None
    instances: int
    with_begin: int  # of those, with a GPU begin time


class IdentifiedValue(NamedTuple):
    """One instance in a stream sorted by identity (queries.by_identity): its identity's order,
    the queue id it ran on in its capture, its value (GPU time or a counter; None: none), and
    where it ran. An identity's instances come in submission order, frame after frame."""

    queue_key: str
    labels_json: str
    type_text: str  # "" for a workload never described
    ordinal: int
    queue: int | None
    value: int | float | None
    process: int
    device: int | None
    frame: int | None
    id: int  # the instance (WorkloadInstance.id)
    left_out: int = 0  # 1: the cost budget left it out of its frame (left_out.py)

    @property
    def identity(self) -> WorkloadIdentity:
        """Its identity as the records give it."""
        return WorkloadIdentity(
            self.queue_key, labels_of(self.labels_json), self.type_text or None, self.ordinal
        )

    @property
    def order(self) -> IdentityOrder:
        return (self.queue_key, self.labels_json, self.type_text, self.ordinal)
