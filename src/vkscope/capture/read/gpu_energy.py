"""Energy over a time window from a GPU's samples, and how fine a window the samples resolve.

A GPU gives its energy in one of two ways: a running total (NVML, Intel's hwmon `energy1_input`)
or a power reading (NVML, amdgpu's hwmon). Neither moves at every read: the driver updates it
every few to a hundred milliseconds, whatever the sampling rate. The resolution of a signal is
the median time between the samples at which its value changed (never below the sampling
interval); a window shorter than that is not resolved, and says so rather than giving the
energy of whatever update happened to fall inside it (often none: 0 mJ).

- A running total E is interpolated linearly between the samples where it changed: the energy
  of [b, e] is E(e) - E(b).
- A power reading p is interpolated linearly between samples and integrated over [b, e].

Both need samples on either side of the window; outside them there is no value.
"""

from __future__ import annotations

import bisect
import itertools
import statistics
from collections.abc import Sequence

Points = Sequence[tuple[int, float]]  # (t_ns, value), by time


def change_points(points: Points) -> list[tuple[int, float]]:
    """The first sample of each run of equal values."""
    out: list[tuple[int, float]] = []
    for t, v in points:
        if not out or v != out[-1][1]:
            out.append((t, v))
    return out


def resolution_ns(change_times: Sequence[int], interval_ns: int) -> int | None:
    """The median time between changes, at least the sampling interval; None with fewer than
    three changes (no rate to speak of)."""
    if len(change_times) < 3:
        return None
    gaps = [b - a for a, b in itertools.pairwise(change_times)]
    return max(int(statistics.median(gaps)), interval_ns)


def _at(points: Points, times: list[int], t: int) -> float | None:
    """The linear interpolation of `points` at t; None outside them."""
    if not points or t < times[0] or t > times[-1]:
        return None
    i = bisect.bisect_left(times, t)
    t1, v1 = points[i]
    if t1 == t or i == 0:
        return v1
    t0, v0 = points[i - 1]
    return v0 + (v1 - v0) * (t - t0) / (t1 - t0)


def counter_energy(points: Points, begin: int, end: int) -> float | None:
    """The running total's increase over [begin, end] (its unit), from its change points."""
    changes = change_points(points)
    times = [t for t, _ in changes]
    a, b = _at(changes, times, begin), _at(changes, times, end)
    if a is None or b is None:
        return None
    return max(b - a, 0.0)


def power_energy(points: Points, begin: int, end: int) -> float | None:
    """The integral of power (W) over [begin, end] in mJ, power linear between samples."""
    times = [t for t, _ in points]
    if not points or begin < times[0] or end > times[-1] or end < begin:
        return None
    knots = [begin, *(t for t in times if begin < t < end), end]
    total = 0.0  # W x ns
    previous = _at(points, times, begin)
    assert previous is not None
    for t0, t1 in itertools.pairwise(knots):
        value = _at(points, times, t1)
        assert value is not None
        total += (previous + value) / 2 * (t1 - t0)
        previous = value
    return total * 1e-6  # W x ns = nJ; mJ = 1e6 nJ
