"""The GPU's sampled state joined to frames and workloads by time (docs/gpu-state.md).

Samples are on CLOCK_MONOTONIC, the clock of every CPU time of the capture and of GPU times
whose device says `clock_monotonic` (calibrated timestamps).

- A frame's window is its submissions: from the first one's CPU time to when the layer saw the
  last one complete (or was made, where no completion is known). Its state is the samples
  inside the window, or the two around it where none falls inside.
- A workload's window is its GPU time, where its device's GPU times are on CLOCK_MONOTONIC. Its
  clocks are the samples from the last one at or before its begin to the first one at or after
  its end: `clock_changed` when they differ (a change up to one sampling interval outside the
  workload counts too). Its energy and average power integrate the samples over its window
  (gpu_energy.py) where the window is at least the resolution of the GPU's energy signal.
- The capture's state is that of the captured frames' windows together, per GPU.
"""

from __future__ import annotations

import bisect
import statistics
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any, Final, NamedTuple

from ...gpu_state.metrics import NOT_THROTTLING
from .gpu_energy import counter_energy, power_energy, resolution_ns
from .gpu_state import DeviceGpu, Gpu, GpuSample
from .gpu_time import usable_gpu_ns
from .reader import Capture
from .records import FrameKey, WorkloadInstance

_WINDOW: Final = (
    "SELECT min(cpu_ns), max(coalesce(cpu_complete_ns, cpu_ns)) FROM submits "
    "WHERE frame IS ? AND process = ? AND device IS ?"
)
_WINDOWS: Final = (
    "SELECT s.process, s.device, s.frame, min(s.cpu_ns), "
    "max(coalesce(s.cpu_complete_ns, s.cpu_ns)), f.captured FROM submits s "
    "LEFT JOIN frames f ON f.process = s.process AND f.device IS s.device AND f.number = s.frame "
    "GROUP BY s.process, s.device, s.frame"
)
_CHANGES: Final = (
    "SELECT t_ns FROM (SELECT t_ns, {m} AS v, lag({m}) OVER (ORDER BY t_ns) AS p "
    "FROM gpu_samples WHERE gpu = ?) WHERE v IS NOT NULL AND v IS NOT p ORDER BY t_ns"
)
_BEFORE: Final = "SELECT max(t_ns) FROM gpu_samples WHERE gpu = ? AND t_ns <= ? AND {m} IS NOT NULL"
_AFTER: Final = "SELECT min(t_ns) FROM gpu_samples WHERE gpu = ? AND t_ns >= ? AND {m} IS NOT NULL"
_TIMES: Final = (
    "SELECT id, gpu_begin_ns, gpu_end_ns FROM workload_instances WHERE id >= ? AND id <= ?"
)
_SAMPLES: Final = (
    "SELECT gpu, t_ns, read_ns, graphics_clock_mhz, sm_clock_mhz, memory_clock_mhz, power_w, "
    "energy_mj, temperature_c, utilization_pct, throttle FROM gpu_samples "
    "WHERE gpu = ? AND t_ns >= ? AND t_ns <= ? ORDER BY t_ns"
)
ENERGY: Final = "energy_mj"
POWER: Final = "power_w"


class Spread(NamedTuple):
    min: float
    median: float
    max: float

    def as_json(self) -> dict[str, float]:
        return {"min": self.min, "median": self.median, "max": self.max}


def spread(values: Iterable[float | None]) -> Spread | None:
    found = sorted(v for v in values if v is not None)
    if not found:
        return None
    return Spread(found[0], statistics.median(found), found[-1])


@dataclass(frozen=True, slots=True)
class EnergySignal:
    """What a GPU's energy per window is computed from, and how fine a window it resolves."""

    metric: str | None  # ENERGY (a running total), POWER (a reading), None: neither
    resolution_ns: int | None


@dataclass(frozen=True, slots=True)
class StateSpan:
    """A GPU's state over a window (a frame, or the captured frames together)."""

    gpu: int
    samples: int
    graphics_clock_mhz: Spread | None
    memory_clock_mhz: Spread | None
    power_w: Spread | None
    temperature_c: Spread | None
    utilization_pct: Spread | None
    throttle: tuple[str, ...]  # every reason seen, idle included
    energy_mj: float | None = None  # over the window, where resolved

    @property
    def throttled(self) -> tuple[str, ...]:
        """The reasons seen that lowered the clocks (not idling, not a clock setting)."""
        return tuple(r for r in self.throttle if r not in NOT_THROTTLING)

    @property
    def clock_moved(self) -> bool:
        c = self.graphics_clock_mhz
        return c is not None and c.min != c.max

    def as_json(self) -> dict[str, Any]:
        def of(s: Spread | None) -> dict[str, float] | None:
            return s.as_json() if s else None

        return {
            "gpu": self.gpu,
            "samples": self.samples,
            "graphics_clock_mhz": of(self.graphics_clock_mhz),
            "memory_clock_mhz": of(self.memory_clock_mhz),
            "power_w": of(self.power_w),
            "temperature_c": of(self.temperature_c),
            "utilization_pct": of(self.utilization_pct),
            "throttle_reasons": list(self.throttle),
            "energy_mj": self.energy_mj,
        }


