"""Where a command's output goes, and what a failed write becomes: the one place that decides it.

An output is standard output or a path (`-o`, or a file a command names itself, such as the trace
and page `vkscope run` writes beside a capture). What the path is decides how it is written:

- missing, a regular file, or a link to one: written into a new file beside it (beside the
  link's target), renamed over it once whole; a failed write leaves what was there, and no
  partial file;
- a character device (`/dev/null`, a terminal, `/dev/full`) or a FIFO: written in place, as the
  shell's `>` would: opened and written, never replaced or removed (a FIFO waits for its reader);
- a file reached through a process's descriptors (`/dev/stdout`, `/dev/fd/3`, `/proc/...`):
  truncated and written in place, as the shell's `>` would, since replacing the file would leave
  the descriptor on the old one;
- a folder, a block device, a socket: refused before anything is written.

Every error of opening or writing an output, standard output included, becomes OutputError,
whose message names the output and the system's reason ("No space left on device"); the commands
end with it as one line and exit code 2 (guard.py). After the first write error an output takes
nothing more, so that one failure is said once.
"""

from __future__ import annotations

import contextlib
import io
import os
import secrets
import stat
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any, BinaryIO, TextIO, cast

STANDARD_OUTPUT = "standard output"


class OutputError(Exception):
    """An output that cannot be opened or written; the message names it and says why."""

    def __init__(self, where: str, reason: str) -> None:
        super().__init__(f"cannot write {where}: {reason}")


def _reason(exc: OSError) -> str:
    return exc.strerror or str(exc)


class _Sink(io.RawIOBase):
    """A file descriptor whose write errors are OutputError. After the first, what is written
    is dropped: the error has been raised once, and flushing or closing must not raise it
    again."""

    def __init__(self, fd: int, where: str) -> None:
        super().__init__()
        self._fd = fd
        self._where = where
        self.error: OutputError | None = None

    def writable(self) -> bool:
        return True

    def fileno(self) -> int:
        return self._fd

    def isatty(self) -> bool:
        return os.isatty(self._fd)

    def write(self, data: Any) -> int:
        if self.error is not None:
            return len(memoryview(data))
        try:
            return os.write(self._fd, data)
        except OSError as exc:
            raise self._failed(exc) from None

    def _failed(self, exc: OSError) -> OutputError:
        self.error = OutputError(self._where, _reason(exc))
        return self.error

    def close(self) -> None:
        if self.closed:
            return
        super().close()
        try:
            os.close(self._fd)
        except OSError as exc:  # a file system that reports a full disk only now (NFS)
            if self.error is None:
                raise self._failed(exc) from None


def _kind(path: Path) -> str:
    """`replace` (a regular file, or none yet), `in place` (a character device, a FIFO, a file
    reached through /dev or /proc), or what the path is when it cannot be written (raised as
    OutputError)."""
    try:
        mode = path.stat().st_mode
    except FileNotFoundError:
        return "replace"
    except OSError as exc:
        raise OutputError(str(path), _reason(exc)) from None
    if stat.S_ISREG(mode):
        return (
            "in place"
            if Path(os.path.abspath(path)).parts[1:2] in (("dev",), ("proc",))
            else "replace"
        )
    if stat.S_ISCHR(mode) or stat.S_ISFIFO(mode):
        return "in place"
    what = (
        "it is a folder" if stat.S_ISDIR(mode)
        else "it is a block device (a disk); vkscope writes files, character devices and FIFOs"
        if stat.S_ISBLK(mode)
        else "it is a socket" if stat.S_ISSOCK(mode)
        else "it is not a file"
    )  # fmt: skip
    raise OutputError(str(path), what)


def _open_failed(path: Path, exc: OSError) -> OutputError:
    folder = path.parent
    if isinstance(exc, FileNotFoundError | NotADirectoryError) and not folder.is_dir():
        return OutputError(str(path), f"the folder {folder} does not exist")
    return OutputError(str(path), _reason(exc))


