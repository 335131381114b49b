"""Whether a reader that sums up every instance may take them from the columns the capture
stored when it was finalized (stored_columns.py) and sum them up with numpy, rather than one
instance at a time in Python: it may where the capture has them, with every counter it wants,
and the `fleet` extra (pyarrow, numpy) is installed. Both ways give the same answer
(tests/test_report_summary.py); the columns are an order of magnitude quicker on a long capture
(docs/bench/report-summary.md)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Final

from .. import schema
from .reader import Capture

META_KEY: Final = "instance_columns"  # the meta row that says what the stored columns hold


def stored_columns_meta(capture: Capture) -> Any:
    """The meta row that says what `capture`'s stored columns hold, as read; None where it has
    none (a schema before them, or a capture never finalized)."""
    if capture.schema_version < schema.INSTANCE_COLUMNS_SINCE:
        return None
    return capture.meta.extra.get(META_KEY)


def stored_columns_for(capture: Capture, counters: Sequence[str] = ()) -> bool:
    """True where `capture`'s stored columns hold `counters` and numpy and pyarrow import.
    Raises CorruptCaptureError where the capture says it has them in words that do not parse.
    A capture without them imports no Arrow (the report's read one at a time needs none)."""
    if stored_columns_meta(capture) is None:
        return False
    try:
        import numpy  # noqa: F401
        import pyarrow  # noqa: F401

        from .stored_columns import stored_meta
    except ImportError:
        return False
    meta = stored_meta(capture)
    return meta is not None and set(counters) <= set(meta.counters)
