"""Energy over a window from a GPU's samples, and the resolution below which a window says it is
not resolved instead of 0 (capture/read/gpu_energy.py)."""

from __future__ import annotations

import pytest

from vkscope.capture.read.gpu_energy import (
    change_points,
    counter_energy,
    power_energy,
    resolution_ns,
)

MS = 1_000_000


def test_the_resolution_is_how_often_the_value_changed_not_how_often_it_was_read() -> None:
    # Read every 5 ms, updated every 100 ms (as NVML's energy total is on some GPUs).
    reads = [(t * 5 * MS, float(t // 20)) for t in range(200)]
    changes = change_points(reads)
    assert [t for t, _ in changes][:3] == [0, 100 * MS, 200 * MS]
    assert resolution_ns([t for t, _ in changes], 5 * MS) == 100 * MS
    # Changing at every read: the sampling interval.
    assert resolution_ns([t * 5 * MS for t in range(10)], 5 * MS) == 5 * MS
    assert resolution_ns([0, MS], 5 * MS) is None  # two changes: no rate to speak of


def test_a_running_total_is_interpolated_between_its_updates() -> None:
    # 1 mJ per ms, the total updated every 10 ms and read every 2 ms.
    reads = [(t * 2 * MS, float((t * 2 // 10) * 10)) for t in range(100)]
    assert counter_energy(reads, 20 * MS, 70 * MS) == pytest.approx(50.0)
    assert counter_energy(reads, 25 * MS, 26 * MS) == pytest.approx(1.0)
    assert counter_energy(reads, -MS, 10 * MS) is None  # before the first sample


def test_power_is_integrated_linearly_between_samples() -> None:
    reads = [(0, 100.0), (10 * MS, 100.0), (20 * MS, 200.0)]
    assert power_energy(reads, 0, 10 * MS) == pytest.approx(1000.0)  # 100 W x 10 ms = 1 J
    assert power_energy(reads, 10 * MS, 20 * MS) == pytest.approx(1500.0)
    assert power_energy(reads, 5 * MS, 15 * MS) == pytest.approx(500.0 + 625.0)
    assert power_energy(reads, 15 * MS, 25 * MS) is None  # past the last sample