@dataclass(frozen=True, slots=True)
class WorkloadState:
    """A workload's GPU state: the clocks around it, its energy and average power."""

    gpu: int
    graphics_clock_mhz: tuple[float, float] | None  # min, max of the samples around it
    clock_changed: bool | None
    throttle: tuple[str, ...]
    energy_mj: float | None
    power_w: float | None
    resolution_ns: int | None
    note: str | None  # why energy and power are absent

    def as_json(self) -> dict[str, Any]:
        c = self.graphics_clock_mhz
        return {
            "gpu": self.gpu,
            "graphics_clock_mhz": list(c) if c else None,
            "clock_changed": self.clock_changed,
            "throttle_reasons": list(self.throttle),
            "energy_mj": self.energy_mj,
            "power_w": self.power_w,
            "energy_resolution_ns": self.resolution_ns,
            "note": self.note,
        }


def span_of(gpu: Gpu, samples: Sequence[GpuSample], energy: float | None = None) -> StateSpan:
    mask = 0
    for s in samples:
        mask |= s.throttle or 0
    return StateSpan(
        gpu.id,
        len(samples),
        spread(s.graphics_clock_mhz for s in samples),
        spread(s.memory_clock_mhz for s in samples),
        spread(s.power_w for s in samples),
        spread(s.temperature_c for s in samples),
        spread(s.utilization_pct for s in samples),
        tuple(gpu.reasons(mask)),
        energy,
    )


def _energy(
    signal: EnergySignal, samples: Sequence[GpuSample], begin: int, end: int
) -> float | None:
    if signal.metric == ENERGY:
        return counter_energy(
            [(s.t_ns, s.energy_mj) for s in samples if s.energy_mj is not None], begin, end
        )
    if signal.metric == POWER:
        return power_energy(
            [(s.t_ns, s.power_w) for s in samples if s.power_w is not None], begin, end
        )
    return None


def duration_text(ns: int) -> str:
    return f"{ns / 1e6:.3g} ms" if ns >= 1_000_000 else f"{ns / 1e3:.3g} µs"


@dataclass(slots=True)
class FrameState:
    """One frame's samples of its device's GPU: its state, and each workload's."""

    gpu: Gpu
    signal: EnergySignal
    samples: list[GpuSample]
    window: tuple[int, int]
    timed_on_monotonic: bool  # its device's GPU times are on CLOCK_MONOTONIC
    _times: list[int] = field(default_factory=list)

    def __post_init__(self) -> None:
        self._times = [s.t_ns for s in self.samples]

    def used(self) -> list[GpuSample]:
        """The samples its state is of: those inside its window, else the two around it."""
        begin, end = self.window
        inside = [s for s in self.samples if begin <= s.t_ns <= end]
        return inside or self._around(begin, end)

    def state(self) -> StateSpan:
        return span_of(self.gpu, self.used(), self._resolved_energy(*self.window))

    def _around(self, begin: int, end: int) -> list[GpuSample]:
        """The samples from the last at or before `begin` to the first at or after `end`."""
        times = self._times
        lo = max(bisect.bisect_right(times, begin) - 1, 0)
        hi = min(bisect.bisect_left(times, end) + 1, len(times))
        return self.samples[lo:hi]

    def _resolved_energy(self, begin: int, end: int) -> float | None:
        resolution = self.signal.resolution_ns
        if resolution is None or end - begin < resolution:
            return None
        return _energy(self.signal, self.samples, begin, end)

    def clock_changed(self, begin: int | None, end: int | None) -> bool | None:
        """Whether the graphics clock differs among the samples around [begin, end] (GPU times
        on its device's clock); None without a usable window or a sampled clock."""
        if not self.timed_on_monotonic or usable_gpu_ns(begin, end) is None:
            return None
        assert begin is not None and end is not None
        clocks = {s.graphics_clock_mhz for s in self._around(begin, end)} - {None}
        return len(clocks) > 1 if clocks else None

    def workload(self, w: WorkloadInstance) -> WorkloadState | None:
        """The workload's GPU state; None without a GPU time on CLOCK_MONOTONIC."""
        ns = usable_gpu_ns(w.gpu_begin_ns, w.gpu_end_ns)
        if not self.timed_on_monotonic or ns is None:
            return None
        begin, end = w.gpu_begin_ns, w.gpu_end_ns
        assert begin is not None and end is not None
        around = self._around(begin, end)
        clocks = [s.graphics_clock_mhz for s in around if s.graphics_clock_mhz is not None]
        mask = 0
        for s in around:
            mask |= s.throttle or 0
        signal = self.signal
        energy = power = None
        note = None
        if signal.metric is None or signal.resolution_ns is None:
            note = "the GPU gives no energy signal that changed during the capture"
        elif ns < signal.resolution_ns:
            note = (
                f"shorter than the GPU's {signal.metric} readings resolve "
                f"({duration_text(signal.resolution_ns)})"
            )
        else:
            energy = _energy(signal, self.samples, begin, end)
            if energy is None:
                note = "outside the samples"
            elif ns:
                power = energy / ns * 1e6  # mJ per ns -> W
        return WorkloadState(
            self.gpu.id,
            (min(clocks), max(clocks)) if clocks else None,
            len(set(clocks)) > 1 if clocks else None,
            tuple(self.gpu.reasons(mask)),
            energy,
            power,
            signal.resolution_ns,
            note,
        )


