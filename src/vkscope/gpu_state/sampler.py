"""The host's GPU sampler: one thread of `vkscope run` that reads every GPU the application uses,
at a fixed interval, and hands the samples to the capture in batches.

Nothing of it runs in the application: the layer only says which GPU a device is (its PCI
address, in DEVICE). A sample's time is CLOCK_MONOTONIC, the clock of the layer's CPU times and
of calibrated GPU times, taken halfway through its reads (`read_ns` says how long they took).

A metric whose read is slow is read on a second thread, every SLOW_INTERVAL_NS, in rows of its
own: NVML's energy total takes about 3 ms a call on an H200 (up to 16 ms), against 2 to 5 us
for every other metric, and moves every 100 ms. Read in the same tick, it made every tick late
at 1 kHz and put the tick's time milliseconds away from when its clocks and throttle reasons
were read. Which metrics are slow is measured as each GPU is opened (SLOW_READ_NS), for every
vendor alike.
"""

from __future__ import annotations

import contextlib
import queue
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Final

from .gpus import open_gpu
from .metrics import METRIC_NAMES, GpuInfo, GpuSource, NoGpu, describe_error

DEFAULT_RATE_HZ: Final = 200.0
SLOW_READ_NS: Final = 250_000  # a read slower than this (median of PROBE_READS) is slow
PROBE_READS: Final = 3
SLOW_INTERVAL_NS: Final = 25_000_000  # four reads per 100 ms, NVML's energy update
FLUSH_S: Final = 0.1  # how often samples go to the capture (it commits every 250 ms)
PCI_BUS_INFO: Final = "pci_bus_info"  # how a device was matched to its GPU: its own address
OVERRIDE: Final = "override"  # or the address the user named (--gpu-pci)

Sample = tuple[int | float | None, ...]  # gpu, t_ns, read_ns, then METRIC_NAMES in order


@dataclass(frozen=True, slots=True)
class DeviceRequest:
    """A Vulkan device the application created (a DEVICE message)."""

    process: int
    device: int
    vendor_id: int | None
    pci: str | None  # from VK_EXT_pci_bus_info; None where the driver lacks it
    remote: bool = False  # the application runs on another machine (a TCP connection)


@dataclass(frozen=True, slots=True)
class DeviceGpu:
    """Which sampled GPU a device is, or why none."""

    process: int
    device: int
    gpu: int | None
    pci: str | None
    matched_by: str | None  # PCI_BUS_INFO or OVERRIDE
    reason: str | None  # why it has no GPU


@dataclass(frozen=True, slots=True)
class Lost:
    """A metric whose reads started failing during the capture."""

    first_ns: int
    reason: str
    failures: int


@dataclass(frozen=True, slots=True)
class GpuRow:
    id: int
    info: GpuInfo
    interval_ns: int  # the interval it is sampled at
    lost: dict[str, Lost] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class SamplerSummary:
    interval_ns: int
    samples: int
    late: int  # ticks that started more than one interval after they were due
    cpu_ns: int  # the sampler thread's own CPU time
    wall_ns: int


@dataclass(slots=True)
class GpuStateBatch:
    gpus: list[GpuRow] = field(default_factory=list)  # new or changed
    devices: list[DeviceGpu] = field(default_factory=list)
    samples: list[Sample] = field(default_factory=list)
    summary: SamplerSummary | None = None  # the last batch's

    def __bool__(self) -> bool:
        return bool(self.gpus or self.devices or self.samples or self.summary)


@dataclass(slots=True)
class _Open:
    id: int
    source: GpuSource
    names: tuple[str, ...]  # the metrics it reads every tick, in METRIC_NAMES order
    slow: tuple[str, ...] = ()  # those read on the slow thread (SLOW_READ_NS)
    lost: dict[str, Lost] = field(default_factory=dict)
    failing: set[str] = field(default_factory=set)


