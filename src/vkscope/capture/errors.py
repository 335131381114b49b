"""Why a file cannot be read as a capture; each kind is its own class so callers can tell them
apart, and each message names the file and what to do about it."""

from __future__ import annotations

import sqlite3
from pathlib import Path


class CaptureError(Exception):
    """A capture file could not be read."""

    def __init__(self, path: Path | str, message: str) -> None:
        super().__init__(f"{path}: {message}")
        self.path = Path(path)
        self.reason = message


class CaptureNotFoundError(CaptureError):
    """There is no file at that path."""


class EmptyCaptureError(CaptureError):
    """The file has no bytes at all."""


class NotSQLiteError(CaptureError):
    """The file is not an SQLite database (so not a capture either)."""


class NotACaptureError(CaptureError):
    """The file is an SQLite database, but not one vkscope wrote."""


class CorruptCaptureError(CaptureError):
    """The file is a capture, but truncated or damaged."""


class JournalError(ValueError):
    """A journal row that cannot be read back: the file was damaged (raised while building it,
    by the writer finalizing or a reader presenting a capture not finalized)."""


class NewerCaptureError(CaptureError):
    """The file was written by a newer vkscope, with a schema this one does not know."""

    def __init__(self, path: Path | str, file_version: int, supported: int) -> None:
        super().__init__(
            path,
            f"written by a newer vkscope (schema {file_version}, this one reads up to "
            f"{supported}); upgrade vkscope to read it",
        )
        self.file_version = file_version
        self.supported = supported


def from_sqlite(
    path: Path | str, exc: sqlite3.Error | sqlite3.Warning | UnicodeDecodeError
) -> CaptureError:
    """What an error SQLite raised while reading the capture at `path` says about the file."""
    if isinstance(exc, UnicodeDecodeError):  # Python's sqlite3 decoding a TEXT value
        return CorruptCaptureError(path, "damaged: it holds text that is not UTF-8")
    text = str(exc)
    if "not a database" in text:
        return NotSQLiteError(path, f"not a vkscope capture: SQLite says {text!r}")
    if "malformed" in text or "corrupt" in text or "disk I/O" in text:
        return CorruptCaptureError(path, f"truncated or damaged: SQLite says {text!r}")
    return CaptureError(path, f"cannot read: SQLite says {text!r}")
