"""`vkscope run --budget P%`: each captured frame measures only the share of its workloads that
the layer's controller planned for it, and leaves the others with no query, barrier or handover
at all; a bad budget is refused before the application starts."""

from __future__ import annotations

import sqlite3
from collections import Counter
from pathlib import Path

import pytest

from harness.env import base_env, run, vkscope_cli
from vkscope.capture import open_capture
from vkscope.capture.read.coverage import SEEN_ONCE, identity_coverage

BUDGET_REASON = "left out of this frame by the cost budget"
WORKLOADS = 22  # game_scale's smallest frame of every kind, as tests/test_game_scale.py runs it


def vkscope(*args: str | Path, cwd: Path, env: dict[str, str] | None = None) -> tuple[int, str]:
    res = run([vkscope_cli(), *args], env or base_env(), cwd=cwd)
    return res.returncode, res.stdout + res.stderr


def capture(
    tmp_path: Path,
    workload: Path,
    budget: str,
    *options: str,
    frames: int = 40,
    iterations: int = 2560,
) -> Path:
    cap = tmp_path / f"budget-{budget.rstrip('%')}.vkscope"
    code, out = vkscope(
        "run", "-o", cap, "--no-report", "--no-trace", "--no-html", "--budget", budget,
        "-s", "frame_submits=1", *options, "--", workload, "--scenario", "game_scale",
        "--workloads", str(WORKLOADS), "--frames", str(frames),
        "--compute-iterations", str(iterations), cwd=tmp_path,
    )  # fmt: skip
    assert code == 0, out
    return cap


def rows(cap: Path, sql: str) -> list[tuple[object, ...]]:
    with sqlite3.connect(cap) as db:
        return db.execute(sql).fetchall()


# The instance's frame, whether the budget left it out, its timing and its counters' reason.
_INSTANCES = """
SELECT s.frame, i.timing, i.timing_reason, i.serialization,
       json_type(i.annex, '$.counters'), json_extract(i.annex, '$.counters_reason')
FROM workload_instances i JOIN submits s ON s.id = i.submit_row ORDER BY i.id
"""


@pytest.mark.parametrize(
    ("options", "words"),
    [
        (("--timing", "queue", "--budget", "abc"), "expected a percentage such as 5% or 2.5"),
        (("--timing", "queue", "--budget", "-1"), "expected a percentage such as 5% or 2.5"),
        (("--timing", "queue", "--budget", "101%"), "expected a percentage from 0% to 100%"),
        (("--timing", "queue", "--budget", "5%%"), "expected a percentage such as 5% or 2.5"),
        (("--timing", "queue", "--budget", "1e2"), "expected a percentage such as 5% or 2.5"),
        (("--timing", "queue", "-s", "budget=nan"), "expected a percentage such as 5% or 2.5"),
        (("--budget", "5%"), "a budget holds what --timing and --counters cost"),
    ],
)
def test_a_bad_budget_is_refused_before_the_application_starts(
    tmp_path: Path, options: tuple[str, ...], words: str
) -> None:
    ran = tmp_path / "ran"
    code, out = vkscope("run", *options, "--", "touch", ran, cwd=tmp_path)
    assert code == 2, out
    assert words in out
    assert "Traceback" not in out
    assert not ran.exists(), "the application started"
    assert not list(tmp_path.glob("*.vkscope"))


def test_a_bad_budget_from_the_environment_is_refused_too(tmp_path: Path) -> None:
    ran = tmp_path / "ran"
    env = {**base_env(), "VK_VKSCOPE_BUDGET": "five"}
    code, out = vkscope("run", "--timing", "queue", "--", "touch", ran, cwd=tmp_path, env=env)
    assert code == 2 and "VK_VKSCOPE_BUDGET (from the environment)" in out, out
    assert not ran.exists()


