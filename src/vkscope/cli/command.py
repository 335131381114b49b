"""What every `vkscope` command is made of, and the helpers the commands share.

A command is a module of this package with a `COMMAND`: its name, its help texts, a `configure`
that adds its options to an argparse parser, and a `run` that takes the parsed options and
returns the exit code. A command that another one runs (`run` prints a report, `demo` is a `run`)
also has typed options of its own and a function that takes them, so no command builds another's
argument list. Exit codes: 0 done, 1 a finding a script gates on (diff: a regression), 2 bad
input with one line on stderr saying what is wrong, never a traceback; `run` passes the
application's own code through.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import sqlite3
import sys
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TextIO

from ..capture import Capture, CaptureError, open_capture
from ..capture.read.integrity import damage_found

BAD_INPUT = 2


@dataclass(frozen=True)
class Command:
    name: str
    help: str  # one line, in the list of commands
    description: str  # the command's own --help
    configure: Callable[[argparse.ArgumentParser], None]
    run: Callable[[argparse.Namespace], int]
    usage: str | None = None


class CommandError(Exception):
    """Ends the command with exit code 2 and this message."""


def say(message: str) -> None:
    """One line on stderr, as every vkscope message is written."""
    print(f"vkscope: {message}", file=sys.stderr)


@contextlib.contextmanager
def opened(path: Path, *, check_cells: bool = True) -> Iterator[Capture]:
    try:
        capture = open_capture(path, check_cells=check_cells)
    except CaptureError as exc:
        raise CommandError(str(exc)) from None
    with capture:
        yield capture


@contextlib.contextmanager
def output(path: Path | None) -> Iterator[TextIO]:
    """stdout, or the file at `path` (a CommandError when it cannot be written)."""
    if path is None:
        yield sys.stdout
        return
    try:
        out = path.open("w", encoding="utf-8", newline="")
    except OSError as exc:
        raise CommandError(f"cannot write {path}: {exc.strerror}") from None
    with out:
        yield out


# What a reader may raise on a value it did not expect: a capture damaged in a way the checks at
# open_capture cannot see (an index that disagrees with its table, say).
_UNEXPECTED: tuple[type[Exception], ...] = (
    TypeError, ValueError, KeyError, IndexError, AttributeError, ArithmeticError,
    UnicodeError, sqlite3.Error,
)  # fmt: skip


def guarded(
    body: Callable[[], None], *errors: type[Exception], reading: Sequence[Path] = ()
) -> int:
    """Runs a command body: CommandError, CaptureError and `errors` become one line and exit
    code 2, never a traceback. So does anything unexpected met while reading the captures in
    `reading` when SQLite finds one of them damaged; on a sound file it is a bug, and raised."""
    caught: tuple[type[Exception], ...] = (CommandError, CaptureError, *errors)
    try:
        body()
    except caught as exc:
        say(str(exc))
        return BAD_INPUT
    except BrokenPipeError:  # `vkscope report ... | head`: the reader has all it wanted
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except _UNEXPECTED:
        for path in reading:
            found = damage_found(path)
            if found is not None:
                say(f"{path}: damaged: {found}")
                return BAD_INPUT
        raise
    return 0
