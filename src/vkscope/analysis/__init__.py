"""GPU time analysis of a capture, streamed from its SQLite file one frame at a time.

- frames.py: each frame's workloads by queue, with spans (spans.py: sum of costs, busy span,
  idle gaps, overlap);
- summary.py: the costliest workloads and GPU time by label subtree (self and inclusive);
- overlap.py: a `none` capture against a serialized one, the overlap serialization removed;
- rows.py, writers.py, text.py: the report's tables in CSV, JSON, Markdown (report.py adds the
  terminal); query.py: SQL over a capture; commands.py: the command-line entry points.
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