@pytest.mark.vulkan
def test_each_frame_measures_what_its_controller_planned_and_nothing_else(
    tmp_path: Path, workload: Path
) -> None:
    cap = capture(tmp_path, workload, "5%", "--timing", "queue", "--counters",
                  "pipeline_statistics")  # fmt: skip
    assert rows(cap, "SELECT budget_percent FROM devices") == [(5.0,)]
    frames = rows(
        cap, "SELECT number, state, workloads, measured FROM budget_frames ORDER BY number"
    )
    assert [f[0] for f in frames] == list(range(40)), "one record per captured frame"
    states = [f[1] for f in frames]
    assert states[:12] == ["warmup"] * 2 + ["baseline"] * 10
    assert "measured" in states[12:]
    planned = {f[0]: (f[1], f[2], f[3]) for f in frames}
    measured: Counter[int] = Counter()
    seen: Counter[int] = Counter()
    for frame, timing, reason, serialization, counters, counters_reason in rows(cap, _INSTANCES):
        assert isinstance(frame, int)
        seen[frame] += 1
        if reason == BUDGET_REASON:
            # Left out: nothing was written around it, by any instrument.
            assert (timing, serialization) == ("untimed", "none")
            assert (counters, counters_reason) == ("null", "budget")
        else:
            assert (timing, serialization, counters) == ("ok", "queue", "object"), reason
            measured[frame] += 1
    for frame, (state, workloads, count) in planned.items():
        assert seen[frame] == workloads == WORKLOADS
        assert measured[frame] == count, f"frame {frame} ({state})"
        if state != "measured":
            assert count == 0
    assert sum(measured.values()) > 0
    # The program records its command buffer every frame: each frame says what that took, and
    # what the controller took out of the frames' times is a share it fitted (0 to 2).
    recorded = rows(cap, "SELECT recording_ns, recording_share FROM budget_frames")
    assert all(isinstance(ns, int) and ns > 0 for ns, _ in recorded)
    assert all(isinstance(share, float) and 0 <= share <= 2 for _, share in recorded)


@pytest.mark.vulkan
def test_a_budget_of_zero_measures_nothing(tmp_path: Path, workload: Path) -> None:
    cap = capture(tmp_path, workload, "0%", "--timing", "queue", frames=12)
    assert {r[0] for r in rows(cap, "SELECT state FROM budget_frames")} == {"baseline"}
    assert rows(cap, "SELECT DISTINCT timing, timing_reason FROM workload_instances") == [
        ("untimed", BUDGET_REASON)
    ]
    # Idle instruments: every instance still has its annex (the timeline sends it), but timing
    # had nothing to wait for, so no submission got a completion (SUBMIT_DONE).
    assert rows(cap, "SELECT count(*) FROM workload_instances WHERE timing IS NULL") == [(0,)]
    assert rows(cap, "SELECT count(*) FROM submits WHERE cpu_complete_ns IS NOT NULL") == [(0,)]
    base = rows(cap, "SELECT base_ns FROM budget_frames ORDER BY number DESC LIMIT 1")
    assert isinstance(base[0][0], int) and base[0][0] > 0, "the frame's own time is still measured"


@pytest.mark.vulkan
def test_a_hundred_percent_measures_every_frame_and_every_workload(
    tmp_path: Path, workload: Path
) -> None:
    # Frames of long dispatches (about 6 ms on lavapipe). What timing adds to them on lavapipe
    # (serialized work, results read back) can be more than the frame itself on a loaded
    # machine, so 100% need not hold every workload in every frame; it holds some in every
    # measured frame, and every workload within the capture.
    cap = capture(tmp_path, workload, "100", "--timing", "queue", frames=48, iterations=64000)
    frames = [
        (str(state), int(str(count)), int(str(workloads)))
        for state, count, workloads in rows(
            cap, "SELECT state, measured, workloads FROM budget_frames ORDER BY number"
        )
    ]
    assert all(count <= workloads for _, count, workloads in frames)
    measured = [count for state, count, _ in frames if state == "measured"]
    assert measured and min(measured) >= 1, frames
    with open_capture(cap) as c:
        coverage = list(identity_coverage(c))
    assert len(coverage) == WORKLOADS
    assert all(i.measured > 0 for i in coverage), [i for i in coverage if not i.measured]


@pytest.mark.vulkan
def test_workloads_that_change_from_frame_to_frame_are_seen_once_and_never_joined(
    tmp_path: Path, workload: Path
) -> None:
    # The game scenario with --numbered-frames labels each frame "Frame N": every workload under
    # it is an identity of its own frame. Those the budget measured keep their own frame's time,
    # the others say why.
    cap = tmp_path / "game.vkscope"
    code, out = vkscope(
        "run", "-o", cap, "--no-report", "--no-trace", "--no-html", "--timing", "queue",
        "--budget", "100%", "-s", "frame_submits=2", "--", workload, "--scenario", "game",
        "--frames", "16", "--numbered-frames", cwd=tmp_path,
    )  # fmt: skip
    assert code == 0, out
    with open_capture(cap) as capture:
        times = {w.identity: w.gpu_ns for w in capture.workloads() if w.identity is not None}
        coverage = [c for c in identity_coverage(capture) if c.identity.labels[:1] != ()]
    framed = [c for c in coverage if c.identity.labels[0].startswith("Frame ")]
    assert framed
    reasons = set()
    for c in framed:
        assert c.frames == 1, c
        if c.measured:
            assert c.median == times[c.identity], "a value from another frame"
        else:
            reasons.add(c.reason)
    assert reasons == {SEEN_ONCE}, "warmup and baseline frames measure nothing"
    assert any(c.measured for c in framed)
