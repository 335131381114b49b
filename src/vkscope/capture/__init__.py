"""Capturing what the vkscope layer streams, and reading it back.

`CaptureServer` listens for the layer and writes a capture file (one SQLite database per
capture; docs/capture-schema.md); `open_capture` reads one back.
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
from .reader import Capture, open_capture
from .records import (
    CaptureMeta,
    CommandBufferCounters,
    Device,
    Diagnostic,
    Frame,
    Process,
    Queue,
    WorkloadInstance,
)
from .schema import SCHEMA_VERSION
from .server import CaptureServer, CaptureServerError, CaptureSummary
from .store import Counters

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
    "EmptyCaptureError",
    "Frame",
    "NewerCaptureError",
    "NotACaptureError",
    "NotSQLiteError",
    "Process",
    "Queue",
    "WorkloadInstance",
    "open_capture",
]
