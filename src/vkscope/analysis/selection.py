"""Which workloads a report looks at: frames, queues, types and label paths, parsed from options.

Frame and queue numbers are lists and ranges (`3,5-9`, `10-` for 10 and after); types are names
separated by commas; a label pattern with glob characters (`*?[`) is matched against the whole
label path (`frame/*/bloom`), any other is a substring of it (`shadow`).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from fnmatch import fnmatchcase
from typing import Final

from ..frame_selection import FrameSelectionError, parse_frame_selection, parse_ranges

_GLOB: Final = re.compile(r"[*?\[]")


Count = Callable[[int, int | None], int]  # distinct numbers present from lo to hi (None: no end)


class SelectionError(ValueError):
    """An option value that does not parse, or selects frames the capture does not have."""


@dataclass(frozen=True, slots=True)
class Numbers:
    """Non-negative integers given as single numbers and ranges (an open range has no end)."""

    text: str
    singles: frozenset[int]
    ranges: tuple[tuple[int, int | None], ...]

    def __contains__(self, value: object) -> bool:
        if not isinstance(value, int):
            return False
        if value in self.singles:
            return True
        return any(lo <= value and (hi is None or value <= hi) for lo, hi in self.ranges)

    def missing(self, count: Count, limit: int = 20) -> list[int]:
        """Up to `limit` numbers asked for by name or by a closed range that are not present.

        `count(lo, hi)` is how many distinct numbers from lo to hi (None: no end) are present.
        A range is split only where it is partly present, so a wide range costs a few counts.
        """
        out = sorted(n for n in self.singles if not count(n, n))[:limit]
        for lo, hi in self.ranges:
            if hi is not None:
                out += _missing_in(count, lo, hi, limit - len(out))
        return sorted(set(out))[:limit]

    def any_present(self, count: Count) -> bool:
        singles = any(count(n, n) for n in self.singles)
        return singles or any(count(lo, hi) for lo, hi in self.ranges)


def _missing_in(count: Count, lo: int, hi: int, limit: int) -> list[int]:
    if limit <= 0:
        return []
    present = count(lo, hi)
    if present == hi - lo + 1:
        return []
    if not present:
        return list(range(lo, min(hi, lo + limit - 1) + 1))
    mid = (lo + hi) // 2
    left = _missing_in(count, lo, mid, limit)
    return left + _missing_in(count, mid + 1, hi, limit - len(left))


def parse_numbers(text: str, what: str = "frames") -> Numbers:
    """`3,5-9,12-` as a Numbers set, with the grammar of the layer's `frames` setting
    (frame_selection.py); raises SelectionError saying what is wrong."""
    try:
        ranges = parse_ranges(text, "frame number" if what == "frames" else "number")
    except FrameSelectionError as exc:
        raise SelectionError(f"--{what} {text!r}: {exc}") from None
    if not ranges:
        raise SelectionError(f"--{what} {text!r}: no number given (e.g. 3,5-9 or 10-)")
    singles = frozenset(lo for lo, hi in ranges if lo == hi)
    return Numbers(text, singles, tuple(r for r in ranges if r[0] != r[1]))


@dataclass(frozen=True, slots=True)
class LabelPattern:
    text: str

    @property
    def is_glob(self) -> bool:
        return bool(_GLOB.search(self.text))

    def matches(self, label_path: str) -> bool:
        if self.is_glob:
            return fnmatchcase(label_path, self.text)
        return self.text in label_path


@dataclass(frozen=True, slots=True)
class Selection:
    """What to look at; None means everything."""

    frames: Numbers | None = None
    queues: Numbers | None = None
    types: frozenset[str] | None = None
    label: LabelPattern | None = None

    @classmethod
    def parse(
        cls,
        frames: str | None = None,
        queues: str | None = None,
        types: str | None = None,
        label: str | None = None,
    ) -> Selection:
        type_names = None
        if types is not None:
            type_names = frozenset(t.strip() for t in types.split(",") if t.strip())
            if not type_names:
                raise SelectionError("--type: no type given (e.g. dispatch,renderpass)")
        if frames is not None and not _only_numbers(frames):
            frames = None  # an empty selection: every frame, as the layer reads it
        return cls(
            frames=parse_numbers(frames, "frames") if frames is not None else None,
            queues=parse_numbers(queues, "queue") if queues is not None else None,
            types=type_names,
            label=LabelPattern(label) if label is not None else None,
        )

    def wants_frame(self, frame: int | None) -> bool:
        return self.frames is None or frame in self.frames

    def wants_queue(self, queue: int | None) -> bool:
        return self.queues is None or queue in self.queues

    def wants_workload(self, type_: str | None, label_path: str) -> bool:
        """Type and label filters (queues and frames are chosen before rows are read)."""
        if self.types is not None and (type_ or "unknown") not in self.types:
            return False
        return self.label is None or self.label.matches(label_path)

    def check_frames(self, count: Count, bounds: tuple[int, int] | None) -> None:
        """Refuses frames asked for by number that the capture does not have.

        `count(lo, hi)` is how many frames from lo to hi (hi None: no end) have work; `bounds`
        are the first and last frame with work (None: there is none).
        """
        if self.frames is None:
            return
        missing = self.frames.missing(count)
        if missing or not self.frames.any_present(count):
            gone = _describe(missing) if missing else self.frames.text
            if bounds is None:
                have = "none"
            else:
                have = str(bounds[0]) if bounds[0] == bounds[1] else f"{bounds[0]} to {bounds[1]}"
            raise SelectionError(
                f"--frames {self.frames.text}: the capture has no frame {gone} "
                f"(its frames with work: {have})"
            )

    def check_queues(self, count: Count, present: list[int]) -> None:
        """Refuses queues asked for by id that no submit of the capture went to; `count` as for
        check_frames, over queue ids; `present`: the ids that are there."""
        if self.queues is None:
            return
        missing = self.queues.missing(count)
        if missing or not self.queues.any_present(count):
            gone = _describe(missing) if missing else self.queues.text
            have = ", ".join(map(str, present)) or "none"
            raise SelectionError(
                f"--queue {self.queues.text}: the capture has no queue {gone} (its queues with "
                f"work: {have})"
            )

    def check_types(self, present: set[str]) -> None:
        """Refuses workload types the capture has none of; `present` includes "unknown" when
        some workload was never described."""
        if self.types is None:
            return
        absent = sorted(self.types - present)
        if absent:
            have = ", ".join(sorted(present)) or "none"
            raise SelectionError(
                f"--type {','.join(sorted(self.types))}: the capture has no {', '.join(absent)} "
                f"workload (its types: {have})"
            )

    def check_label(self, label_paths: Iterable[str]) -> None:
        """Refuses a label pattern that matches no label path of the capture."""
        if self.label is None:
            return
        if not any(self.label.matches(path) for path in label_paths):
            how = "matches no label path" if self.label.is_glob else "is in no label path"
            raise SelectionError(f"--label {self.label.text!r}: {how} of the capture")

    def describe(self) -> str:
        """The options that chose this selection, as typed."""
        parts = []
        if self.frames is not None:
            parts.append(f"--frames {self.frames.text}")
        if self.queues is not None:
            parts.append(f"--queue {self.queues.text}")
        if self.types is not None:
            parts.append(f"--type {','.join(sorted(self.types))}")
        if self.label is not None:
            parts.append(f"--label {self.label.text!r}")
        return " ".join(parts)


def _only_numbers(frames: str) -> bool:
    """Whether `frames` lists frames (False: it is empty, so selects all). A report looks at
    frames by number: the selections that choose frames while capturing (every:N,
    trigger:PATH, host) say nothing about a capture already made."""
    try:
        kind = parse_frame_selection(frames).kind
    except FrameSelectionError:
        return True  # parse_numbers says what is wrong with it
    if kind in ("host", "every", "trigger"):
        raise SelectionError(
            f"--frames {frames!r}: a report takes frame numbers and ranges (e.g. 3,5-9 or "
            "10-); every:N, trigger:PATH and host choose frames to capture"
        )
    return kind != "all"


def _describe(numbers: list[int]) -> str:
    """`0-9, 12` for a sorted list of numbers."""
    runs: list[tuple[int, int]] = []
    for n in numbers:
        if runs and n == runs[-1][1] + 1:
            runs[-1] = (runs[-1][0], n)
        else:
            runs.append((n, n))
    return ", ".join(f"{a}" if a == b else f"{a}-{b}" for a, b in runs)
