"""Which frames of a capture are warm-up: left out of distributions, rankings and sums, because
their times say how the application started rather than what a frame costs.

The rule (docs/timing.md, "Warm-up frames"), per process and device:

- the application's first frame (frame number 0): its work runs on cold caches, touches memory
  for the first time and waits on what the driver does lazily at first use;
- every frame in which the application created pipelines (or shader objects) or shader modules
  (schema 12 on: frames.pipelines, frames.shader_modules): a driver compiles them on threads of
  the application's process, and many finish compiling, or upload what they compiled, at first
  use, on the GPU's time as much as the CPU's.

If the rule would leave a process and device with no other frame (a capture of one frame, or of
frames that all compiled something), none of its frames is left out, and `kept` says so.
`first=N` replaces the rule: exactly the first N frames with work of each process and device
are warm-up (0: none).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import Final, Protocol, TypeVar

from .identity import FrameKeyTuple
from .reader import Capture

FIRST_FRAMES: Final = 1  # frame numbers below this are warm-up under the automatic rule

FIRST: Final = "first frame"
COMPILED: Final = "compiled"  # the reason of a frame that created pipelines or shader modules

_COUNTS: Final = """
SELECT process, device, count(DISTINCT frame) FROM submits WHERE frame IS NOT NULL
GROUP BY process, device
"""
_EARLY: Final = """
SELECT DISTINCT process, device, frame FROM submits WHERE frame IS NOT NULL AND frame < ?
"""
# Frames with work in which the application compiled something (NULL before schema 12).
_COMPILED: Final = """
SELECT f.process, f.device, f.number, total(f.pipelines), total(f.shader_modules) FROM frames f
WHERE (f.pipelines > 0 OR f.shader_modules > 0) AND EXISTS (
    SELECT 1 FROM submits s WHERE s.frame = f.number AND s.process = f.process
    AND s.device IS f.device)
GROUP BY f.process, f.device, f.number
"""
_FIRST_N: Final = """
SELECT process, device, frame FROM (
    SELECT process, device, frame,
           row_number() OVER (PARTITION BY process, device ORDER BY frame) AS n
    FROM (SELECT DISTINCT process, device, frame FROM submits WHERE frame IS NOT NULL)
) WHERE n <= ?
"""


class InFrame(Protocol):
    """Anything that ran in a frame: an instance value, an identified value, a record."""

    @property
    def process(self) -> int: ...
    @property
    def device(self) -> int | None: ...
    @property
    def frame(self) -> int | None: ...


Ran = TypeVar("Ran", bound=InFrame)


@dataclass(frozen=True, slots=True)
class WarmUp:
    """The warm-up frames of a capture, each with why it is one."""

    rule: str  # "automatic" or "first N"
    frames: dict[FrameKeyTuple, str] = field(default_factory=dict)
    # (process, device) whose every frame the rule matched, so none was left out
    kept: tuple[tuple[int, int | None], ...] = ()

    def __contains__(self, key: object) -> bool:
        return key in self.frames

    def steady(self, values: Iterable[Ran]) -> Iterator[Ran]:
        """The values of `values` that ran outside warm-up frames."""
        frames = self.frames
        if not frames:
            return iter(values)
        return (v for v in values if (v.process, v.device, v.frame) not in frames)

    def describe(self) -> str:
        """One line for people: which frames are left out, and why."""
        if not self.frames:
            if self.kept:
                return f"none: every frame matched the {self.rule} rule, so all are kept"
            return f"none left out ({self.rule} rule)"
        numbers = sorted({k[2] for k in self.frames if k[2] is not None})
        shown = ", ".join(map(str, numbers[:8])) + (", …" if len(numbers) > 8 else "")
        reasons = sorted({r.split(":")[0] for r in self.frames.values()})
        kept = f"; every frame of {_processes(self.kept)} kept" if self.kept else ""
        return (
            f"{len(self.frames):,} frame{'s' if len(self.frames) != 1 else ''} left out "
            f"({shown}: {', '.join(reasons)}){kept}"
        )


def _compiled_reason(pipelines: int, modules: int) -> str:
    said = [
        f"{n:,} {what}{'s' if n != 1 else ''}"
        for n, what in ((pipelines, "pipeline"), (modules, "shader module"))
        if n
    ]
    return f"{COMPILED}: {' and '.join(said)} created"


def _processes(kept: tuple[tuple[int, int | None], ...]) -> str:
    return ", ".join(f"process {p} device {d}" for p, d in kept)


def warmup_frames(capture: Capture, first: int | None = None) -> WarmUp:
    """The capture's warm-up frames: by the automatic rule, or the first `first` frames with work
    of each process and device (see the module's docstring)."""
    if first is not None:
        if first <= 0:
            return WarmUp(f"first {max(first, 0)}")
        _, rows = capture.execute(_FIRST_N, (first,))
        return WarmUp(f"first {first}", {(p, d, f): f"first {first}" for p, d, f in rows})
    found: dict[FrameKeyTuple, str] = {}
    _, early = capture.execute(_EARLY, (FIRST_FRAMES,))
    for p, d, f in early:
        found[(p, d, f)] = FIRST
    _, compiled = capture.execute(_COMPILED)
    for p, d, f, pipelines, modules in compiled:
        found.setdefault((p, d, f), _compiled_reason(int(pipelines), int(modules)))
    per_device: dict[tuple[int, int | None], int] = {}
    for p, d, _ in found:
        per_device[(p, d)] = per_device.get((p, d), 0) + 1
    _, counts = capture.execute(_COUNTS)
    kept = tuple(
        (p, d) for p, d, n in counts if per_device.get((p, d), 0) >= n and (p, d) in per_device
    )
    if kept:
        found = {k: v for k, v in found.items() if (k[0], k[1]) not in kept}
    return WarmUp("automatic", found, kept)
