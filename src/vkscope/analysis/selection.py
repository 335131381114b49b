"""Which workloads a report looks at: frames, queues, types and label paths, parsed from options.

Frame and queue numbers are lists and ranges (`3,5-9`, `10-` for 10 and after); types are names
separated by commas; a label pattern with glob characters (`*?[`) is matched against the whole
label path (`frame/*/bloom`), any other is a substring of it (`shadow`).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from fnmatch import fnmatchcase
from typing import Final

_GLOB: Final = re.compile(r"[*?\[]")
_RANGE: Final = re.compile(r"^\s*(\d+)\s*(?:(-)\s*(\d*)\s*)?$")


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
    """`3,5-9,12-` as a Numbers set; raises SelectionError saying what is wrong."""
    singles: set[int] = set()
    ranges: list[tuple[int, int | None]] = []
    for part in text.split(","):
        found = _RANGE.match(part)
        if not found:
            raise SelectionError(
                f"--{what} {text!r}: {part.strip()!r} is not a number or a range "
                "(use e.g. 3,5-9 or 10-)"
            )
        lo, dash, hi = found.groups()
        if not dash:
            singles.add(int(lo))
        elif hi:
            if int(hi) < int(lo):
                raise SelectionError(f"--{what} {text!r}: range {lo}-{hi} runs backwards")
            ranges.append((int(lo), int(hi)))
        else:
            ranges.append((int(lo), None))
    return Numbers(text, frozenset(singles), tuple(ranges))


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


def _describe(numbers: list[int]) -> str:
    """`0-9, 12` for a sorted list of numbers."""
    runs: list[tuple[int, int]] = []
    for n in numbers:
        if runs and n == runs[-1][1] + 1:
            runs[-1] = (runs[-1][0], n)
        else:
            runs.append((n, n))
    return ", ".join(f"{a}" if a == b else f"{a}-{b}" for a, b in runs)
