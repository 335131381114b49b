"""Comparing two captures and printing the result: `run_diff` and its exit codes (the command
line is cli/diff.py)."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Final, Literal, TextIO

from rich.console import Console

from .compare import Diff, DiffInputError
from .output import render_table, write_json
from .stats import Rule

NO_REGRESSION: Final = 0
REGRESSION: Final = 1
BAD_INPUT: Final = 2

Format = Literal["table", "json"]


def run_diff(
    base: Path | str,
    new: Path | str,
    threshold_pct: float = 5.0,
    min_frames: int = 3,
    fmt: Format = "table",
    console: Console | None = None,
    *,
    noise_k: float = 3.0,
    limit: int | None = 20,
    stderr: TextIO | None = None,
    metric: str = "gpu_ns",
    warmup: int | None = None,
    normalize_clock: bool = False,
) -> int:
    """Compares capture NEW against capture BASE and prints the result.

    Returns 0 (no regression), 1 (a matched workload, or the GPU time per frame, got slower
    beyond the threshold and the noise) or 2 (bad input: the reason is written to `stderr`).
    Tables go to `console`; JSON is written to `console.file` as it is, without rich markup.
    `limit` caps the rows of each table (None or 0: all); JSON always lists everything.
    `metric` is what is compared: `gpu_ns`, or a counter (docs/counters.md), whose values then
    stand in the places of GPU times (and in the `_ns` fields of the JSON). Warm-up frames are
    left out of both captures (capture/read/warmup.py; `warmup`: the first N frames instead).
    `normalize_clock` scales the new capture's GPU times to the base's graphics clock (clocks.py).
    """
    err = stderr if stderr is not None else sys.stderr
    console = console if console is not None else Console()

    def bad(message: str) -> int:
        print(f"vkscope diff: {message}", file=err)
        return BAD_INPUT

    if fmt not in ("table", "json"):
        return bad(f"unknown format {fmt!r} (table or json)")
    if not threshold_pct >= 0:  # also refuses NaN
        return bad(f"the threshold must be a percentage of 0 or more, not {threshold_pct}")
    if not noise_k >= 0:
        return bad(f"the noise multiple must be 0 or more, not {noise_k}")
    if min_frames < 1:
        return bad(f"the minimum number of frames must be at least 1, not {min_frames}")
    if limit == 0:
        limit = None  # as on the command line: no limit
    if limit is not None and limit < 0:
        return bad(f"the row limit must be 0 or more, not {limit}")
    rule = Rule(threshold_pct=threshold_pct, noise_k=noise_k, min_frames=min_frames)
    try:
        diff = Diff(base, new, rule, metric, warmup, normalize_clock=normalize_clock)
    except DiffInputError as exc:
        return bad(str(exc))
    with diff:
        code = REGRESSION if diff.regressed else NO_REGRESSION
        if fmt == "json":
            write_json(diff, console.file, code)
            console.file.flush()
        else:
            render_table(diff, console, limit)
    return code
