"""Copies the write-ahead log into the capture file from a thread of its own.

SQLite's automatic checkpoint runs inside a writer's commit, on the ingest thread, and ends in an
fsync: the ingest stalls on the disk every few megabytes. Here a second connection checkpoints
in the background instead; Python's sqlite3 releases the GIL while SQLite works, so the copying
and the fsync overlap with decoding on the other core.
"""

from __future__ import annotations

import sqlite3
import threading
from pathlib import Path
from typing import Final

INTERVAL_S: Final = 0.25


class Checkpointer:
    def __init__(self, path: Path, interval_s: float = INTERVAL_S) -> None:
        self._path = path
        self._interval_s = interval_s
        self._stop = threading.Event()
        self.error: str | None = None
        self._thread = threading.Thread(target=self._run, name="vkscope-checkpoint", daemon=True)
        self._thread.start()

    def _run(self) -> None:
        try:
            db = sqlite3.connect(self._path, isolation_level=None, check_same_thread=False)
        except sqlite3.Error as exc:
            self.error = str(exc)
            return
        try:
            while not self._stop.wait(self._interval_s):
                # PASSIVE never waits for the writer; whatever it could not copy, the next does.
                db.execute("PRAGMA wal_checkpoint(PASSIVE)").fetchall()
        except sqlite3.Error as exc:
            self.error = str(exc)  # the writer's final checkpoint still folds everything in
        finally:
            db.close()

    def stop(self) -> None:
        self._stop.set()
        self._thread.join()