@contextlib.contextmanager
def _sink(path: Path) -> Iterator[_Sink]:
    """The path opened as its kind says; a replaced file is renamed into place when the body
    ends without an error, and removed otherwise."""
    if _kind(path) == "in place":
        try:
            fd = os.open(path, os.O_WRONLY | os.O_TRUNC | os.O_NOCTTY | os.O_CLOEXEC)
        except OSError as exc:
            raise _open_failed(path, exc) from None
        sink = _Sink(fd, str(path))
        with contextlib.closing(sink):
            yield sink
        if sink.error is not None:  # the body swallowed it; the command still failed
            raise sink.error
        return
    target = Path(os.path.realpath(path))  # a link stays a link, its target is replaced
    try:
        mode: int | None = stat.S_IMODE(target.stat().st_mode)
    except OSError:
        mode = None
    partial = target.with_name(f".{target.name}.{os.getpid()}.{secrets.token_hex(4)}.partial")
    try:
        # 0o666 less the umask, as a new file gets; an existing file's own mode otherwise.
        fd = os.open(partial, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o666)
    except OSError as exc:
        raise _open_failed(path, exc) from None
    sink = _Sink(fd, str(path))
    try:
        if mode is not None:
            with contextlib.suppress(OSError):
                os.fchmod(fd, mode)
        with contextlib.closing(sink):
            yield sink
        if sink.error is not None:
            raise sink.error
        try:
            os.replace(partial, target)
        except OSError as exc:
            raise OutputError(str(path), _reason(exc)) from None
    finally:
        partial.unlink(missing_ok=True)


@contextlib.contextmanager
def binary_output(path: Path) -> Iterator[BinaryIO]:
    """The file at `path`, for bytes (module docstring: how each kind of path is written)."""
    with _sink(path) as sink, io.BufferedWriter(sink, 1 << 20) as out:
        yield cast(BinaryIO, out)


@contextlib.contextmanager
def text_output(path: Path | None) -> Iterator[TextIO]:
    """Standard output, or the file at `path`, for UTF-8 text."""
    if path is None:
        yield sys.stdout
        return
    with (
        _sink(path) as sink,
        io.BufferedWriter(sink, 1 << 16) as buffered,
        io.TextIOWrapper(buffered, encoding="utf-8", newline="") as out,
    ):
        yield out


class _StandardOutput:
    """sys.stdout while a command runs: its write errors become OutputError. After one, the
    stream's file descriptor is pointed at /dev/null so that what is still buffered (and the
    interpreter's last flush) goes nowhere, quietly. A closed pipe (`vkscope report | head`)
    stays BrokenPipeError: the reader has what it wanted, and that is no error."""

    def __init__(self, stream: TextIO) -> None:
        self._stream = stream

    def write(self, text: str) -> int:
        try:
            return self._stream.write(text)
        except OSError as exc:
            raise self._failed(exc) from None

    def flush(self) -> None:
        try:
            self._stream.flush()
        except OSError as exc:
            raise self._failed(exc) from None

    def _failed(self, exc: OSError) -> Exception:
        silence_standard_output(self._stream)
        if isinstance(exc, BrokenPipeError):
            return exc
        return OutputError(STANDARD_OUTPUT, _reason(exc))

    def __getattr__(self, name: str) -> Any:  # isatty, fileno, encoding, ... of the stream
        return getattr(self._stream, name)


def silence_standard_output(stream: TextIO | None = None) -> None:
    """Points standard output's file descriptor at /dev/null (when it has one)."""
    stream = stream if stream is not None else sys.stdout
    try:
        fd = stream.fileno()
    except (OSError, ValueError, AttributeError, io.UnsupportedOperation):
        return  # not a file (a test's capture): nothing is buffered below it
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, fd)
    os.close(devnull)


@contextlib.contextmanager
def standard_output() -> Iterator[None]:
    """Guards sys.stdout for the body (a command's run) and flushes it at the end, so that a
    write error, even one found only by the last flush, is OutputError and not the
    interpreter's message at exit."""
    original = sys.stdout
    if isinstance(original, _StandardOutput):  # a command run by another: already guarded
        yield
        return
    guarded = _StandardOutput(original)
    sys.stdout = cast(TextIO, guarded)
    try:
        yield
    finally:
        sys.stdout = original
        guarded.flush()
