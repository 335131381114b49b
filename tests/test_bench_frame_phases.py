"""bench/frame_phases.py: the program's frame log, and what a budgeted run's measured frames cost
beside its baseline frames, phase by phase, on a frame time that drifts."""

from __future__ import annotations

from pathlib import Path

import pytest

from bench.frame_phases import cost_split, medians, read_frame_log

RECORD_PER_WORKLOAD = 0.7
WAIT_PER_WORKLOAD = 0.6


def budgeted_run(frames: int, drift_per_frame: float) -> tuple[dict[int, tuple[str, int]], dict]:
    """A run whose baseline runs (5 frames) come every 30 frames, the frames between them
    measuring 40 workloads, with a recording that drifts by `drift_per_frame` µs a frame."""
    states: dict[int, tuple[str, int]] = {}
    phases: dict[int, dict[str, float]] = {}
    for n in range(frames):
        baseline = n % 30 < 5
        count = 0 if baseline else 40
        states[n] = ("baseline" if baseline else "measured", count)
        phases[n] = {
            "record": 400 + drift_per_frame * n + RECORD_PER_WORKLOAD * count,
            "submit": 20.0,
            "wait": 1200 + WAIT_PER_WORKLOAD * count + (3 if n % 2 else -3),
        }
    return states, phases


def test_the_split_finds_each_phase_s_cost_a_workload_through_a_drift() -> None:
    states, phases = budgeted_run(600, drift_per_frame=0.5)
    split = cost_split(states, phases, skip=60)
    assert split is not None
    assert split["pairs"] == 18 and split["measured"] == 40
    assert split["record"]["per_workload_us"] == pytest.approx(RECORD_PER_WORKLOAD, abs=0.05)
    assert split["wait"]["per_workload_us"] == pytest.approx(WAIT_PER_WORKLOAD, abs=0.05)
    assert split["submit"]["added_us"] == pytest.approx(0.0)
    assert split["frame"]["per_workload_us"] == pytest.approx(1.3, abs=0.1)
    # The whole run's measured frames over its baseline frames count the drift: the measured
    # frames come later in each stretch between baseline runs.
    measured = [p["record"] for n, p in phases.items() if states[n][0] == "measured"]
    base = [p["record"] for n, p in phases.items() if states[n][0] == "baseline"]
    whole = (sum(measured) / len(measured) - sum(base) / len(base)) / 40
    assert whole - RECORD_PER_WORKLOAD > 0.15


def test_no_split_without_baseline_runs_next_to_measured_frames() -> None:
    states = {n: ("measured", 10) for n in range(100)}
    phases = {n: {"record": 1.0, "submit": 1.0, "wait": 1.0} for n in range(100)}
    assert cost_split(states, phases, skip=0) is None


def test_the_frame_log_is_read_and_checked(tmp_path: Path) -> None:
    log = tmp_path / "frames.txt"
    log.write_text("frame record_us submit_us wait_us\n0 10.5 2.0 100.0\n1 11.5 3.0 300.0\n")
    phases = read_frame_log(log)
    assert phases == {
        0: {"record": 10.5, "submit": 2.0, "wait": 100.0},
        1: {"record": 11.5, "submit": 3.0, "wait": 300.0},
    }
    both = medians(phases, skip=0)
    assert both["frame"] == 213.5 and both["wait"] == 200.0
    assert both["wait_iqr"] > both["record_iqr"] > 0
    assert medians(phases, skip=1) == {}  # one frame: no scatter to tell
    log.write_text("frame time\n0 1\n")
    with pytest.raises(RuntimeError, match="not a frame log"):
        read_frame_log(log)
