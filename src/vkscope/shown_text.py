"""Text vkscope did not write, as each output shows it.

Debug labels, process, device and driver names, counter names and descriptions from plugins and
drivers, tags, file names and the cells of a user's query are the application's (or someone
else's) data: a label may hold an escape sequence that recolours, retitles or rewrites a
terminal, a `<script>`, markdown syntax, or 100 KB. What each output does with them:

- terminal tables and lines: control characters shown escaped (`visible`), long text shortened
  (`shortened`);
- Markdown: the same, then HTML and markdown syntax escaped (`markdown_escaped`);
- CSV: control characters shown escaped (in a JSON cell, as JSON escapes them), never
  shortened: otherwise the cell is the value;
- JSON, the capture, Perfetto: kept exactly (JSON's own escaping makes control characters
  inert);
- the HTML page: kept exactly, escaped as HTML (html/page.py).

Escaped (`ESCAPED`): every C0 control (ESC, BEL, CR, LF, TAB, BS ...), DEL and every C1 control
(U+0080-U+009F: CSI and OSC as single characters), the Unicode bidirectional controls that can
reorder what a line shows (U+061C, U+200E, U+200F, U+202A-U+202E, U+2066-U+2069), the line and
paragraph separators U+2028 and U+2029, and lone surrogates (which no UTF-8 output can carry).
Each is written as Python writes it in a string: `\\x1b`, `\\x07`, `\\u202e`. A backslash is
kept as it is, so `\\x1b` in a label and an escaped ESC read alike; the exact text is in JSON.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any, Final

import msgspec

# Characters shown escaped wherever people read text: controls, bidirectional controls, line
# separators and lone surrogates.
ESCAPED: Final = re.compile(
    "[\x00-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069\u2028\u2029\ud800-\udfff]"
)
# Characters of a label path a table shows before it is shortened, and the marker in its place.
TABLE_LIMIT: Final = 200
# Markdown's syntax characters. An underscore between two letters or digits (`image_transfer`)
# is never emphasis in CommonMark, and stays as it is so that the source reads well.
_MARKDOWN: Final = re.compile(r"[\\`*\[\]|~$#!]|(?<![^\W_])_|_(?![^\W_])")
_HTML: Final = {"&": "&amp;", "<": "&lt;", ">": "&gt;"}
_HTML_SYNTAX: Final = re.compile("[&<>]")


def _escape(match: re.Match[str]) -> str:
    code = ord(match.group())
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def visible(text: str) -> str:
    """`text` with every character of ESCAPED written as its escape (`\\x1b`)."""
    return ESCAPED.sub(_escape, text)


def shortened(text: str, limit: int = TABLE_LIMIT) -> str:
    """`text` when it has at most `limit` characters; else its start and end around a marker
    that says how much is left out: `Frame 3/AAAA…[99,812 characters cut]…AAAA/Shadows`."""
    if len(text) <= limit:
        return text
    head = limit * 2 // 3
    tail = limit - head
    return f"{text[:head]}…[{len(text) - limit:,} characters cut]…{text[-tail:]}"


def terminal_text(text: str, limit: int = TABLE_LIMIT) -> str:
    """What a terminal shows of `text`: shortened, then its controls escaped."""
    return visible(shortened(text, limit))


def markdown_escaped(text: str) -> str:
    """What Markdown carries of `text`, whole: its controls escaped (`visible`), HTML's
    `& < >` as entities and markdown's syntax (`\\ ` * _ [ ] | ~ $ # !`) backslash-escaped, so
    that it renders as the same characters, in a table cell too, and never as markup."""
    shown = _MARKDOWN.sub(lambda m: "\\" + m.group(), visible(text))
    return _HTML_SYNTAX.sub(lambda m: _HTML[m.group()], shown)


def csv_cell(value: Any) -> Any:
    """A CSV cell: a string with its controls escaped, a mapping as JSON with its controls
    escaped as JSON does (`\\u001b`, so the cell stays valid JSON), any other value as it is."""
    if isinstance(value, str):
        return visible(value)
    if isinstance(value, dict):
        text = msgspec.json.encode(value).decode()
        return ESCAPED.sub(lambda m: f"\\u{ord(m.group()):04x}", text)
    return value


def csv_row(values: Iterable[Any]) -> list[Any]:
    return [csv_cell(v) for v in values]
