"""A real lavapipe capture with every kind of workload, timed and counted (the workload program
under `vkscope run`), and such a capture as one whose instance columns were never stored (a
capture killed before it was finalized, or written without pyarrow, is left so)."""

from __future__ import annotations

import shutil
import sqlite3
from pathlib import Path

from harness.env import base_env, run, vkscope_cli
from vkscope.capture import open_capture
from vkscope.capture.read.columnar import stored_columns_for
from vkscope.capture.read.stored_columns import META_KEY


def counted_capture(workload: Path, folder: Path, frames: int) -> Path:
    """Compute, render passes, secondaries and the game scene, `frames` frames, with
    `--timing queue --counters pipeline_statistics`; returns the finished capture."""
    cap = folder / "counted.vkscope"
    res = run(
        [vkscope_cli(), "run", "-o", cap, "--timing", "queue", "--counters",
         "pipeline_statistics", "--no-trace", "--no-html", "--no-report", "--", workload,
         "--scenario", "compute", "--scenario", "renderpass", "--scenario", "secondary",
         "--scenario", "game", "--frames", str(frames), "--quiet"],
        base_env(), cwd=folder,
    )  # fmt: skip
    assert res.returncode == 0, res.stderr
    return cap


def without_stored_columns(path: Path, to: Path) -> Path:
    """A copy of `path` without its stored instance columns; it reads row by row."""
    shutil.copy(path, to)
    with sqlite3.connect(to) as db:
        db.execute("DELETE FROM instance_columns")
        db.execute("DELETE FROM meta WHERE key = ?", (META_KEY,))
    with open_capture(to) as capture:
        assert not stored_columns_for(capture)
    return to
