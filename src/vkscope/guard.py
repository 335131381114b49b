"""How a command ends on bad input or an output it cannot write: one line on stderr and exit
code 2, never a traceback (the command line's rule, cli/command.py; `python -m vkscope.diff`
keeps it too)."""

from __future__ import annotations

import sqlite3
import sys
from collections.abc import Callable, Sequence
from pathlib import Path

from .capture import CaptureError
from .capture.read.integrity import damage_found
from .outputs import OutputError, silence_standard_output, standard_output

BAD_INPUT = 2


class CommandError(Exception):
    """Ends the command with exit code 2 and this message."""


def say(message: str) -> None:
    """One line on stderr, as every vkscope message is written."""
    print(f"vkscope: {message}", file=sys.stderr)


# What a reader may raise on a value it did not expect: a capture damaged in a way the checks at
# open_capture cannot see (an index that disagrees with its table, say).
_UNEXPECTED: tuple[type[Exception], ...] = (
    TypeError, ValueError, KeyError, IndexError, AttributeError, ArithmeticError,
    UnicodeError, sqlite3.Error,
)  # fmt: skip


def guarded(
    body: Callable[[], None], *errors: type[Exception], reading: Sequence[Path] = ()
) -> int:
    """Runs a command body: CommandError, CaptureError, OutputError and `errors` become one
    line and exit code 2, never a traceback. So does anything unexpected met while reading the
    captures in `reading` when SQLite finds one of them damaged; on a sound file it is a bug,
    and raised."""
    caught: tuple[type[Exception], ...] = (CommandError, CaptureError, OutputError, *errors)
    try:
        body()
    except caught as exc:
        say(str(exc))
        return BAD_INPUT
    except BrokenPipeError:  # `vkscope report ... | head`: the reader has all it wanted
        silence_standard_output()
    except _UNEXPECTED:
        for path in reading:
            found = damage_found(path)
            if found is not None:
                say(f"{path}: damaged: {found}")
                return BAD_INPUT
        raise
    return 0


def command_line(run: Callable[[], int]) -> int:
    """Runs a whole command (its options parsed inside `run`, whose --help prints too) with
    standard output guarded (outputs.py): a write error there, even one that only the last
    flush finds, is one line and exit code 2."""
    try:
        with standard_output():
            return run()
    except OutputError as exc:
        say(str(exc))
        return BAD_INPUT
    except BrokenPipeError:
        silence_standard_output()
        return 0
