"""The timing fields of ANNEX messages, kept in their own workload_instances columns.

With timing on, every instance gets an annex holding its GPU times and how they were taken
(docs/protocol.md, "Timing"). Those five fields are taken out of the merged annex object and
stored as columns, so that analyses can sum and sort GPU times in SQL without parsing JSON, and
so that an instance whose annex says nothing else has no annex JSON at all.
"""

from __future__ import annotations

from typing import Any, Final

TIMING_FIELDS: Final = ("gpu_begin_ns", "gpu_end_ns", "timing", "timing_reason", "serialization")
TIMING_COLUMNS: Final = ", ".join(TIMING_FIELDS)

# Column values in TIMING_FIELDS order.
TimingColumns = tuple[int | None, int | None, str | None, str | None, str | None]
NO_TIMING: Final[TimingColumns] = (None, None, None, None, None)

TIMING_KEYS: Final = frozenset(TIMING_FIELDS)
_I64_MIN: Final = -(2**63)
_I64_END: Final = 2**63


def take_timing(fields: dict[str, Any]) -> TimingColumns:
    """Removes the timing fields from merged annex fields and returns them as column values.

    A time the column cannot hold exactly (not an integer, past i64) is stored as unknown, and
    so is a text field that is not text: a wrong value would be worse than none. The annexes
    table keeps what was sent (only_timing). Inlined checks: this runs once per timed instance.
    """
    if not (fields.keys() & TIMING_KEYS):
        return NO_TIMING
    pop = fields.pop
    begin, end = pop("gpu_begin_ns", None), pop("gpu_end_ns", None)
    timing, reason, mode = (
        pop("timing", None),
        pop("timing_reason", None),
        pop("serialization", None),
    )
    return (
        begin if type(begin) is int and _I64_MIN <= begin < _I64_END else None,
        end if type(end) is int and _I64_MIN <= end < _I64_END else None,
        timing if type(timing) is str else None,
        reason if type(reason) is str else None,
        mode if type(mode) is str else None,
    )


def only_timing(fields: dict[str, Any]) -> bool:
    """Whether an annex holds timing fields alone, each of which its column holds exactly.

    Such an annex is not kept in the annexes table: with timing on there is one per instance,
    and its instance's columns say all it said.
    """
    if not fields.keys() <= TIMING_KEYS:
        return False
    get = fields.get
    begin, end = get("gpu_begin_ns"), get("gpu_end_ns")
    timing, reason, mode = get("timing"), get("timing_reason"), get("serialization")
    return (
        (begin is None or (type(begin) is int and _I64_MIN <= begin < _I64_END))
        and (end is None or (type(end) is int and _I64_MIN <= end < _I64_END))
        and (timing is None or type(timing) is str)
        and (reason is None or type(reason) is str)
        and (mode is None or type(mode) is str)
    )


def timing_fields(columns: tuple[Any, ...]) -> dict[str, Any]:
    """Column values back as annex fields, for merging a later annex over them.

    A NULL column comes back as no field: absent and null end up as the same NULL either way.
    """
    return {
        name: value for name, value in zip(TIMING_FIELDS, columns, strict=True) if value is not None
    }
