"""Comparing two captures: workloads matched by stable identity, cost changes judged against a
threshold and the captures' own noise, and an exit code a CI can gate on (docs/diff.md)."""

from __future__ import annotations

from .compare import Diff, DiffInputError, Identity, Row
from .run import BAD_INPUT, NO_REGRESSION, REGRESSION, run_diff
from .stats import Rule

__all__ = [
    "BAD_INPUT",
    "NO_REGRESSION",
    "REGRESSION",
    "Diff",
    "DiffInputError",
    "Identity",
    "Row",
    "Rule",
    "run_diff",
]