@dataclass(frozen=True, slots=True)
class GpuSummary:
    """A GPU over the captured frames: its state, and what a user should know of it."""

    gpu: Gpu
    devices: tuple[tuple[int, int], ...]  # (process, device) that run on it
    frames: int  # captured frames joined
    state: StateSpan | None  # None: no sample fell in a captured frame
    signal: EnergySignal

    def warnings(self) -> list[str]:
        s = self.state
        if s is None:
            return []
        said = []
        if s.clock_moved and s.graphics_clock_mhz is not None:
            c = s.graphics_clock_mhz
            said.append(
                f"the graphics clock moved during the captured frames: {c.min:g} to {c.max:g} "
                f"MHz (median {c.median:g})"
            )
        if s.throttled:
            said.append(f"the GPU throttled during the captured frames: {', '.join(s.throttled)}")
        return said

    def as_json(self) -> dict[str, Any]:
        return {
            **self.gpu.as_json(),
            "devices": [{"process": p, "device": d} for p, d in self.devices],
            "frames": self.frames,
            "state": self.state.as_json() if self.state else None,
            "energy_signal": self.signal.metric,
            "energy_resolution_ns": self.signal.resolution_ns,
            "warnings": self.warnings(),
        }


class GpuJoin:
    """The capture's GPU state, ready to be joined to its frames and workloads."""

    def __init__(self, capture: Capture) -> None:
        self._capture = capture
        self.gpus = {g.id: g for g in capture.gpus()}
        self.devices = capture.device_gpus()
        self._by_device = {
            (d.process, d.device): self.gpus[d.gpu]
            for d in self.devices
            if d.gpu is not None and d.gpu in self.gpus
        }
        self._monotonic = {
            (d.process, d.id) for d in capture.devices() if d.clock_domain == "clock_monotonic"
        }
        self._signals: dict[int, EnergySignal] = {}

    def __bool__(self) -> bool:
        return bool(self.gpus or self.devices)

    def unmatched(self) -> list[DeviceGpu]:
        """Devices whose GPU was not sampled, each with why."""
        return [d for d in self.devices if d.gpu is None]

    def gpu_of(self, process: int, device: int | None) -> Gpu | None:
        return self._by_device.get((process, device or 0)) if device is not None else None

    def signal(self, gpu: Gpu) -> EnergySignal:
        """The GPU's finer energy signal: its running total or its power reading."""
        found = self._signals.get(gpu.id)
        if found is None:
            best: tuple[int, int, str] | None = None
            for rank, metric in enumerate((ENERGY, POWER)):
                if not gpu.offers(metric):
                    continue
                _, rows = self._capture.execute(_CHANGES.format(m=metric), (gpu.id,))
                resolution = resolution_ns([r[0] for r in rows], gpu.interval_ns)
                if resolution is not None and (best is None or (resolution, rank) < best[:2]):
                    best = (resolution, rank, metric)
            found = EnergySignal(best[2], best[0]) if best else EnergySignal(None, None)
            self._signals[gpu.id] = found
        return found

    def samples(self, gpu: Gpu, begin: int, end: int) -> list[GpuSample]:
        """The samples in [begin, end], widened to the sample before and after it of every
        metric the energy signal needs."""
        signal = self.signal(gpu)
        lo, hi = begin, end
        for metric in filter(None, (signal.metric, "graphics_clock_mhz")):
            if not gpu.offers(metric):
                continue
            _, rows = self._capture.execute(_BEFORE.format(m=metric), (gpu.id, begin))
            lo = min(lo, next(rows)[0] or lo)
            _, rows = self._capture.execute(_AFTER.format(m=metric), (gpu.id, end))
            hi = max(hi, next(rows)[0] or hi)
        if signal.metric == ENERGY:  # the change points around the window, not only samples
            lo, hi = self._past_run(gpu, lo, after=False), self._past_run(gpu, hi, after=True)
        _, rows = self._capture.execute(_SAMPLES, (gpu.id, lo, hi))
        return [GpuSample(*r) for r in rows]

    def _past_run(self, gpu: Gpu, t: int, after: bool) -> int:
        """Past the run of equal energy totals that holds t: the last sample before the run
        (or the first after it) whose total differs; t where there is none."""
        near, beyond, edge = ("", ">", "min") if after else (" DESC", "<", "max")
        _, rows = self._capture.execute(
            f"SELECT t_ns, energy_mj FROM gpu_samples WHERE gpu = ? AND t_ns {beyond}= ? "
            f"AND energy_mj IS NOT NULL ORDER BY t_ns{near} LIMIT 1",
            (gpu.id, t),
        )
        row = next(rows, None)
        if row is None:
            return t
        _, rows = self._capture.execute(
            f"SELECT {edge}(t_ns) FROM gpu_samples WHERE gpu = ? AND t_ns {beyond} ? "
            "AND energy_mj != ?",
            (gpu.id, row[0], row[1]),
        )
        found = next(rows)[0]
        return t if found is None else int(found)

    def clock_changes(self, ids: Sequence[int], keys: Sequence[FrameKey]) -> list[bool | None]:
        """clock_changed of each instance (its row id and frame), for readers that hold
        instances as columns (the fleet export): the last few frames' samples are kept."""
        if not ids:
            return []
        _, rows = self._capture.execute(_TIMES, (min(ids), max(ids)))
        times = {r[0]: (r[1], r[2]) for r in rows}
        frames: dict[FrameKey, FrameState | None] = {}
        out: list[bool | None] = []
        for row, key in zip(ids, keys, strict=True):
            if key not in frames:
                if len(frames) >= 8:
                    del frames[next(iter(frames))]
                frames[key] = self.frame(key)
            frame = frames[key]
            out.append(frame.clock_changed(*times.get(row, (None, None))) if frame else None)
        return out

    def window(self, key: FrameKey) -> tuple[int, int] | None:
        _, rows = self._capture.execute(_WINDOW, (key.frame, key.process, key.device))
        begin, end = next(rows)
        return None if begin is None else (begin, end)

    def frame(self, key: FrameKey) -> FrameState | None:
        """The frame's GPU state; None where its device's GPU was not sampled."""
        gpu = self.gpu_of(key.process, key.device)
        window = self.window(key) if gpu is not None else None
        if gpu is None or window is None:
            return None
        return FrameState(
            gpu,
            self.signal(gpu),
            self.samples(gpu, *window),
            window,
            (key.process, key.device) in self._monotonic,
        )

    def summaries(self) -> list[GpuSummary]:
        """Each sampled GPU over the captured frames of the devices that run on it."""
        if not self.gpus:  # nothing sampled: no frame's window to read
            return []
        windows: dict[int, list[tuple[int, int]]] = {g: [] for g in self.gpus}
        for process, device, _, begin, end, captured in self._capture.execute(_WINDOWS)[1]:
            gpu = self.gpu_of(process, device)
            if gpu is not None and begin is not None and captured != 0:
                windows[gpu.id].append((begin, end))
        out = []
        for gpu in self.gpus.values():
            found: dict[int, GpuSample] = {}
            energy, covered = 0.0, 0  # over the frames inside the samples, and their length
            signal = self.signal(gpu)
            for begin, end in sorted(windows[gpu.id]):
                samples = self.samples(gpu, begin, end)
                frame = FrameState(gpu, signal, samples, (begin, end), False)
                frame_energy = _energy(signal, samples, begin, end)
                if frame_energy is not None:
                    energy, covered = energy + frame_energy, covered + end - begin
                found.update((s.t_ns, s) for s in frame.used())
            # A frame may be shorter than the signal resolves, but the frames' sum is right once
            # they span more than that: the interpolation's errors cancel from one to the next.
            resolution = signal.resolution_ns
            total = energy if resolution is not None and covered >= resolution else None
            devices = tuple(k for k, g in self._by_device.items() if g.id == gpu.id)
            ordered = [found[t] for t in sorted(found)]
            state = span_of(gpu, ordered, total) if ordered else None
            out.append(GpuSummary(gpu, devices, len(windows[gpu.id]), state, signal))
        return out
