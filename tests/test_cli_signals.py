"""What signals do to `vkscope run` (README, "Signals and faults"): the application gets them as it
would without vkscope, exactly once; vkscope finishes the capture, leaves no temporary folder, and
exits with the application's status (SIGINT) or 128 + N (SIGTERM, SIGHUP). Ctrl-C is typed into a
real pseudo-terminal, so the kernel sends it to the whole foreground process group as a shell's
terminal would."""

from __future__ import annotations

import contextlib
import os
import pty
import select
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from harness.env import base_env, vkscope_cli
from vkscope.capture import CaptureError, open_capture

pytestmark = pytest.mark.vulkan

# A Vulkan application (the layer connects at vkCreateInstance) that notes every INT, TERM and HUP
# it gets, waits a little for a second copy, writes what it got and dies of the first one. With
# no signal it runs until the file ready+".stop" appears, then exits 0.
APP = """
import os, signal, sys, time, vulkan as vk
from pathlib import Path
ready, record = Path(sys.argv[1]), Path(sys.argv[2])
got = []
for s in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
    signal.signal(s, lambda n, _: got.append(n))
info = vk.VkInstanceCreateInfo(sType=vk.VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO)
instance = vk.vkCreateInstance(info, None)
ready.write_text(str(os.getpid()))
stop = Path(str(ready) + ".stop")
while not got and not stop.exists():
    time.sleep(0.01)
time.sleep(0.5)  # a second copy of the signal would have arrived by now
record.write_text(",".join(map(str, got)))
vk.vkDestroyInstance(instance, None)
if got:
    signal.signal(got[0], signal.SIG_DFL)
    os.kill(os.getpid(), got[0])
"""


def _wait_for(condition: Callable[[], bool], timeout: float = 60) -> None:
    end = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < end, "timed out"
        time.sleep(0.05)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


class Run:
    """`vkscope run` of the app above in a scratch folder, with its own TMPDIR."""

    def __init__(self, tmp_path: Path, *options: str) -> None:
        self.folder = tmp_path
        self.tmp = tmp_path / "tmp"
        self.tmp.mkdir()
        self.ready, self.record = tmp_path / "ready", tmp_path / "got"
        self.capture = tmp_path / "app.vkscope"
        self.env = base_env()
        self.env["TMPDIR"] = str(self.tmp)
        self.argv = [vkscope_cli(), "run", "-o", str(self.capture), *options, "--",
                     sys.executable, "-c", APP, str(self.ready), str(self.record)]  # fmt: skip

    def start(self) -> subprocess.Popen[str]:
        self.proc = subprocess.Popen(
            self.argv, env=self.env, cwd=self.folder, text=True,
            stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        )  # fmt: skip
        _wait_for(self.ready.exists)
        return self.proc

    def close(self) -> None:
        """Leaves no process behind, whatever the test found."""
        if self.ready.exists() and _alive(self.app_pid()):
            os.kill(self.app_pid(), signal.SIGKILL)
        proc = getattr(self, "proc", None)
        if proc is not None and proc.poll() is None:
            proc.kill()
            proc.communicate()

    def app_pid(self) -> int:
        return int(self.ready.read_text())

    def got(self) -> list[int]:
        text = self.record.read_text()
        return [int(s) for s in text.split(",")] if text else []

    def check_finished(self) -> None:
        """The capture is finalized and readable, with nothing left beside it or in TMPDIR."""
        with open_capture(self.capture) as capture:
            assert capture.meta.status in ("complete", "incomplete")
            assert capture.meta.connections == 1
        assert sorted(p.name for p in self.folder.iterdir() if p.name.startswith("app")) == [
            "app.vkscope"
        ]
        assert list(self.tmp.iterdir()) == []


@pytest.fixture
def run(tmp_path: Path) -> Iterator[Run]:
    made = Run(tmp_path)
    yield made
    made.close()


@pytest.mark.parametrize("signo", [signal.SIGTERM, signal.SIGHUP])
def test_sigterm_and_sighup_are_passed_on_and_the_capture_finished(run: Run, signo: int) -> None:
    proc = run.start()
    proc.send_signal(signo)
    _out, err = proc.communicate(timeout=120)
    assert proc.returncode == 128 + signo, err
    assert run.got() == [signo]  # once: from vkscope
    assert not _alive(run.app_pid())
    assert "Traceback" not in err
    run.check_finished()


