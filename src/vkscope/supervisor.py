"""What signals do to `vkscope run`: the application gets them as it would without vkscope, and
vkscope itself always finishes the capture.

While a `Supervisor` is active, the signals vkscope handles are blocked in every thread (the
capture server's threads are started inside it and inherit the mask) and the main thread takes
them with sigtimedwait, which also says who sent each one. The application is started with
posix_spawn, with an empty signal mask and the signal dispositions vkscope itself was started
with (ignored stays ignored, as it would be without vkscope).

- SIGINT and SIGQUIT: from the terminal (Ctrl-C, Ctrl-\\) the kernel sends them to the whole
  foreground process group, so the application already has it; sent to vkscope alone by another
  process, it is passed on. vkscope then waits for the application, finishes the capture and
  exits with the application's status.
- SIGTERM and SIGHUP: passed on to the application (unless the kernel sent it to the whole
  group); vkscope finishes the capture, removes its temporary folders and exits with 128 + the
  signal's number.
- SIGUSR1: with `--frames host`, asks the application for frames; otherwise a note says it was
  ignored.
- Any of these once the application has exited, while the capture is being finished: noted, and
  the capture is finished all the same. An interrupt then skips the outputs that are not the
  capture (report, trace, page); a SIGTERM or SIGHUP also changes the exit code to 128 + N.
"""

from __future__ import annotations

import contextlib
import os
import signal
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Final

INTERRUPTS: Final = frozenset({signal.SIGINT, signal.SIGQUIT})
TERMINATIONS: Final = frozenset({signal.SIGTERM, signal.SIGHUP})
HANDLED: Final = INTERRUPTS | TERMINATIONS | {signal.SIGUSR1}
_WATCHED: Final = HANDLED | {signal.SIGCHLD}  # SIGCHLD: the application exited
_SI_KERNEL: Final = 0x80  # siginfo si_code of a signal the kernel sent (a terminal's Ctrl-C)
_POLL_S: Final = 0.5
# Python ignores these for itself; a program it starts gets them back at their default.
_PYTHON_IGNORES: Final = (signal.SIGPIPE, signal.SIGXFSZ)


@dataclass
class Received:
    """What arrived while the supervisor was active."""

    interrupted: bool = False  # SIGINT or SIGQUIT
    termination: int | None = None  # SIGTERM or SIGHUP: vkscope exits with 128 + this
    while_finishing: list[int] = field(default_factory=list)  # after the application exited

    @property
    def skip_outputs(self) -> bool:
        return bool(self.while_finishing) or self.termination is not None


def signal_name(signo: int) -> str:
    return signal.Signals(signo).name


class Stopped(Exception):
    """SIGTERM or SIGHUP stopped what ran inside Supervisor.interruptible()."""

    def __init__(self, signo: int) -> None:
        super().__init__(signal_name(signo))
        self.signo = signo


class Supervisor:
    """Owns vkscope's handled signals from before the capture server starts until vkscope
    exits. Use as a context manager in the main thread, before any thread is started; once it
    ends, the handled signals stay ignored (vkscope is exiting)."""

    def __init__(self, note: Callable[[str], None]) -> None:
        self._note = note
        self.on_request: Callable[[], None] | None = None  # SIGUSR1 under --frames host
        self.received = Received()
        self._child: int | None = None
        self._old_mask: set[int | signal.Signals] | None = None

    def __enter__(self) -> Supervisor:
        self._old_mask = signal.pthread_sigmask(signal.SIG_BLOCK, _WATCHED)
        return self

    def __exit__(self, *exc: object) -> None:
        self.take_pending()
        # vkscope is about to exit with the status it has settled on, the capture finished: a
        # signal from now on must not turn that into a traceback or a death by signal.
        for signo in HANDLED:
            signal.signal(signo, signal.SIG_IGN)
        assert self._old_mask is not None
        signal.pthread_sigmask(signal.SIG_SETMASK, self._old_mask)

    @contextlib.contextmanager
    def interruptible(self) -> Iterator[None]:
        """Lets one signal stop what runs inside (the outputs written after the capture is
        finished): SIGINT and SIGQUIT raise KeyboardInterrupt, SIGTERM and SIGHUP raise Stopped.
        Every later one is only noted, until the supervisor ends."""
        raised = False

        def handler(signo: int, _: object) -> None:
            nonlocal raised
            if signo == signal.SIGUSR1:
                self._note("SIGUSR1 ignored: the application has exited")
                return
            self._finishing(signo)
            if not raised:
                raised = True
                raise KeyboardInterrupt if signo in INTERRUPTS else Stopped(signo)

        for signo in HANDLED:
            signal.signal(signo, handler)
        signal.pthread_sigmask(signal.SIG_UNBLOCK, HANDLED)
        try:
            yield
        finally:
            signal.pthread_sigmask(signal.SIG_BLOCK, HANDLED)
            raised = True  # a signal whose handler runs late only notes itself

    def spawn(self, executable: str, argv: Sequence[str], env: Mapping[str, str]) -> int:
        """Starts the application; OSError when it cannot be run."""
        # Dispositions vkscope itself was given stay as they were, except those Python changed.
        # Signals with a Python handler go back to their default at exec anyway.
        defaults = {s for s in _PYTHON_IGNORES if signal.getsignal(s) is signal.SIG_IGN}
        pid = os.posix_spawn(executable, list(argv), dict(env), setsigmask=(), setsigdef=defaults)
        self._child = pid
        return pid

    def wait(self, pid: int) -> int:
        """Waits for the application, passing signals on; its exit status as a shell reports it
        (128 + N when a signal ended it)."""
        while True:
            done, status = os.waitpid(pid, os.WNOHANG)
            if done:
                self._child = None
                code = os.waitstatus_to_exitcode(status)
                return 128 - code if code < 0 else code  # killed by a signal: as a shell says
            info = signal.sigtimedwait(_WATCHED, _POLL_S)
            if info is not None and info.si_signo != signal.SIGCHLD:
                self._while_running(pid, info)

    def _while_running(self, pid: int, info: signal.struct_siginfo) -> None:
        signo = info.si_signo
        if signo == signal.SIGUSR1:
            if self.on_request is not None:
                self.on_request()
            else:
                self._note(
                    "SIGUSR1 ignored: it asks the application for frames only under --frames host"
                )
            return
        if signo in INTERRUPTS:
            self.received.interrupted = True
        else:
            self.received.termination = signo
        if info.si_code != _SI_KERNEL:  # sent to vkscope alone: the application has not got it
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signo)

    def take_pending(self) -> None:
        """Takes every signal that arrived since the application exited (while the capture was
        being finished), so that none reaches vkscope once the mask is lifted."""
        while True:
            info = signal.sigtimedwait(_WATCHED, 0)
            if info is None:
                return
            signo = info.si_signo
            if signo == signal.SIGCHLD:
                continue
            if self._child is not None:
                self._while_running(self._child, info)
                continue
            if signo == signal.SIGUSR1:
                self._note("SIGUSR1 ignored: the application has exited")
                continue
            self._finishing(signo)

    def _finishing(self, signo: int) -> None:
        if signo in TERMINATIONS:
            self.received.termination = signo
        self.received.while_finishing.append(signo)
