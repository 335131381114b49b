"""How a workload's values over frames are summed up: count, min, p50, p90, p99 and max.

Percentiles interpolate linearly between the two closest ranks (the "type 7" rule of R and
numpy's default): the p-th percentile of n sorted values v is v[h] + (h - floor(h)) *
(v[h+1] - v[h]) at h = (n - 1) * p / 100. So p50 is the usual median (the mean of the two
middle values for an even count, as `vkscope diff` takes it), and with few frames the high
percentiles lie between the largest values rather than on the largest one: p99 of 5 frames is
0.96 of the way from the 4th to the 5th value.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final

import msgspec

PERCENTILES: Final = (50, 90, 99)


def percentile(ordered: Sequence[int | float], p: int) -> float:
    """The p-th percentile (p a whole number from 0 to 100) of values sorted in ascending order
    (not empty). Computed as (100 v[lo] + r (v[lo+1] - v[lo])) / 100 with (n - 1) p = 100 lo + r,
    so that integer values give the float nearest the exact result (3049.2, not 3049.2000001)."""
    lo, r = divmod((len(ordered) - 1) * p, 100)
    if not r:
        return float(ordered[lo])
    return (100 * ordered[lo] + r * (ordered[lo + 1] - ordered[lo])) / 100


class Distribution(msgspec.Struct, frozen=True, gc=False):
    """One value (GPU time in ns, or a counter) of one workload over the frames it has it in."""

    count: int
    min: int | float
    p50: float
    p90: float
    p99: float
    max: int | float

    @classmethod
    def of(cls, values: list[int] | list[float]) -> Distribution | None:
        """The distribution of `values` (sorted in place); None for no values."""
        if not values:
            return None
        values.sort()
        return cls(
            len(values), values[0], percentile(values, 50), percentile(values, 90),
            percentile(values, 99), values[-1],
        )  # fmt: skip

    @property
    def spread(self) -> float:
        """p90 over p50, less one: how much slower its slow frames are than its typical one
        (0 when the median is 0)."""
        return self.p90 / self.p50 - 1.0 if self.p50 else 0.0
