"""Counters: the `counters` setting checked against the devices before an application starts
(selection.py; the pipeline statistics it offers: vkscope/pipeline_statistics.py), khr counters
(performance_query.py), samplers (samplers.py) and derived metrics (derived.py).
docs/counters.md describes them."""

from __future__ import annotations

from ..pipeline_statistics import COLLECTED, Counter, family_counters
from .selection import CounterError, check_counters, parse_counters

__all__ = [
    "COLLECTED",
    "Counter",
    "CounterError",
    "check_counters",
    "family_counters",
    "parse_counters",
]
