"""The GPU clocks two captures ran at (docs/gpu-state.md, docs/diff.md): whether they differ, and
the factor that puts the new capture's GPU times at the base capture's clock on request
(`--normalize-clock`).

A capture's clock is the median graphics clock the host sampled during its captured frames (its
first sampled GPU's). Normalising scales every GPU time of the new capture by new clock / base
clock: the time the work would take at the base's clock if it scaled with the graphics clock
alone. That is an approximation: work bound by memory, or by a clock the graphics clock does not
drive, does not scale so, and a clock that moved within a capture is one number here.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Final

from ..capture import Capture
from ..capture.read.gpu_join import GpuJoin

DIFFERENT_PCT: Final = 1.0  # medians further apart than this are different clocks


class ClockError(Exception):
    """--normalize-clock without the clocks it needs; the message says which capture."""


def capture_clock(capture: Capture) -> float | None:
    """The median graphics clock (MHz) of the capture's captured frames; None without one."""
    for summary in GpuJoin(capture).summaries():
        state = summary.state
        if state is not None and state.graphics_clock_mhz is not None:
            return state.graphics_clock_mhz.median
    return None


@dataclass(frozen=True, slots=True)
class Clocks:
    base_mhz: float | None
    new_mhz: float | None
    normalized: bool  # the new capture's GPU times were scaled to the base's clock

    @property
    def change_pct(self) -> float | None:
        if not self.base_mhz or self.new_mhz is None:
            return None
        return (self.new_mhz - self.base_mhz) / self.base_mhz * 100

    @property
    def differ(self) -> bool:
        change = self.change_pct
        return change is not None and abs(change) > DIFFERENT_PCT

    @property
    def new_scale(self) -> float:
        """What the new capture's GPU times are multiplied by."""
        if not self.normalized or not self.base_mhz or self.new_mhz is None:
            return 1.0
        return self.new_mhz / self.base_mhz

    def sentence(self) -> str | None:
        """What people are told; None when there is nothing to say."""
        if self.base_mhz is None and self.new_mhz is None:
            return None
        if self.base_mhz is None or self.new_mhz is None:
            missing = "base" if self.base_mhz is None else "new"
            return f"GPU clock: only one capture has it (not sampled in {missing})"
        said = f"GPU clock: base {self.base_mhz:g} MHz, new {self.new_mhz:g} MHz"
        change = self.change_pct
        assert change is not None
        if self.differ:
            said += f" ({change:+.1f}%): the captures ran at different clocks"
            if self.normalized:
                said += (
                    f"; new GPU times scaled by {self.new_scale:.4f} to the base clock "
                    "(--normalize-clock: an approximation)"
                )
            else:
                said += "; --normalize-clock scales the new times to the base clock"
        return said

    def as_json(self) -> dict[str, Any]:
        return {
            "base_mhz": self.base_mhz,
            "new_mhz": self.new_mhz,
            "change_pct": self.change_pct,
            "differ": self.differ,
            "normalized": self.normalized,
            "new_scale": self.new_scale,
        }


def clocks_of(base: Capture, new: Capture, normalize: bool) -> Clocks:
    """Both captures' clocks; ClockError when normalising lacks one of them."""
    found = Clocks(capture_clock(base), capture_clock(new), normalize)
    if normalize:
        for name, capture, mhz in (("base", base, found.base_mhz), ("new", new, found.new_mhz)):
            if mhz is None:
                raise ClockError(
                    f"--normalize-clock: the {name} capture {capture.path} has no sampled "
                    "graphics clock (recorded with --no-gpu-state, on a GPU vkscope cannot "
                    "sample, or by a vkscope before schema 9)"
                )
    return found
