"""What a Perfetto trace of a capture under a cost budget carries of it (docs/perfetto.md,
docs/budget.md): each frame slice gets what the budget's controller saw and decided in it, a
counter track per device says how many workloads each frame measured, and each workload slice
says in how many frames its identity was measured (coverage), or why none did."""

from __future__ import annotations

from typing import Any, Final

from ..capture import Capture, Frame
from ..capture.read.coverage import budget_summary, identity_coverage
from ..capture.read.identity import WorkloadIdentity
from ..capture.read.records import BudgetFrame
from .perfetto_model import SEP
from .perfetto_packets import INSTANT, Sequence, stable_id

FrameKeyTuple = tuple[int, int | None, int]  # (process, device, frame number)
NEVER_LISTED: Final = 50  # never-measured identities named in the trace's budget event


class BudgetTrace:
    """A budgeted capture's budget, read once for the export; `active` is False without one."""

    def __init__(self, capture: Capture) -> None:
        self.summary = budget_summary(capture)
        self.frames: dict[FrameKeyTuple, BudgetFrame] = {}
        self.coverage: dict[WorkloadIdentity, tuple[int, int, str | None]] = {}
        self.never: list[str] = []
        self.never_total = 0
        self._tracks: dict[tuple[int, int | None], int] = {}  # (process, device) -> counter
        if self.summary is None:
            return
        for f in capture.budget_frames():
            self.frames[(f.process, f.device, f.number)] = f
        for c in identity_coverage(capture):
            self.coverage[c.identity] = (c.frames, c.measured, c.reason)
            if c.reason is not None:
                self.never_total += 1
                if len(self.never) < NEVER_LISTED:
                    i = c.identity
                    where = f" {i.label_path}" if i.labels else ""
                    self.never.append(
                        f"{i.type or 'unknown'} #{i.ordinal}{where} (queue {i.queue}): {c.reason}"
                    )

    @property
    def active(self) -> bool:
        return self.summary is not None

    def frame_args(self, key: FrameKeyTuple) -> dict[str, Any]:
        """A frame slice's arguments on its budget (none for a frame it said nothing of)."""
        f = self.frames.get(key)
        if f is None:
            return {}
        args: dict[str, Any] = {
            "budget_state": f.state,
            "budget_measured": f.measured,
            "budget_workloads": f.workloads,
            "budget_next": f.next,
        }
        if f.base_ns is not None:
            args["budget_base_ns"] = f.base_ns
        if f.unit_ns is not None:
            args["budget_unit_ns"] = round(f.unit_ns, 1)
        if f.frame_ns is not None:
            args["budget_frame_ns"] = round(f.frame_ns, 1)
        if f.recording_ns is not None:
            args["budget_recording_ns"] = f.recording_ns
        if f.recording_share is not None:
            args["budget_recording_share"] = round(f.recording_share, 3)
        return args

    def write_frame(self, seq: Sequence, process_track: int, frame: Frame) -> None:
        """The workloads `frame` measured, on its device's budget counter track under its
        process (made with the process's first: then also the trace's budget event)."""
        found = self.frames.get((frame.process, frame.device, frame.number))
        if found is None or frame.cpu_ns is None:
            return
        key = (frame.process, frame.device)
        track = self._tracks.get(key)
        if track is None:
            track = self._tracks[key] = stable_id("budget", *key)
            name = f"budget: workloads measured{SEP}GPU {frame.device}"
            seq.track(track, name, process_track, counter_unit="workloads")
            if not any(p == frame.process for p, _ in list(self._tracks)[:-1]):
                seq.event(process_track, frame.cpu_ns, INSTANT, name="cost budget",
                          args=self.summary_args())  # fmt: skip
        seq.counter(track, frame.cpu_ns, found.measured)

    def workload_args(self, identity: WorkloadIdentity | None) -> dict[str, Any]:
        """A workload slice's arguments on its identity's coverage."""
        found = self.coverage.get(identity) if identity is not None else None
        if found is None:
            return {}
        frames, measured, reason = found
        args: dict[str, Any] = {"coverage": f"measured in {measured} of {frames} frames"}
        if reason is not None:
            args["never_measured"] = reason
        return args

    def summary_args(self) -> dict[str, Any]:
        """The trace's one budget event: the budget, its controllers and what no frame measured."""
        assert self.summary is not None
        measured = sum(1 for _, m, _ in self.coverage.values() if m)
        args: dict[str, Any] = {
            **{f"budget_{k}": v for k, v in self.summary.as_json().items() if v is not None},
            "identities": len(self.coverage),
            "identities_measured": measured,
            "identities_never_measured": self.never_total,
        }
        for n, text in enumerate(self.never):
            args[f"never_measured_{n}"] = text
        return args
