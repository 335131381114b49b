"""What the layer does when the application forks or dies of a fault (README, "Signals and
faults"), with a small C application (support/apps/fault_app.c) under `vkscope run`, each of its
frames one buffer fill and one submission (frame_submits=1):

- a child forked after the parent created its Vulkan instance, which creates its own instance
  and submits frames, is captured as a process of its own beside the parent;
- an application that dies of SIGSEGV, SIGBUS, SIGILL, SIGFPE or SIGABRT twenty frames in keeps
  those frames in the capture, with the exit status it has without vkscope, and its own handler
  for the signal still runs where it has one.
"""

from __future__ import annotations

import signal
import subprocess
from pathlib import Path

import pytest

from harness.env import base_env, run, vkscope_cli
from vkscope.capture import open_capture

pytestmark = pytest.mark.vulkan

FRAMES = 20


def capture_run(
    cap: Path, *app: str | Path, settings: tuple[str, ...] = ()
) -> subprocess.CompletedProcess[str]:
    cmd = [vkscope_cli(), "run", "-o", cap, "--no-report", "--no-trace", "--no-html"]
    cmd += ["-s", "frame_submits=1", *(a for s in settings for a in ("-s", s)), "--", *app]
    return run(cmd, base_env(), cwd=cap.parent)


def test_a_child_forked_after_the_instance_is_captured_as_its_own_process(
    fault_app: Path, tmp_path: Path
) -> None:
    cap = tmp_path / "fork.vkscope"
    res = capture_run(cap, fault_app, "fork", "40")
    assert res.returncode == 0, res.stderr
    said = dict(line.split(" ", 1) for line in res.stdout.splitlines())
    parent, child = (int(said[who].split()[0]) for who in ("parent", "child"))
    assert f"capture {cap} (complete)" in res.stderr, res.stderr
    with open_capture(cap) as capture:
        assert capture.meta.status == "complete"
        processes = {p.pid: p for p in capture.processes()}
        assert set(processes) == {parent, child}
        assert {p.state for p in processes.values()} == {"goodbye"}
        assert {p.name for p in processes.values()} == {"fault_app"}
        fills: dict[int, int] = {}
        by_id = {p.process: p.pid for p in processes.values()}
        for w in capture.workloads():
            assert w.type == "buffer_transfer"
            fills[by_id[w.process]] = fills.get(by_id[w.process], 0) + 1
        assert fills == {parent: 40, child: 40}
        assert capture.meta.dropped == 0 and capture.meta.bad_messages == 0


def without_vkscope(fault_app: Path, *args: str) -> int:
    """The application's exit status as a shell says it (128 + N for a signal), alone."""
    res = run([fault_app, *args], base_env())
    return 128 - res.returncode if res.returncode < 0 else res.returncode


@pytest.mark.parametrize(
    ("fault", "own"),
    [("segv", False), ("bus", False), ("ill", False), ("fpe", False), ("abrt", False),
     ("segv", True), ("abrt", True)],
)  # fmt: skip
def test_a_fatal_signal_keeps_the_frames_before_it(
    fault_app: Path, tmp_path: Path, fault: str, own: bool
) -> None:
    args = ["crash", fault, str(FRAMES), *(["own"] if own else [])]
    expected = without_vkscope(fault_app, *args)
    assert expected == (42 if own else 128 + getattr(signal, f"SIG{fault.upper()}")) or (
        fault == "ill" and expected == 128 + signal.SIGTRAP  # __builtin_trap off x86
    )
    cap = tmp_path / f"{fault}.vkscope"
    res = capture_run(cap, fault_app, *args)
    assert res.returncode == expected, res.stderr
    assert ("its own handler ran" in res.stdout) == own, res.stdout
    assert f"capture {cap} (incomplete)" in res.stderr, res.stderr
    with open_capture(cap) as capture:
        (process,) = capture.processes()
        assert process.state == "disconnected"  # no GOODBYE: it died
        assert [w.type for w in capture.workloads()] == ["buffer_transfer"] * FRAMES
        assert len(capture.frames()) == FRAMES
        assert capture.meta.dropped == 0 and capture.meta.bad_messages == 0
