"""A capture as a Perfetto trace (docs/perfetto.md): `export_perfetto(capture, out, merge=None)`.

What goes in, all streamed from the capture (one pass over the workload instances, plus one SQL
pass over the submits; nothing is loaded whole):

- per device a GPU track, under it one track per queue; on a queue track a slice per workload
  instance ("renderpass · Frame/Shadows") under the slices of its label stack, every field as an
  argument. Instances that overlap on one queue go to extra tracks of the same name, which the
  Perfetto UI shows as one.
- per process (pid and name from the capture) a track of CPU-side submits and presents, one of
  frames, and flows from each submit to its first GPU workload.
- per queue, a counter track per counter the capture's workloads have (docs/counters.md): the
  workload's value from its begin to its end, 0 between workloads; each workload slice also has
  its `counters` (or `counters_reason`) among its arguments.
- per GPU the host sampled, a counter track per metric it offers: clocks, power, temperature,
  utilization, throttle reasons (perfetto_gpu.py).
- under a cost budget (perfetto_budget.py): the controller's view on each frame slice, a counter
  track of the workloads each frame measured, each workload's coverage, and one event naming the
  identities no frame measured.

Clocks: every CPU time is CLOCK_MONOTONIC. A device whose GPU times are on CLOCK_MONOTONIC
shares that clock; a device with its own clock gets a sequence-scoped clock of its own, tied to
CLOCK_MONOTONIC by a ClockSnapshot at the earliest alignment where no workload starts on the GPU
before it was submitted.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

from ..capture import (
    Capture,
    CorruptCaptureError,
    Device,
    Queue,
    WorkloadInstance,
    open_capture,
)
from ..capture.read.queries import first_submit_ns, gpu_begin_offsets
from ..capture.read.records import FrameKey
from ..outputs import binary_output
from .perfetto_budget import BudgetTrace
from .perfetto_gpu import write_gpu_state
from .perfetto_model import (
    SEP,
    ExportSummary,
    PerfettoExportError,
    gpu_times,
    instance_details,
    instance_name,
)
from .perfetto_packets import (
    BOOTTIME,
    FIRST_SEQUENCE_CLOCK,
    INSTANT,
    MONOTONIC,
    SLICE_BEGIN,
    SLICE_END,
    PacketSink,
    Sequence,
    stable_id,
)

# Where a workload without GPU times goes: at its submit's CPU time, or right after the previous
# workload of its queue when that ends later, for this long. Documented in docs/perfetto.md.
UNTIMED_DURATION_NS: Final = 10_000

# A capture that does not say which clock a device's GPU times are on (older files) is judged
# from its data: CLOCK_MONOTONIC when no workload starts on the GPU more than this before it was
# submitted, nor more than _MONOTONIC_MAX_LAG_NS after.
_MONOTONIC_SLACK_NS: Final = 1_000_000
_MONOTONIC_MAX_LAG_NS: Final = 60_000_000_000
_LAST_SEQUENCE_CLOCK: Final = 127

_STAND_IN_PID: Final = 0x7F000000  # + process, for a process that never said its pid
_UNTIMED: Final = ("untimed", "ambiguous")


@dataclass(slots=True)
class _DeviceClock:
    clock_id: int  # MONOTONIC, or a sequence-scoped clock id
    offset_ns: int  # device time + offset = CLOCK_MONOTONIC
    description: str

    def from_monotonic(self, ns: int) -> int:
        return ns - self.offset_ns


@dataclass(slots=True)
class _Label:
    name: str
    workloads: int = 0


@dataclass(slots=True)
class _Lane:
    uuid: int
    end: int = -1  # the latest time anything on this track ends
    frame: Any = None
    stack: list[_Label] = field(default_factory=list)


@dataclass(slots=True)
class _QueueTrack:
    name: str
    parent: int
    rank: int
    clock: _DeviceClock
    lanes: list[_Lane]
    description: str | None = None
    last_end: int = 0  # the latest end of a workload placed on the queue


@dataclass(slots=True)
class _Counts:
    workloads: int = 0
    timed: int = 0
    untimed: int = 0
    overflow: int = 0
    labels: int = 0
    submits: int = 0
    frames: int = 0
    counter_tracks: int = 0
    counter_samples: int = 0


def export_perfetto(
    capture_path: Path | str, out_path: Path | str, merge: Path | str | None = None
) -> ExportSummary:
    """Writes the capture at `capture_path` as a Perfetto trace at `out_path`.

    With `merge`, the output is that device trace (kept intact, its GPU render stage events
    given the capture's metadata; docs/perfetto.md) followed by the capture's own tracks.
    Raises CaptureError for an unreadable capture, OutputError (outputs.py) for an output that
    cannot be written, PerfettoExportError for the rest.
    """
    capture_path, out_path = Path(capture_path), Path(out_path)
    merge_path = Path(merge) if merge is not None else None
    if merge_path is not None and _same_file(merge_path, out_path):
        raise PerfettoExportError(f"{out_path}: the output would overwrite the trace to merge")
    with open_capture(capture_path) as capture:
        try:
            with binary_output(out_path) as out:
                summary = _Exporter(capture, out_path, PacketSink(out)).run(merge_path)
        except ValueError as exc:  # protobuf: a number out of its field's range
            raise CorruptCaptureError(
                capture_path, f"damaged: it holds a value a Perfetto trace cannot ({exc})"
            ) from None
        except OSError as exc:  # the output's errors are OutputError: this is the merged trace
            raise PerfettoExportError(f"{merge_path}: cannot read: {exc.strerror or exc}") from None
    return summary


def _same_file(a: Path, b: Path) -> bool:
    try:
        return a.resolve() == b.resolve() or (b.exists() and a.samefile(b))
    except OSError:
        return False


def _workload_args(w: WorkloadInstance, times: tuple[int, int] | None) -> dict[str, Any]:
    """The slice's own arguments (its metadata goes in as shared arguments): its details, and
    how it was placed on the timeline."""
    args = instance_details(w)
    said = args.get("timing", w.metadata.get("timing"))
    if times is not None:
        if said is None:
            args["timing"] = "ok"
    else:
        if said not in _UNTIMED:
            args["timing"] = "untimed"
        if "timing_reason" not in args and "timing_reason" not in w.metadata:
            args["timing_reason"] = "the capture has no GPU times for it"
        args["placeholder_ns"] = UNTIMED_DURATION_NS
    return args


def _declared_domain(device: Device | None) -> str | None:
    """The clock domain the capture records for a device, if it records one."""
    value = getattr(device, "clock_domain", None)
    return value if isinstance(value, str) else None


class _Exporter:
    def __init__(self, capture: Capture, out_path: Path, sink: PacketSink) -> None:
        self.capture = capture
        self.out_path = out_path
        self.sink = sink
        self.counts = _Counts()
        self.notes: list[str] = []
        self.clock_notes: dict[str, str] = {}
        self.seq: Sequence = Sequence(sink, 1)
        self.processes: dict[int, tuple[int, str]] = {}  # process -> (pid, name)
        self.process_tracks: dict[int, int] = {}  # process -> its track uuid
        self.submit_tracks: dict[int, int] = {}
        self.device_tracks: dict[tuple[int, int], int] = {}
        self.device_names: dict[tuple[int, int], str] = {}
        self.clocks: dict[tuple[int, int], _DeviceClock] = {}
        self.queue_tracks: dict[tuple[int, Any, Any], _QueueTrack] = {}
        self.workload_counters: dict[tuple[Any, ...], tuple[int, int]] = {}
        self.budget = BudgetTrace(capture)

    def run(self, merge: Path | None) -> ExportSummary:
        merged = None
        sequence_id, has_snapshots = 1, False
        if merge is not None:
            from .perfetto_merge import merge_device_trace

            merged, sequence_id = merge_device_trace(merge, self.capture, self.sink)
            has_snapshots = merged.clock_snapshots > 0
        self.seq = Sequence(self.sink, sequence_id)
        self._plan_clocks()
        self._write_clock_snapshot(merging=merge is not None, has_snapshots=has_snapshots)
        self._write_process_tracks()
        self._write_gpu_tracks()
        self._write_submits()
        self._write_frames()
        self._write_workloads()
        gpu_tracks, gpu_samples = write_gpu_state(self.capture, self.seq)
        self.counts.counter_tracks += gpu_tracks
        self.counts.counter_samples += gpu_samples
        self.sink.flush()
        c = self.counts
        return ExportSummary(
            path=self.out_path, packets=self.sink.packets, workloads=c.workloads,
            timed=c.timed, untimed=c.untimed, queue_tracks=len(self.queue_tracks),
            overflow_tracks=c.overflow, label_slices=c.labels, submits=c.submits,
            frames=c.frames, counter_tracks=c.counter_tracks, counter_samples=c.counter_samples,
            clocks=dict(self.clock_notes), notes=tuple(self.notes), merge=merged,
        )  # fmt: skip

    # -- clocks ------------------------------------------------------------------------------

    def _plan_clocks(self) -> None:
        devices = {(d.process, d.id): d for d in self.capture.devices()}
        stats: dict[tuple[int, int], tuple[int, int, int, int]] | None = None
        next_clock = FIRST_SEQUENCE_CLOCK
        for key in sorted(devices, key=lambda k: (k[0], k[1])):
            device = devices[key]
            declared = _declared_domain(device)
            if declared == "clock_monotonic":
                self.clocks[key] = _DeviceClock(MONOTONIC, 0, "GPU times on CLOCK_MONOTONIC")
                continue
            if stats is None:
                stats = gpu_begin_offsets(self.capture)
            timed, max_ahead, min_lag, max_lag = stats.get(key, (0, 0, 0, 0))
            if timed == 0:
                what = "no GPU times" + (f" (clock: {declared})" if declared else "")
                self.clocks[key] = _DeviceClock(MONOTONIC, 0, what)
                continue
            if (
                declared is None
                and min_lag >= -_MONOTONIC_SLACK_NS
                and max_lag <= _MONOTONIC_MAX_LAG_NS
            ):
                what = "GPU times on CLOCK_MONOTONIC (the capture does not say; judged from data)"
                self.clocks[key] = _DeviceClock(MONOTONIC, 0, what)
                continue
            if next_clock > _LAST_SEQUENCE_CLOCK:
                what = "GPU times on the device's own clock, not aligned: too many such devices"
                self.clocks[key] = _DeviceClock(MONOTONIC, 0, what)
                self.notes.append(f"{device.name}: {what}")
                continue
            source = "the capture says so" if declared else "judged from the data"
            what = (
                f"GPU times on the device's own clock ({source}), shown on CLOCK_MONOTONIC "
                f"shifted by {max_ahead} ns: the earliest alignment where no workload starts "
                "before it was submitted"
            )
            self.clocks[key] = _DeviceClock(next_clock, max_ahead, what)
            next_clock += 1

    def _write_clock_snapshot(self, *, merging: bool, has_snapshots: bool) -> None:
        """One ClockSnapshot first on our sequence: it ties the device clocks to MONOTONIC and,
        in a trace of our own, makes MONOTONIC the trace's clock."""
        # Any instant will do (the relations are fixed offsets), as long as no reading is negative.
        anchor = max([0, *(c.offset_ns for c in self.clocks.values())])
        clocks = [(MONOTONIC, anchor)]
        for clock in self.clocks.values():
            if clock.clock_id != MONOTONIC:
                clocks.append((clock.clock_id, anchor - clock.offset_ns))
        if not merging:
            self.seq.clock_snapshot(clocks, primary=MONOTONIC)
        elif not has_snapshots:
            # A device trace without snapshots: its timestamps (BOOTTIME by default) are taken as
            # CLOCK_MONOTONIC, the only relation there is to go on.
            self.notes.append(
                "the device trace has no clock snapshots: BOOTTIME taken as MONOTONIC"
            )
            self.seq.clock_snapshot([*clocks, (BOOTTIME, anchor)])
        elif len(clocks) > 1:
            self.seq.clock_snapshot(clocks)  # its own snapshots relate MONOTONIC to its clock

    # -- tracks ------------------------------------------------------------------------------

    def _processes(self) -> dict[int, tuple[int, str]]:
        """process -> (pid, name), from the first of its connections that said them."""
        meta = self.capture.meta
        said: dict[int, tuple[int | None, str | None]] = {}
        for p in self.capture.processes():
            pid, name = said.get(p.process, (None, None))
            said[p.process] = (p.pid if pid is None else pid, name or p.name)
        found: dict[int, tuple[int, str]] = {}
        for process, (pid, name) in said.items():
            if pid is None:  # no HELLO
                alone = len(said) == 1 and meta.pid is not None
                pid = meta.pid if alone and meta.pid is not None else _STAND_IN_PID + process
            found[process] = (pid, name or meta.process_name or f"process {process}")
        return found

    def _write_process_tracks(self) -> None:
        self.processes = self._processes()
        for process, (pid, name) in sorted(self.processes.items()):
            self._process_track(process, pid, name)

    def _process_track(self, process: int, pid: int | None = None, name: str = "") -> int:
        uuid = self.process_tracks.get(process)
        if uuid is not None:
            return uuid
        if pid is None:
            pid, name = self.processes.get(process) or (_STAND_IN_PID + process, "")
            name = name or f"process {process}"
            self.processes[process] = (pid, name)
        uuid = stable_id("process", process)
        self.seq.track(uuid, name, pid=pid, process_name=name)
        self.process_tracks[process] = uuid
        submits = stable_id("submits", process)
        self.seq.track(submits, "vkscope submits", uuid, description="vkQueueSubmit* and presents")
        self.submit_tracks[process] = submits
        return uuid

    def _write_gpu_tracks(self) -> None:
        for device in self.capture.devices():
            self._device_track(device.process, device.id, device)
        for queue in self.capture.queues():
            self._queue_track(queue.process, queue.device, queue.id, queue)

    def _device_track(self, process: int, device_id: int, device: Device | None = None) -> int:
        key = (process, device_id)
        uuid = self.device_tracks.get(key)
        if uuid is not None:
            return uuid
        self._process_track(process)
        name = (device.name if device and device.name else None) or f"device {device_id}"
        self.device_names[key] = name
        title = f"GPU {device_id}: {name}"
        if len(self.processes) > 1:
            pid, pname = self.processes[process]
            title += f"{SEP}{pname} ({pid})"
        clock = self.clocks.get(key)
        if clock is None:
            clock = _DeviceClock(MONOTONIC, 0, "no DEVICE message: CLOCK_MONOTONIC assumed")
            self.clocks[key] = clock
        details = [clock.description]
        deviation = getattr(device, "clock_max_deviation_ns", None)
        if isinstance(deviation, int):
            details.append(f"calibration within {deviation} ns")
        if device is not None:
            parts = (device.driver_name, device.driver_info, device.api_version and
                     f"Vulkan {device.api_version}")  # fmt: skip
            details.insert(0, ", ".join(p for p in parts if p))
        uuid = stable_id("device", process, device_id)
        description = "; ".join(d for d in details if d)
        self.seq.track(uuid, title, description=description, explicit_child_order=True)
        self.device_tracks[key] = uuid
        self.clock_notes[title] = clock.description
        return uuid

    def _queue_track(
        self, process: int, device_id: Any, queue_id: Any, queue: Queue | None = None
    ) -> _QueueTrack:
        key = (process, device_id, queue_id)
        track = self.queue_tracks.get(key)
        if track is not None:
            return track
        dev_key = (process, device_id if device_id is not None else -1)
        parent = self._device_track(*dev_key)
        name = f"{self.device_names[dev_key]}{SEP}queue {'?' if queue_id is None else queue_id}"
        description = None
        if queue is not None:
            flags = "|".join(queue.flags) or "no flags"
            name += f"{SEP}family {queue.family} [{flags}]"
            description = (
                f"queue family {queue.family}, index {queue.index}; "
                f"timestamp_valid_bits {queue.timestamp_valid_bits}"
            )
        rank = queue_id if isinstance(queue_id, int) else 1 << 30
        track = _QueueTrack(name, parent, rank, self.clocks[dev_key], [], description)
        self.queue_tracks[key] = track
        self._add_lane(track)
        return track

    def _add_lane(self, track: _QueueTrack) -> _Lane:
        # Lanes are sibling tracks with one name and the same properties: the Perfetto UI shows
        # them as one track.
        uuid = stable_id("queue", track.parent, track.name, len(track.lanes))
        self.seq.track(
            uuid, track.name, track.parent, description=track.description, rank=track.rank
        )
        lane = _Lane(uuid)
        track.lanes.append(lane)
        if len(track.lanes) > 1:
            self.counts.overflow += 1
        return lane

    # -- CPU side ----------------------------------------------------------------------------

    def _write_submits(self) -> None:
        for s in self.capture.submits():
            if s.cpu_ns is None:
                continue
            if s.process not in self.submit_tracks:
                self._process_track(s.process)
            track = self.submit_tracks[s.process]
            args = {"submit": s.submit_id, "device": s.device, "queue": s.queue, "frame": s.frame,
                    "workloads": s.instances}  # fmt: skip
            extra = (("batch", s.batch), ("cpu_complete_ns", s.cpu_complete_ns))
            args.update((k, v) for k, v in extra if v is not None)
            flows = [stable_id("flow", s.process, s.submit_id)] if s.instances else []
            self.seq.event(track, s.cpu_ns, INSTANT, name=s.api or "submit", args=args,
                           flows=flows)  # fmt: skip
            self.counts.submits += 1

    def _write_frames(self) -> None:
        previous: dict[tuple[int, Any], int] = {}
        tracks: dict[tuple[int, Any], int] = {}
        devices_per_process: dict[int, set[Any]] = {}
        frames = self.capture.frames()
        for f in frames:
            devices_per_process.setdefault(f.process, set()).add(f.device)
        for f in frames:
            if f.cpu_ns is None:
                continue
            key = (f.process, f.device)
            track = tracks.get(key)
            if track is None:
                parent = self._process_track(f.process)
                name = "frames"
                if len(devices_per_process[f.process]) > 1:
                    name += f"{SEP}GPU {f.device}"
                track = tracks[key] = stable_id("frames", f.process, f.device)
                self.seq.track(track, name, parent)
            args: dict[str, Any] = {"frame": f.number, "reason": f.reason, "queue": f.queue}
            captured = getattr(f, "captured", None)
            if captured is not None:
                args["captured"] = captured
            args.update(self.budget.frame_args((f.process, f.device, f.number)))
            self.budget.write_frame(self.seq, self._process_track(f.process), f)
            begin = previous.get(key)
            if begin is None:
                begin = first_submit_ns(self.capture, FrameKey(f.process, f.device, f.number))
            name = f"frame {f.number}"
            if begin is None or begin > f.cpu_ns:
                self.seq.event(track, f.cpu_ns, INSTANT, name=name, args=args)
            else:
                self.seq.event(track, begin, SLICE_BEGIN, name=name, args=args)
                self.seq.event(track, f.cpu_ns, SLICE_END)
            previous[key] = f.cpu_ns
            present = "vkQueuePresentKHR" if f.reason == "present" else f"frame end ({f.reason})"
            self.seq.event(self.submit_tracks[f.process], f.cpu_ns, INSTANT, name=present,
                           args={"frame": f.number, "queue": f.queue})  # fmt: skip
            self.counts.frames += 1

    # -- GPU side ----------------------------------------------------------------------------

    def _write_workloads(self) -> None:
        last_submit: tuple[int, int] | None = None
        for w in self.capture.workloads():
            self.counts.workloads += 1
            track = self._queue_track(w.process, w.device, w.queue)
            times = gpu_times(w)
            if times is not None:
                begin, end = times
                self.counts.timed += 1
            else:
                begin = track.last_end
                if w.submit_cpu_ns is not None:
                    begin = max(begin, track.clock.from_monotonic(w.submit_cpu_ns))
                end = begin + UNTIMED_DURATION_NS
                self.counts.untimed += 1
            track.last_end = max(track.last_end, end)
            submit = (w.process, w.submit_id)
            flows: list[int] = []
            if submit != last_submit:
                last_submit = submit
                if w.submit_cpu_ns is not None:
                    flows.append(stable_id("flow", w.process, w.submit_id))
            lane = self._lane_for(track, begin, w.frame, w.labels)
            self._open_labels(track, lane, begin, w.frame, w.labels)
            clock = track.clock.clock_id
            args = _workload_args(w, times)
            if self.budget.active:
                args.update(self.budget.workload_args(w.identity))
            shared: tuple[Any, dict[str, Any]] | None = ((w.process, w.tag_id), w.metadata)
            if not args.keys().isdisjoint(w.metadata):  # a metadata field overridden
                args, shared = {**w.metadata, **args}, None
            self.seq.event(lane.uuid, begin, SLICE_BEGIN, clock=clock, name=instance_name(w),
                           shared_args=shared, args=args, terminating_flows=flows)  # fmt: skip
            self.seq.event(lane.uuid, end, SLICE_END, clock=clock)
            lane.end = end
            if w.counters:
                self._workload_counters(w, begin, end)
        for track in self.queue_tracks.values():
            for lane in track.lanes:
                self._close_labels(track, lane, 0)

    def _lane_for(
        self, track: _QueueTrack, begin: int, frame: Any, labels: tuple[str, ...]
    ) -> _Lane:
        """The free lane (nothing on it past `begin`) sharing most of the label stack."""
        best: _Lane | None = None
        best_shared = -1
        for lane in track.lanes:
            if lane.end > begin:
                continue
            shared = _shared(lane, frame, labels)
            if shared > best_shared:
                best, best_shared = lane, shared
        return best if best is not None else self._add_lane(track)

    def _open_labels(
        self, track: _QueueTrack, lane: _Lane, begin: int, frame: Any, labels: tuple[str, ...]
    ) -> None:
        shared = _shared(lane, frame, labels)
        self._close_labels(track, lane, shared)
        lane.frame = frame
        clock = track.clock.clock_id
        for depth in range(shared, len(labels)):
            path = "/".join(labels[: depth + 1])
            self.seq.event(lane.uuid, begin, SLICE_BEGIN, clock=clock, name=labels[depth],
                           args={"label_path": path, "depth": depth})  # fmt: skip
            lane.stack.append(_Label(labels[depth]))
            self.counts.labels += 1
        for label in lane.stack:
            label.workloads += 1

    def _close_labels(self, track: _QueueTrack, lane: _Lane, keep: int) -> None:
        """Ends the label slices of `lane` deeper than `keep`, when its last workload ended."""
        clock = track.clock.clock_id
        while len(lane.stack) > keep:
            label = lane.stack.pop()
            self.seq.event(lane.uuid, lane.end, SLICE_END, clock=clock,
                           args={"workloads": label.workloads})  # fmt: skip

    # -- counters ----------------------------------------------------------------------------

    def _workload_counters(self, w: WorkloadInstance, begin: int, end: int) -> None:
        """The workload's counters on its queue's counter tracks: its value while it runs."""
        from ..pipeline_statistics import describe

        for name, value in w.counters.items():
            key = (w.process, w.device, w.queue, name)
            entry = self.workload_counters.get(key)
            if entry is None:
                known = describe(name)
                unit = known.unit if known else None
                entry = self.workload_counters[key] = self._counter_track(key, unit)
                self.counts.counter_tracks += 1
            uuid, clock_id = entry
            self.seq.counter(uuid, begin, value, clock=clock_id)
            self.seq.counter(uuid, end, 0, clock=clock_id)
            self.counts.counter_samples += 2

    def _counter_track(self, key: tuple[Any, ...], unit: Any) -> tuple[int, int]:
        """A counter track under the queue, device or process the workload ran on, and the
        clock its samples are on: its GPU times'."""
        process, device, queue, name = key
        clock: _DeviceClock | None = None
        if queue is not None and device is not None:
            qt = self._queue_track(process, device, queue)
            parent, clock = qt.parent, qt.clock
        elif device is not None:
            parent = self._device_track(process, device)
            clock = self.clocks[(process, device)]
        else:
            parent = self._process_track(process)
        uuid = stable_id("counter", *key)
        label = str(name) if queue is None else f"{name}{SEP}queue {queue}"
        self.seq.track(uuid, label, parent, counter_unit=str(unit) if unit is not None else "")
        clock_id = clock.clock_id if clock is not None else MONOTONIC
        return uuid, clock_id


def _shared(lane: _Lane, frame: Any, labels: tuple[str, ...]) -> int:
    """How many outer labels of `labels` the lane's open label slices already are."""
    if lane.frame != frame:
        return 0
    n = 0
    for open_label, label in zip(lane.stack, labels, strict=False):
        if open_label.name != label:
            break
        n += 1
    return n