def test_sigint_sent_to_vkscope_alone_is_passed_on(run: Run) -> None:
    proc = run.start()
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=120)
    assert run.got() == [signal.SIGINT]
    assert proc.returncode == 128 + signal.SIGINT, err  # the application's status
    run.check_finished()


def test_sigusr1_without_frames_host_is_only_noted(run: Run) -> None:
    proc = run.start()
    proc.send_signal(signal.SIGUSR1)
    time.sleep(0.5)
    assert proc.poll() is None  # still running
    Path(f"{run.ready}.stop").touch()
    _, err = proc.communicate(timeout=120)
    assert proc.returncode == 0, err
    assert run.got() == []
    assert (
        "vkscope: SIGUSR1 ignored: it asks the application for frames only under --frames host"
        in err
    )
    run.check_finished()


class Terminal:
    """`vkscope run` as the foreground job of a pseudo-terminal."""

    def __init__(self, argv: list[str], env: dict[str, str], cwd: Path) -> None:
        self.pid, self.fd = pty.fork()
        if self.pid == 0:  # the child: its own session, the terminal its controlling one
            os.chdir(cwd)
            # As an interactive shell starts its foreground job: pytest started in the background
            # of a script (`cmd &`, nohup) would otherwise pass on ignored SIGINT, SIGQUIT and
            # SIGHUP, which vkscope rightly passes on to the application, and Ctrl-C would end
            # neither.
            for signo in (signal.SIGINT, signal.SIGQUIT, signal.SIGHUP):
                signal.signal(signo, signal.SIG_DFL)
            os.execve(argv[0], argv, env)
        self.output = b""
        self.status: int | None = None

    def read(self, seconds: float) -> None:
        end = time.monotonic() + seconds
        while self.status is None and time.monotonic() < end:
            ready, _, _ = select.select([self.fd], [], [], 0.02)
            if ready:
                with contextlib.suppress(OSError):  # closed at the other end: vkscope exited
                    self.output += os.read(self.fd, 65536)
            done, status = os.waitpid(self.pid, os.WNOHANG)
            if done:
                self.status = os.waitstatus_to_exitcode(status)

    def type(self, text: bytes) -> None:
        os.write(self.fd, text)

    def close(self) -> None:
        if self.status is None:
            os.kill(self.pid, signal.SIGKILL)
            os.waitpid(self.pid, 0)
        os.close(self.fd)


def test_ctrl_c_reaches_the_application_once(run: Run, tmp_path: Path) -> None:
    term = Terminal(run.argv, run.env, tmp_path)
    try:
        _wait_for(run.ready.exists)
        term.type(b"\x03")
        term.read(60)
        assert term.status == 128 + signal.SIGINT, term.output
    finally:
        term.close()
    assert run.got() == [signal.SIGINT]  # from the terminal, not a second time from vkscope
    assert b"Traceback" not in term.output
    run.check_finished()


def test_ctrl_c_stops_a_vulkan_application_and_more_ctrl_c_cannot_lose_the_capture(
    tmp_path: Path, workload: Path
) -> None:
    # The bundled workload program would run for hours; Ctrl-C ends it, and Ctrl-C typed over
    # and over while vkscope finishes the capture changes nothing but the outputs it skips.
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    env = base_env()
    env["TMPDIR"] = str(tmp)
    capture = tmp_path / "wl.vkscope"
    argv = [vkscope_cli(), "run", "-o", str(capture), "--timing", "queue", "--",
            str(workload), "--scenario", "compute", "--frames", "1000000"]  # fmt: skip
    term = Terminal(argv, env, tmp_path)

    def has_workloads() -> bool:
        try:
            with open_capture(capture) as cap:
                return cap.workload_count() > 0
        except CaptureError:
            return False

    try:
        _wait_for(has_workloads, timeout=120)
        for _ in range(200):
            term.type(b"\x03")
            term.read(0.02)
            if term.status is not None:
                break
        term.read(120)
        assert term.status == 128 + signal.SIGINT, term.output
    finally:
        term.close()
    text = term.output.decode(errors="replace")
    assert "Traceback" not in text and "KeyboardInterrupt" not in text
    with open_capture(capture) as cap:
        assert cap.meta.status == "incomplete"  # the application died without saying goodbye
        assert cap.workload_count() > 0
        cap.check()
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith("wl")] == ["wl.vkscope"]
    assert list(tmp.iterdir()) == []