class GpuSampler:
    """Samples the GPUs of the devices it is told about, from its own thread.

    add_device() may be called from any thread; batches go to `sink` from the sampler's thread
    (every FLUSH_S, and a last one with the summary from stop()).
    """

    def __init__(
        self,
        sink: Callable[[GpuStateBatch], None],
        *,
        rate_hz: float = DEFAULT_RATE_HZ,
        sysfs_root: Path,
        override_pci: str | None = None,
        opener: Callable[[str, int | None, Path], GpuSource] = open_gpu,
    ) -> None:
        self._sink = sink
        self._interval_ns = round(1e9 / rate_hz)
        self._root = sysfs_root
        self._override = override_pci
        self._opener = opener
        self._requests: queue.SimpleQueue[DeviceRequest] = queue.SimpleQueue()
        self._stopping = threading.Lock()  # add_device() against stop()
        self._stopped = False
        self._stop = threading.Event()
        self._wake = threading.Event()
        self._thread: threading.Thread | None = None
        self._gpus: dict[str, _Open] = {}  # by PCI address
        self._no_gpu: dict[str, str] = {}  # PCI address -> why it cannot be sampled
        self._batch = GpuStateBatch()
        self._samples = 0
        self._late = 0
        # The slow thread's samples and failure notes go into the same batch.
        self._lock = threading.Lock()
        self._slow_thread: threading.Thread | None = None
        self._slow_cpu_ns = 0

    @property
    def interval_ns(self) -> int:
        return self._interval_ns

    def start(self) -> None:
        self._thread = threading.Thread(target=self._run, name="vkscope-gpu-state", daemon=True)
        self._slow_thread = threading.Thread(
            target=self._run_slow, name="vkscope-gpu-state-slow", daemon=True
        )
        self._thread.start()
        self._slow_thread.start()

    def add_device(self, request: DeviceRequest) -> None:
        with self._stopping:
            if not self._stopped:
                self._requests.put(request)
                self._wake.set()
                return
        self._match_late(request)

    def stop(self) -> None:
        """Stops sampling and hands over the last batch, with the summary. A device announced
        after this (the capture's last messages, read as it ends) is matched at once, without
        samples: the capture still says which GPU it ran on, or why none was sampled."""
        if self._thread is None:
            return
        self._stop.set()
        self._wake.set()
        self._thread.join()
        self._thread = None
        with self._stopping:
            self._stopped = True
        while True:  # put after the thread's last look
            try:
                self._match_late(self._requests.get_nowait())
            except queue.Empty:
                return

    def _match_late(self, request: DeviceRequest) -> None:
        device = self._match(request)
        with self._lock:
            self._batch.devices.append(device)
        self._flush()

    # -- the thread ---------------------------------------------------------------------

    def _run(self) -> None:
        started, cpu_started = time.monotonic_ns(), time.thread_time_ns()
        flushed = started
        due = started
        try:
            while not self._stop.is_set():
                self._take_requests()
                if not self._gpus:
                    self._flush()
                    self._wake.wait(FLUSH_S)  # nothing to sample until a device arrives
                    self._wake.clear()
                    due = time.monotonic_ns()
                    continue
                for gpu in list(self._gpus.values()):
                    self._sample(gpu, gpu.names)
                now = time.monotonic_ns()
                if now - flushed >= FLUSH_S * 1e9:
                    self._flush()
                    flushed = now
                due += self._interval_ns
                if now - due > self._interval_ns:
                    self._late += 1
                    due = now  # behind: start again from now rather than catch up in a burst
                self._stop.wait(max(0, due - time.monotonic_ns()) / 1e9)
        finally:
            self._take_requests()
            if self._slow_thread is not None:
                self._slow_thread.join()  # it stops with the same event
            self._batch.summary = SamplerSummary(
                self._interval_ns,
                self._samples,
                self._late,
                time.thread_time_ns() - cpu_started + self._slow_cpu_ns,
                time.monotonic_ns() - started,
            )
            self._flush()
            for gpu in self._gpus.values():
                with contextlib.suppress(Exception):
                    gpu.source.close()

    def _run_slow(self) -> None:
        cpu_started = time.thread_time_ns()
        try:
            while not self._stop.wait(SLOW_INTERVAL_NS / 1e9):
                with self._lock:
                    gpus = [g for g in self._gpus.values() if g.slow]
                for gpu in gpus:
                    self._sample(gpu, gpu.slow)
        finally:
            self._slow_cpu_ns = time.thread_time_ns() - cpu_started

    def _take_requests(self) -> None:
        while True:
            try:
                request = self._requests.get_nowait()
            except queue.Empty:
                return
            self._batch.devices.append(self._match(request))

    def _match(self, r: DeviceRequest) -> DeviceGpu:
        def none(reason: str, pci: str | None = None) -> DeviceGpu:
            return DeviceGpu(r.process, r.device, None, pci, None, reason)

        if r.remote:
            return none("the application runs on another machine: its GPU is not this host's")
        pci, how = (r.pci, PCI_BUS_INFO) if r.pci else (self._override, OVERRIDE)
        if pci is None:
            return none(
                "the driver gives no PCI address (no VK_EXT_pci_bus_info); "
                "`vkscope run --gpu-pci ADDRESS` names the GPU to sample"
            )
        if pci in self._no_gpu:
            return none(self._no_gpu[pci], pci)
        gpu = self._gpus.get(pci)
        if gpu is None:
            try:
                source = self._opener(pci, r.vendor_id, self._root)
            except NoGpu as exc:
                self._no_gpu[pci] = str(exc)
                return none(str(exc), pci)
            except Exception as exc:  # a source's bug costs that GPU, never the capture
                self._no_gpu[pci] = f"opening it failed: {describe_error(exc)}"
                return none(self._no_gpu[pci], pci)
            names = tuple(n for n in METRIC_NAMES if n in source.reads)
            slow = _slow_reads(source, names)
            fast = tuple(n for n in names if n not in slow)
            gpu = _Open(len(self._gpus) + 1, source, fast, slow)
            with self._lock:
                self._gpus[pci] = gpu
                self._batch.gpus.append(GpuRow(gpu.id, source.info, self._interval_ns))
        return DeviceGpu(r.process, r.device, gpu.id, pci, how, None)

    def _sample(self, gpu: _Open, names: tuple[str, ...]) -> None:
        reads = gpu.source.reads
        values: dict[str, int | float] = {}
        errors: dict[str, str] = {}
        begin = time.monotonic_ns()
        for name in names:
            try:
                values[name] = reads[name]()
            except Exception as exc:  # a file gone, a GPU lost: that value is missing
                errors[name] = describe_error(exc)
        end = time.monotonic_ns()
        t = (begin + end) // 2
        with self._lock:
            if errors or gpu.failing.intersection(names):
                self._note_failures(gpu, t, errors, names)
            if values:
                row = [values.get(n) for n in METRIC_NAMES]
                self._batch.samples.append((gpu.id, t, end - begin, *row))
                self._samples += 1

    def _note_failures(
        self, gpu: _Open, t: int, errors: dict[str, str], names: tuple[str, ...]
    ) -> None:
        changed = False
        for name, reason in errors.items():
            was = gpu.lost.get(name)
            if was is None:
                gpu.lost[name] = Lost(t, reason, 1)
                changed = True
            else:
                gpu.lost[name] = Lost(was.first_ns, was.reason, was.failures + 1)
        gpu.failing = (gpu.failing - set(names)) | set(errors)
        if changed or errors:
            self._dirty(gpu)

    def _dirty(self, gpu: _Open) -> None:
        row = GpuRow(gpu.id, gpu.source.info, self._interval_ns, dict(gpu.lost))
        self._batch.gpus = [g for g in self._batch.gpus if g.id != gpu.id] + [row]

    def _flush(self) -> None:
        with self._lock:
            batch, self._batch = self._batch, GpuStateBatch()
        if batch:
            self._sink(batch)


def _slow_reads(source: GpuSource, names: tuple[str, ...]) -> tuple[str, ...]:
    """The metrics whose reads take longer than SLOW_READ_NS (the median of PROBE_READS)."""
    slow = []
    for name in names:
        took = []
        for _ in range(PROBE_READS):
            begin = time.monotonic_ns()
            with contextlib.suppress(Exception):  # a failing read is noted when sampled
                source.reads[name]()
            took.append(time.monotonic_ns() - begin)
        if sorted(took)[PROBE_READS // 2] > SLOW_READ_NS:
            slow.append(name)
    return tuple(slow)
