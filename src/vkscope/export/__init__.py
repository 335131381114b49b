"""Exports of a capture to other tools' formats: Perfetto traces (docs/perfetto.md)."""

from __future__ import annotations

from .perfetto import UNTIMED_DURATION_NS, export_perfetto
from .perfetto_model import ExportSummary, MergeSummary, PerfettoExportError

__all__ = [
    "UNTIMED_DURATION_NS",
    "ExportSummary",
    "MergeSummary",
    "PerfettoExportError",
    "export_perfetto",
]
