"""The `frames` setting's grammar, exactly as the layer parses it
(layer/src/core/frame_selection.cpp): `vkscope run` checks `--frames`, `-s frames=` and
VK_VKSCOPE_FRAMES with it before the application starts, and `vkscope report --frames` reads its
frame lists with the same rules.

    SELECTION := ""                 every frame
               | "host"             the frames the capture server requests
               | "every:" NUMBER    frames 0, N, 2N... (N >= 1)
               | "trigger:" PATH    frames that begin while the file PATH exists
               | ITEM ("," ITEM)* [","]
    ITEM      := NUMBER | NUMBER "-" | NUMBER "-" NUMBER   (a range never runs backwards)
    NUMBER    := ASCII digits, at most 2^64 - 1

Spaces and tabs around the whole text, an item, a number or a path are ignored; nothing else is
(a newline is not a space here, nor a sign, nor a non-ASCII digit). One trailing comma is
allowed, as the layer allows it. tests/test_frame_selection.py runs the layer on the same
strings to keep the two the same.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final, Literal

U64_MAX: Final = 2**64 - 1
_BLANKS: Final = " \t"

Kind = Literal["all", "host", "every", "trigger", "ranges"]


class FrameSelectionError(ValueError):
    """A selection the layer would refuse; the message says what is wrong with it."""


@dataclass(frozen=True, slots=True)
class FrameSelection:
    kind: Kind
    ranges: tuple[tuple[int, int | None], ...] = ()  # (first, last); last None: no end
    every: int = 0
    trigger: str = ""

    def __contains__(self, frame: object) -> bool:
        """Whether a frame number is selected by a list of numbers and ranges (or by `all`)."""
        if self.kind == "all":
            return True
        if self.kind != "ranges" or not isinstance(frame, int):
            return False
        return any(lo <= frame and (hi is None or frame <= hi) for lo, hi in self.ranges)


def _number(text: str) -> int | None:
    text = text.strip(_BLANKS)
    if not text or not text.isascii() or not text.isdigit():
        return None
    value = int(text)
    return value if value <= U64_MAX else None


def _item(item: str, unit: str) -> tuple[int, int | None] | str:
    """One item of a list as (first, last), or why it is not one."""
    dash = item.find("-")
    if dash < 0:
        n = _number(item)
        return (n, n) if n is not None else f"{item!r} is not a {unit}"
    first = _number(item[:dash])
    if first is None:
        return f"{item!r} does not start with a {unit}"
    if not item[dash + 1 :].strip(_BLANKS):
        return (first, None)
    last = _number(item[dash + 1 :])
    if last is None:
        return f"{item!r} does not end with a {unit}"
    if last < first:
        return f"range {item!r} runs backwards"
    return (first, last)


def parse_ranges(text: str, unit: str = "frame number") -> tuple[tuple[int, int | None], ...]:
    """A list of numbers and ranges (`3,10-20,100-`); FrameSelectionError saying what is wrong
    (with `unit` for what a number is). An empty text is an empty list."""
    ranges: list[tuple[int, int | None]] = []
    rest = text.strip(_BLANKS)
    while rest:
        item, comma, rest = rest.partition(",")
        parsed = _item(item.strip(_BLANKS), unit)
        if isinstance(parsed, str):
            if any(_beyond_u64(part) for part in item.split("-")):
                parsed += f" ({unit}s end at 2^64 - 1)"
            raise FrameSelectionError(f"{parsed}; expected numbers and ranges like 3,10-20,100-")
        ranges.append(parsed)
        if not comma:
            break
    return tuple(ranges)


def _beyond_u64(text: str) -> bool:
    text = text.strip(_BLANKS)
    return text.isascii() and text.isdigit() and int(text) > U64_MAX


def parse_frame_selection(text: str) -> FrameSelection:
    """The selection `text` says, as the layer reads it; FrameSelectionError when the layer
    would refuse it (and capture every frame instead)."""
    trimmed = text.strip(_BLANKS)
    if not trimmed:
        return FrameSelection("all")
    if trimmed == "host":
        return FrameSelection("host")
    if trimmed.startswith("every:"):
        n = _number(trimmed[len("every:") :])
        if not n:
            raise FrameSelectionError("every:N needs a whole number of frames N of at least 1")
        return FrameSelection("every", every=n)
    if trimmed.startswith("trigger:"):
        path = trimmed[len("trigger:") :].strip(_BLANKS)
        if not path:
            raise FrameSelectionError("trigger: needs the path of a file")
        return FrameSelection("trigger", trigger=path)
    try:
        return FrameSelection("ranges", parse_ranges(trimmed))
    except FrameSelectionError as exc:
        raise FrameSelectionError(f"{exc}, or every:N, trigger:PATH or host") from None


__all__ = [
    "U64_MAX",
    "FrameSelection",
    "FrameSelectionError",
    "parse_frame_selection",
    "parse_ranges",
]
