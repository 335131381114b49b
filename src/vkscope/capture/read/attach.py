"""Several captures in one SQL connection, for work that joins across them (vkscope diff).

A `ScratchDatabase` is a connection whose own database is a private temporary file, where the
work keeps its results. Each capture is checked by open_capture first (so a bad file gets the
same specific error as anywhere else), then ATTACHed read-only under a schema name and presented
in the current schema's shape, like a capture opened alone (compat.py). SQL of one's own names
its tables through `AttachedCapture.table()`.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from ..errors import CaptureError, CorruptCaptureError, JournalError, from_sqlite
from .compat import indexed_workloads, present_current_schema
from .present import attach_capture
from .reader import open_capture
from .records import CaptureMeta


@dataclass(frozen=True, slots=True)
class AttachedCapture:
    path: Path
    schema: str  # its schema name in the scratch connection
    meta: CaptureMeta
    workloads: str  # its workloads table, indexed by (process, tag_id), one row per tagID
    views: Mapping[str, str]  # table -> the view presenting it in the current shape

    def table(self, name: str) -> str:
        """The name to use in SQL for one of the capture's tables."""
        if name == "workloads":
            return self.workloads
        return self.views.get(name, f"{self.schema}.{name}")


class ScratchDatabase:
    """A private temporary database with captures attached to it read-only.

    Use as a context manager, or call close(). `db` is the connection, for the work's own tables
    and queries.
    """

    def __init__(self) -> None:
        self.db = sqlite3.connect("", isolation_level=None, check_same_thread=False)

    def __enter__(self) -> ScratchDatabase:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        self.db.close()

    def attach(self, path: Path | str, schema: str) -> AttachedCapture:
        """Attaches the capture at `path` as `schema`; raises a CaptureError saying what is
        wrong with a file that is not a readable capture."""
        path = Path(path)
        if not schema.isidentifier():
            raise ValueError(f"not a schema name: {schema!r}")
        with open_capture(path) as capture:
            meta, checked, uri = capture.meta, capture.schema_version, capture.uri
        try:
            # A capture not finalized is attached with its journal built (as {schema}_file).
            built = attach_capture(self.db, uri, schema)
            source = f"{schema}_file" if built else schema
            version = self.db.execute(f"PRAGMA {source}.user_version").fetchone()[0]
            if version != checked:
                raise CaptureError(path, "changed while it was being read")
            views = present_current_schema(self.db, version, schema)
            workloads = indexed_workloads(self.db, schema)
        except (sqlite3.Error, UnicodeDecodeError) as exc:
            raise from_sqlite(path, exc) from None
        except JournalError as exc:
            raise CorruptCaptureError(path, f"damaged: {exc}") from None
        return AttachedCapture(path, schema, meta, workloads, views)
