"""What the layer does when the application forks (README, "Signals and faults"), with a small C
application (support/apps/fault_app.c) under `vkscope run`, each of its frames one buffer fill and
one submission (frame_submits=1): a child forked after the parent created its Vulkan instance,
which creates its own instance and submits frames, is captured as a process of its own beside the
parent.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from harness.env import base_env, run, vkscope_cli
from vkscope.capture import open_capture

pytestmark = pytest.mark.vulkan

APP_SOURCE = Path(__file__).parent / "support" / "apps" / "fault_app.c"


@pytest.fixture(scope="session")
def fault_app(tmp_path_factory: pytest.TempPathFactory) -> Path:
    exe = tmp_path_factory.mktemp("fault_app") / "fault_app"
    subprocess.run(
        ["cc", "-std=c11", "-O1", "-Wall", "-Wextra", "-Werror", "-o", str(exe),
         str(APP_SOURCE), "-lvulkan"],
        check=True,
    )  # fmt: skip
    return exe


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
