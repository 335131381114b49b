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
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

from ..capture import Capture, CaptureError, open_capture
from ..guard import CommandError


@dataclass(frozen=True)
class Command:
    name: str
    help: str  # one line, in the list of commands
    description: str  # the command's own --help
    configure: Callable[[argparse.ArgumentParser], None]
    run: Callable[[argparse.Namespace], int]
    usage: str | None = None


@contextlib.contextmanager
def opened(path: Path, *, check_cells: bool = True) -> Iterator[Capture]:
    try:
        capture = open_capture(path, check_cells=check_cells)
    except CaptureError as exc:
        raise CommandError(str(exc)) from None
    with capture:
        yield capture
