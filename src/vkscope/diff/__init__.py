"""Comparing two captures: workloads matched by stable identity, cost changes judged against a
threshold and the captures' own noise, and an exit code a CI can gate on (docs/diff.md)."""

from __future__ import annotations

from .cli import BAD_INPUT, NO_REGRESSION, REGRESSION, command, configure_parser, run_diff
from .compare import Diff, DiffInputError, Identity, Row
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
    "command",
    "configure_parser",
    "run_diff",
]
