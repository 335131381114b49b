"""Capturing what the vkscope layer streams, and reading it back.

Two directions, one file format (schema.py, errors.py):

- write/: `CaptureServer` listens for the layer and writes a capture file (one SQLite database
  per capture; docs/capture-schema.md): the wire decoder, the rows of each commit, the journal
  and the build that turns it into tables when the capture is finalized.
- read/: `open_capture` reads one back. The read side alone owns the schema's SQL, the rules for
  every older schema version, a workload's identity, which GPU time is usable and the joins
  across frames; it hands out typed records (read/records.py) and a few aggregate queries as
  functions (read/queries.py).

The write side never imports the read side; the read side uses only the write side's journal
build, to present a capture that was never finalized (tests/test_host_structure.py). What the
read side stores in a finalized capture for its later readers (the instance columns,
read/column_store.py) is handed to the capture server as its finishing step.
"""

from __future__ import annotations

from .errors import (
    CaptureError,
    CaptureNotFoundError,
    CorruptCaptureError,
    EmptyCaptureError,
    NewerCaptureError,
    NotACaptureError,
    NotSQLiteError,
)
from .read.column_store import store_instance_columns
from .read.distributions import IdentityDistribution, distributions
from .read.quantiles import Distribution
from .read.reader import Capture, open_capture
from .read.records import (
    CaptureMeta,
    CommandBufferCounters,
    Device,
    Diagnostic,
    Frame,
    Process,
    Queue,
    WorkloadInstance,
)
from .read.warmup import WarmUp, warmup_frames
from .schema import SCHEMA_VERSION
from .write.server import CaptureServer, CaptureServerError, CaptureSummary
from .write.store import Counters

__all__ = [
    "SCHEMA_VERSION",
    "Capture",
    "CaptureError",
    "CaptureMeta",
    "CaptureNotFoundError",
    "CaptureServer",
    "CaptureServerError",
    "CaptureSummary",
    "CommandBufferCounters",
    "CorruptCaptureError",
    "Counters",
    "Device",
    "Diagnostic",
    "Distribution",
    "EmptyCaptureError",
    "Frame",
    "IdentityDistribution",
    "NewerCaptureError",
    "NotACaptureError",
    "NotSQLiteError",
    "Process",
    "Queue",
    "WarmUp",
    "WorkloadInstance",
    "distributions",
    "open_capture",
    "store_instance_columns",
    "warmup_frames",
]
