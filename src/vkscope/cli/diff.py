"""`vkscope diff BASE NEW`: compares two captures workload by workload (diff/ does the work);
exit 1 on a regression, 2 on bad input."""

from __future__ import annotations

from ..diff.options import configure, run
from .command import Command

COMMAND = Command(
    name="diff",
    help="compare two captures workload by workload; exit 1 on a regression",
    description="Matches NEW's workloads to BASE's by stable identity (docs/diff.md), lists "
    "added and removed workloads and cost changes beyond a noise-aware threshold; exits 1 on "
    "a regression, 2 on bad input.",
    configure=configure,
    run=run,
)
