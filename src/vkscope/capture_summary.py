"""How many frames a capture holds, in the one sentence that `vkscope run`, `vkscope report` and
the HTML timeline's header all show.

Two counts describe a capture's frames: the frames that have work (submissions the layer sent)
and the frames that ended (FRAME messages: a present, a VK_EXT_frame_boundary frame end, or
every `frame_submits` submissions). An application that never ends a frame has all its work in
one frame that never ended; the hint says what ends frames for a headless application.
"""

from __future__ import annotations

from dataclasses import dataclass

from .capture import Capture


@dataclass(frozen=True, slots=True)
class FrameCounts:
    with_work: int
    ended: int

    @classmethod
    def of(cls, capture: Capture) -> FrameCounts:
        return cls(len(capture.submitted_frames()), len(capture.frames()))

    def sentence(self) -> str:
        """`5 frames with work, 5 ended`."""
        noun = "frame" if self.with_work == 1 else "frames"
        ended = f"{self.ended:,} ended" if self.ended else "none ended"
        return f"{self.with_work:,} {noun} with work, {ended}"

    def hint(self) -> str | None:
        """What to do about work that no frame end divided, or None."""
        if self.ended or not self.with_work:
            return None
        return (
            "nothing ended a frame (no present, no VK_EXT_frame_boundary frame end), so all the "
            "work is one frame; for a headless application, end a frame every N submissions "
            "with -s frame_submits=N"
        )
