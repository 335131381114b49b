"""A private temporary database, for a reader's own results that may outgrow memory (the verdicts
of `vkscope diff`): SQLite keeps it in a temporary file, and its sorts spill to temporary files
rather than grow in memory; worker threads make the big sorts faster without raising the peak
much (docs/bench/diff-memory.md). It holds no capture: captures are read through open_capture.
"""

from __future__ import annotations

import os
import sqlite3


def scratch_database() -> sqlite3.Connection:
    """A new connection to an empty private temporary database, in autocommit mode."""
    db = sqlite3.connect("", isolation_level=None, check_same_thread=False)
    db.execute("PRAGMA temp_store=FILE")
    db.execute(f"PRAGMA threads={min(4, os.cpu_count() or 1)}")
    return db
