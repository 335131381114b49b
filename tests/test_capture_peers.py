"""Only the user who started a capture may write to it: a process of another local user that
connects to the capture server (an abstract Unix socket has no permissions, a socket path may be
in a folder others can enter, a TCP port on this machine is open to every local user) is closed
unread, counted, and said; the capture stays what its own application made it."""

from __future__ import annotations

import os
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from support.other_user import NOBODY, hostile_command, hostile_connect, need_root

from harness.env import base_env, run, vkscope_cli
from vkscope.capture import CaptureServer, open_capture
from vkscope.capture.write.client import Stream, connect


@pytest.fixture
def open_folder() -> Iterator[Path]:
    """A folder every user may enter and write to, as /tmp itself."""
    with tempfile.TemporaryDirectory(prefix="vkscope-open-", dir="/tmp") as name:
        folder = Path(name)
        folder.chmod(0o1777)
        yield folder


def test_connections_of_another_user_are_refused_unread(tmp_path: Path, open_folder: Path) -> None:
    need_root()
    listen = [
        f"unix:@vkscope-peers-{os.getpid()}-{tmp_path.name}",
        f"unix:{open_folder / 'capture.sock'}",
        "tcp:127.0.0.1:0",
    ]
    with CaptureServer(tmp_path / "c.vkscope", listen) as srv:
        # A socket file takes the server's umask: other users cannot write to it, unless they
        # pass every file's permissions, as root's processes do.
        said = [hostile_connect(a, pass_folders=a.startswith("unix:/")) for a in srv.addresses]
        assert all(out.startswith(("sent", "send failed")) for out in said), said
        s = Stream()
        s.hello(process="game", pid=4321)
        s.device(1, "Test GPU", queues=1)
        s.workload(1, "dispatch", groups=[1, 1, 1])
        s.submit([(1, 0)])
        s.goodbye()
        for address in srv.addresses:  # the capture's own user gets in everywhere
            with connect(address) as sock:
                sock.sendall(s.data())
        deadline = time.monotonic() + 10
        while srv.counters().connections < 3 or srv.counters().open_connections:
            assert time.monotonic() < deadline, srv.counters()
            time.sleep(0.01)
        assert srv.counters().refused_connections == 3
        summary = srv.stop()
    assert summary.status == "complete"
    with open_capture(summary.path) as cap:
        assert cap.meta.refused_connections == 3
        assert cap.meta.bad_messages == 0
        assert [p.state for p in cap.processes()] == ["goodbye"] * 3
        diagnostics = cap.diagnostics()
        assert [d.kind for d in diagnostics] == ["refused_connection"] * 3
        for d, kind in zip(diagnostics, ("unix:pid", "unix:pid", "tcp:127.0.0.1"), strict=True):
            assert d.connection is None and d.reason.startswith(f"connection refused: {kind}")
            assert f"(uid {NOBODY})" in d.reason and "not root (uid 0)" in d.reason, d.reason
        assert len(list(cap.workloads())) == 3


def test_a_flood_of_refused_connections_is_counted_not_listed(tmp_path: Path) -> None:
    need_root()
    with CaptureServer(tmp_path / "c.vkscope", [f"unix:@vkscope-flood-{os.getpid()}"]) as srv:
        hostile_connect(srv.addresses[0], times=25)
        s = Stream()
        s.hello()
        s.goodbye()
        with connect(srv.addresses[0]) as sock:
            sock.sendall(s.data())
        deadline = time.monotonic() + 10
        while srv.counters().refused_connections < 25 or srv.counters().connections < 1:
            assert time.monotonic() < deadline, srv.counters()
            time.sleep(0.01)
        summary = srv.stop()
    assert summary.status == "complete"
    with open_capture(summary.path) as cap:
        reasons = [d.reason for d in cap.diagnostics() if d.kind == "refused_connection"]
        assert len(reasons) == 21 and reasons[-1] == "5 more connections were refused"


@pytest.mark.vulkan
def test_vkscope_run_takes_only_its_own_users_connections(workload: Path, tmp_path: Path) -> None:
    # A temporary folder too long for a socket path: the server listens elsewhere, where another
    # user can neither reach it (a folder of its own) nor, reaching it past the folder's
    # permissions (CAP_DAC_OVERRIDE), write to the capture.
    need_root()
    tmpdir = tmp_path / ("t" * 80) / ("u" * 40)
    tmpdir.mkdir(parents=True)
    cap = tmp_path / "long.vkscope"
    address = '"$VK_VKSCOPE_HOST"'  # the layer's setting, as the application's environment has it
    plain = " ".join(f"'{a}'" for a in hostile_command("ADDRESS")).replace("'ADDRESS'", address)
    passing = " ".join(f"'{a}'" for a in hostile_command("ADDRESS", pass_folders=True))
    passing = passing.replace("'ADDRESS'", address)
    script = f"{plain}; {passing}; exec '{workload}' --scenario compute"
    cmd = [vkscope_cli(), "run", "-o", str(cap), "--no-trace", "--no-html", "--no-report", "--"]
    res = run([*cmd, "sh", "-c", script], {**base_env(), "TMPDIR": str(tmpdir)}, cwd=tmp_path)
    assert res.returncode == 0, res.stderr
    out = res.stdout.splitlines()
    assert out[0] == "cannot connect: Permission denied", res.stdout
    assert out[1].startswith(("sent", "send failed")), res.stdout
    assert "vkscope: 1 connection was refused by the capture server" in res.stderr, res.stderr
    with open_capture(cap) as capture:
        assert capture.meta.status == "complete"
        assert capture.meta.refused_connections == 1 and capture.meta.bad_messages == 0
        assert [w.type for w in capture.workloads()].count("dispatch") == 5
        (refused,) = capture.diagnostics()
        assert refused.kind == "refused_connection" and f"(uid {NOBODY})" in refused.reason
