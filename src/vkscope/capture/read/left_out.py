"""Which instances the cost budget left out of their frame (docs/budget.md): the instruments'
`budget` reasons, and the SQL that finds them, over a statement's workload instance `i`. Shared
by the identity streams (queries.py) and the coverage rule (coverage.py)."""

from __future__ import annotations

from typing import Final

from ...protocol import TIMING_REASON

BUDGET_TIMING_REASON: Final = TIMING_REASON["budget"]
BUDGET_COUNTERS_REASON: Final = "budget"

COUNTERS_REASON_SQL: Final = "json_extract(i.annex, '$.counters_reason')"
LEFT_OUT_SQL: Final = (
    f"(coalesce(i.timing_reason = '{BUDGET_TIMING_REASON}', 0) "
    f"OR coalesce({COUNTERS_REASON_SQL} = '{BUDGET_COUNTERS_REASON}', 0))"
)
