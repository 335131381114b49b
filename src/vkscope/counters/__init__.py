"""Counters: what vkscope can count per workload (catalog.py), the `counters` setting checked
against the devices before an application starts (selection.py), and derived metrics
(derived.py). docs/counters.md describes them."""

from __future__ import annotations

from .catalog import COLLECTED, Counter, family_counters
from .selection import CounterError, check_counters, parse_counters

__all__ = [
    "COLLECTED",
    "Counter",
    "CounterError",
    "check_counters",
    "family_counters",
    "parse_counters",
]
