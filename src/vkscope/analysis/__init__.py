"""GPU time analysis of a capture, streamed from its SQLite file one frame at a time.

- frames.py: each frame's workloads by queue, with spans (spans.py: sum of costs, busy span,
  idle gaps, overlap);
- summary.py: the costliest workloads and GPU time by label subtree (self and inclusive);
- overlap.py: a `none` capture against a serialized one, the overlap serialization removed;
- report.py: the report, through rows.py, writers.py and text.py (CSV, JSON, Markdown) or its
  terminal writer; query.py: SQL over a capture.

The command line (`vkscope report`, `query`, `overlap`) is in vkscope/cli/.
"""

from __future__ import annotations

from .frames import FrameKey, FrameWork, QueueWork, read_frames
from .overlap import FramePair, OverlapError, OverlapTotals, QueuePair, WorkloadPair, compare
from .selection import Selection, SelectionError
from .spans import Span, span_of
from .summary import Costliest, LabelRow, LabelTree, Summary
from .timing_info import TimingInfo, timing_info

__all__ = [
    "Costliest",
    "FrameKey",
    "FramePair",
    "FrameWork",
    "LabelRow",
    "LabelTree",
    "OverlapError",
    "OverlapTotals",
    "QueuePair",
    "QueueWork",
    "Selection",
    "SelectionError",
    "Span",
    "Summary",
    "TimingInfo",
    "WorkloadPair",
    "compare",
    "read_frames",
    "span_of",
    "timing_info",
]
