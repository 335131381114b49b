"""Which GPU time of a workload instance is usable: the one rule every reader applies.

The layer's timing annex gives an instance a GPU begin and end on its device's clock
(Device.clock_domain). Its GPU time is end - begin when both are known integers and the end is
not before the begin; otherwise it has none (untimed, ambiguous, or a reading that cannot be
trusted), and sums, spans, shares, rankings and comparisons leave it out. The Python form is for
records, the SQL form for the aggregates SQLite computes; both say the same.
"""

from __future__ import annotations


def usable_gpu_ns(begin: int | None, end: int | None) -> int | None:
    """The GPU time of an instance with these times, or None when it has no usable one."""
    if type(begin) is not int or type(end) is not int or end < begin:
        return None
    return end - begin


def usable_sql(begin: str, end: str) -> str:
    """SQL that is true where the columns `begin` and `end` make a usable GPU time."""
    return f"(typeof({begin}) = 'integer' AND typeof({end}) = 'integer' AND {end} >= {begin})"


def gpu_ns_sql(begin: str, end: str) -> str:
    """SQL for the usable GPU time of `begin` and `end`, NULL where there is none."""
    return f"CASE WHEN {usable_sql(begin, end)} THEN {end} - {begin} END"
