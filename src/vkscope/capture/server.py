"""The capture server: accepts the layer's connections and writes what they send into a capture.

A selectors loop over the listening sockets and every connection, one turn at a time (a lock),
taken by an idle reader thread while the cores have time to spare and by the capture thread
otherwise (_GUARD_S below), so SQLite is only ever touched by one thread at a time. Each
connection has its own decoder; whatever one connection sends (garbage included) affects that
connection alone.
"""

from __future__ import annotations

import contextlib
import os
import queue
import secrets
import selectors
import socket
import stat
import struct
import sys
import tempfile
import threading
import time
import traceback
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

from .build import Progress
from .commands import capture_command
from .ingest import Connection, GcPause
from .store import COMMIT_INTERVAL_S, CaptureStore, Counters
from .wire import Decoder

RECV_BYTES: Final = 1 << 20
_TICK_S: Final = 0.05  # how often an idle loop still commits and notices stop()
_DRAIN_S: Final = 2.0  # at stop(), time allowed for reading what connections already sent
# Where the system has SCHED_IDLE (Linux), the turns are taken by an idle reader: a thread of that
# policy runs only on a core nothing else wants, and gives it up the moment one of the
# application's threads wakes, so the host's decoding and storing no longer makes the
# application wait for a CPU (docs/bench/frame-cost.md measures that wait). Such a thread gets next
# to no CPU while every core is busy, so the capture thread, at the normal policy, guards it:
# when what the layer sent has waited _GUARD_S without a turn, it takes the turns itself for
# _TAKEOVER_S, then hands them back; twice as long each time the reader starves again soon after
# (an application that keeps every core busy for long), up to _LONGEST_TAKEOVER_S. So the layer's
# queue waits at most about _GUARD_S on a reader that cannot run (plus the rest of a turn the
# reader was in, which it finishes first), and that only now and then.
_GUARD_S: Final = 0.2  # more than a turn, _PACE_S and _TICK_S: a reader pacing itself is fine
_TAKEOVER_S: Final = 1.0
_LONGEST_TAKEOVER_S: Final = 16.0
_READER_JOIN_S: Final = 1.0
# While the connections send a trickle (a short frame's messages: the layer writes every 20 ms),
# the loop reads at most this often: what arrives meanwhile waits in the sockets and is taken in
# one turn, instead of the capture thread waking for every write while the application wants the
# CPU. A turn after a sleep costs far more than its messages, because the interpreter's code and
# data have left the caches: docs/bench/capture-cpu.md measures the capture thread's CPU per 1 ms
# frame at this pace and others (bench/capture_cpu.py). The sleep lasts as long as the
# connections take, at the rate they sent the turn's bytes, to send _PACE_BYTES more, and at
# most _PACE_S: a Unix socket's default buffer holds about 200 KiB, and a layer whose socket fills
# while the loop sleeps waits for it (in its sender thread, never the application's), so a
# fixed sleep would cap a busy stream at about 2 MB/s. 128 KiB in 100 ms is 1.3 MB/s, a thousand
# frames a second of a small application: a stream faster than that is read with shorter sleeps,
# and one that fills a turn with _PACE_BYTES is read at once.
_PACE_S: Final = 0.1
_PACE_BYTES: Final = 128 << 10
_SHORTEST_PACE_S: Final = 0.002  # a shorter sleep saves no wake-up: the loop reads at once
# Connections waiting to be accepted. An application may start many processes (or Vulkan
# instances) at once, each connecting; one the kernel turns away loses what it would have sent.
# The kernel caps it (net.core.somaxconn).
BACKLOG: Final = 4096
_ACCEPTS_PER_TURN: Final = 1024  # then the loop reads what the connections already sent
# A Unix socket address holds 108 bytes with the terminating NUL (sockaddr_un.sun_path).
UNIX_PATH_MAX: Final = 107


class CaptureServerError(RuntimeError):
    """The server could not listen, or failed while capturing."""


@dataclass(frozen=True, slots=True)
class CaptureSummary:
    path: Path
    status: str
    counters: Counters


@dataclass(slots=True)
class _Client:
    sock: socket.socket
    conn: Connection
    decoder: Decoder


@dataclass(slots=True)
class _Loop:
    """What the turns share, whichever thread takes them (one at a time: the turn lock)."""

    selector: selectors.BaseSelector
    pacer: selectors.BaseSelector  # the wake socket alone: a pace's sleep that stop() ends
    clients: dict[int, _Client]
    pause: GcPause
    turn_at: float  # when the last turn began
    turn_end: float = 0.0  # when the last turn ended
    takeover_s: float = _TAKEOVER_S  # how long the capture thread last took the turns back
    handed_back_at: float = float("-inf")  # when it last gave them back to the idle reader


class CaptureServer:
    """Listens on `unix:PATH` and/or `tcp:HOST:PORT` addresses and captures into one file.

    start() binds (errors surface in the caller) and starts the thread; counters() can be read
    at any time from any thread; stop() drains what connections have sent, finalizes the file
    and returns a summary.
    """

    def __init__(
        self,
        capture_path: Path,
        listen: list[str],
        *,
        batch_messages: int = 50_000,
        commit_interval_s: float = COMMIT_INTERVAL_S,
        idle_reader: bool = True,
    ) -> None:
        if not listen:
            raise ValueError("a capture server needs at least one address to listen on")
        self.capture_path = Path(capture_path)
        self._listen = list(listen)
        self._store_options = {"batch_messages": batch_messages}
        self._commit_interval_s = commit_interval_s
        self._listeners: list[socket.socket] = []
        self._unix_paths: list[Path] = []
        self._short_dirs: list[Path] = []  # made for a socket whose own path was too long
        self.addresses: list[str] = []
        self.notes: list[str] = []  # what a person should know about where it listens
        self._store: CaptureStore | None = None
        self._thread: threading.Thread | None = None
        self._wake: tuple[socket.socket, socket.socket] | None = None  # stop() -> select()
        self._stopping = threading.Event()
        self._error: str | None = None
        self._summary: CaptureSummary | None = None
        # Host commands for the layer, sent by the loop to every connection it has (or to the
        # next one, while there is none).
        self._outbox: queue.SimpleQueue[bytes] = queue.SimpleQueue()  # reentrant: signal-safe
        self._recv_buffer = bytearray(RECV_BYTES)  # the turn's: one turn at a time
        # Turns are taken by the idle reader while _idle_turns is set, else by the capture thread
        # (docs/timeline.md, "Per frame"); `takeovers` counts the times the capture thread took
        # them back from a reader that could not get a CPU.
        self._idle_reader = idle_reader
        self._turn_lock = threading.Lock()
        self._idle_turns = threading.Event()
        self._idle_exit = False
        self.takeovers = 0
        self._recv_view = memoryview(self._recv_buffer)

    def __enter__(self) -> CaptureServer:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        if self._thread is not None and self._summary is None:
            self.stop()

    # -- setup ------------------------------------------------------------------------------

    def start(self) -> None:
        try:
            for address in self._listen:
                self._listeners.append(self._bind(address))
            self._store = CaptureStore(
                self.capture_path,
                batch_messages=self._store_options["batch_messages"],
                commit_interval_s=self._commit_interval_s,
            )
        except BaseException:
            self._close_listeners()
            raise
        self._wake = socket.socketpair()
        self._thread = threading.Thread(target=self._run, name="vkscope-capture", daemon=True)
        self._thread.start()

    def _bind(self, address: str) -> socket.socket:
        kind, _, where = address.partition(":")
        if kind == "unix" and where.startswith("@"):
            # Linux's abstract namespace, which the layer also accepts: no file to clean up.
            sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            try:
                sock.bind("\0" + where[1:])
            except OSError as exc:
                sock.close()
                why = exc.strerror or str(exc)
                raise CaptureServerError(f"cannot listen on {address}: {why}") from exc
            self.addresses.append(address)
        elif kind == "unix" and where:
            path = Path(where)
            size = len(os.fsencode(path))
            if size > UNIX_PATH_MAX:
                return self._bind_short(address, size)
            _remove_stale_socket(path)
            sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            try:
                sock.bind(str(path))
            except OSError as exc:
                sock.close()
                why = exc.strerror or str(exc)
                raise CaptureServerError(f"cannot listen on {address}: {why}") from exc
            self._unix_paths.append(path)
            self.addresses.append(f"unix:{path}")
        elif kind == "tcp" and ":" in where:
            host, _, port = where.rpartition(":")
            sock = socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET)
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            try:
                sock.bind((host.strip("[]"), int(port)))
            except (OSError, ValueError) as exc:
                sock.close()
                raise CaptureServerError(f"cannot listen on {address}: {exc}") from exc
            bound_host, bound_port = sock.getsockname()[:2]
            self.addresses.append(f"tcp:{bound_host}:{bound_port}")
        else:
            raise CaptureServerError(f"address {address!r}: expected unix:PATH or tcp:HOST:PORT")
        sock.listen(BACKLOG)
        sock.setblocking(False)
        return sock

    def _bind_short(self, address: str, size: int) -> socket.socket:
        """For a socket path past the Unix limit: an abstract socket (Linux), else a socket in a
        short folder of its own; `notes` says which, and why."""
        if sys.platform.startswith("linux"):
            short = f"unix:@vkscope-{os.getpid()}-{secrets.token_hex(4)}"
        else:
            folder = Path(tempfile.mkdtemp(prefix="vks-", dir="/tmp"))
            self._short_dirs.append(folder)
            short = f"unix:{folder / 's'}"
        sock = self._bind(short)
        self.notes.append(
            f"{address} is {size} bytes long, over the {UNIX_PATH_MAX}-byte limit of a Unix "
            f"socket address (a long TMPDIR?): listening on {self.addresses[-1]} instead"
        )
        return sock

    # -- the loop ---------------------------------------------------------------------------

    def _run(self) -> None:
        """The capture thread: takes the turns itself, or guards the idle reader that does."""
        store = self._store
        assert store is not None and self._wake is not None
        now = time.monotonic()
        loop = _Loop(selectors.DefaultSelector(), selectors.DefaultSelector(), {}, GcPause(), now)
        reader: threading.Thread | None = None
        try:
            for listener in self._listeners:
                loop.selector.register(listener, selectors.EVENT_READ, None)
            loop.selector.register(self._wake[0], selectors.EVENT_READ, "wake")
            # The pace's sleep ends early for what writes to the wake socket: a host command or
            # stop(). The next turn takes it.
            loop.pacer.register(self._wake[0], selectors.EVENT_READ)
            if self._idle_reader and hasattr(os, "SCHED_IDLE"):
                reader = threading.Thread(
                    target=self._read_when_idle, args=(loop, store), name="vkscope-idle-reader",
                    daemon=True,
                )  # fmt: skip
                reader.start()
            while not self._stopping.is_set() and self._error is None:
                if self._idle_turns.is_set():
                    self._guard(loop, store)
                else:
                    self._paced_turn(loop, store)
            if self._error is not None:
                return
            self._end_idle_reader()
            with self._turn_lock:
                # A layer that connected just before stop() may not have been accepted yet: its
                # connection waits in the listen backlog with what it sent.
                for listener in self._listeners:
                    while self._accept(listener, loop, store):
                        pass
                deadline = time.monotonic() + _DRAIN_S
                for client in list(loop.clients.values()):
                    self._drain(client, store, deadline)
                    self._close(client, loop, store)
        except BaseException:
            self._error = traceback.format_exc()
        finally:
            self._end_idle_reader()
            if reader is not None:
                # It ends at its next wake-up (within _TICK_S, once it gets a CPU); a reader still
                # waiting after that finds its selector closed and ends all the same.
                reader.join(_READER_JOIN_S)
            loop.pause.release()
            loop.selector.close()
            loop.pacer.close()
            self._close_listeners()

    def _read_when_idle(self, loop: _Loop, store: CaptureStore) -> None:
        """The idle reader: takes the turns at SCHED_IDLE, while the capture thread guards it."""
        try:
            os.sched_setscheduler(0, os.SCHED_IDLE, os.sched_param(0))  # this thread only
        except OSError:
            return  # the capture thread goes on taking the turns itself
        self._idle_turns.set()
        try:
            while not self._idle_exit:
                self._idle_turns.wait()
                if self._idle_exit:
                    return
                events = loop.selector.select(_TICK_S)
                with self._turn_lock:
                    if self._idle_exit or not self._idle_turns.is_set():
                        continue  # the capture thread took the turns back meanwhile
                    sleep = self._turn(loop, store, events)
                if sleep:
                    loop.pacer.select(sleep)
        except BaseException:
            if not self._idle_exit:  # not the selector closed under a reader that was ending
                self._error = traceback.format_exc()

    def _end_idle_reader(self) -> None:
        self._idle_exit = True
        self._idle_turns.set()  # a reader waiting for its turns wakes, and ends

    def _guard(self, loop: _Loop, store: CaptureStore) -> None:
        """One look at the idle reader: when what the layer sent has waited _GUARD_S without a
        turn (the application, or anything else, keeps every core busy), the capture thread
        takes the turns itself for _TAKEOVER_S."""
        if self._stopping.wait(_GUARD_S) or self._error is not None:
            return
        if time.monotonic() - loop.turn_end < _GUARD_S:
            return
        if not loop.selector.select(0) and not store.counters().uncommitted:
            return  # nothing waits: the reader is asleep, not starved
        self._idle_turns.clear()
        self.takeovers += 1
        now = time.monotonic()
        soon = now - loop.handed_back_at < 2 * loop.takeover_s
        loop.takeover_s = min(2 * loop.takeover_s, _LONGEST_TAKEOVER_S) if soon else _TAKEOVER_S
        until = now + loop.takeover_s
        while time.monotonic() < until and not self._stopping.is_set() and self._error is None:
            self._paced_turn(loop, store)
        loop.handed_back_at = time.monotonic()
        self._idle_turns.set()

    def _paced_turn(self, loop: _Loop, store: CaptureStore) -> None:
        events = loop.selector.select(_TICK_S)
        with self._turn_lock:
            sleep = self._turn(loop, store, events)
        if sleep:
            loop.pacer.select(sleep)

    def _turn(self, loop: _Loop, store: CaptureStore, events: list[Any]) -> float:
        """Takes what `events` say is ready (they may be stale: the other thread may have taken
        it, and every read and accept is non-blocking); the pace's sleep that should follow."""
        assert self._wake is not None
        # What this turn reads was sent since the last turn began.
        since, loop.turn_at = loop.turn_at, time.monotonic()
        if events:
            loop.pause.hold()
        received = 0
        for key, _ in events:
            if key.data is None:
                for _ in range(_ACCEPTS_PER_TURN):  # every connection waiting
                    if not self._accept(key.fileobj, loop, store):
                        break
                self._send_commands(loop.clients)  # any waiting for a connection
            elif key.data == "wake":
                with contextlib.suppress(BlockingIOError):
                    self._wake[0].recv(4096)
                self._send_commands(loop.clients)
            elif key.fd in loop.clients:
                received += self._read(loop.clients[key.fd], loop, store)
        if store.maybe_commit() or not events:
            loop.pause.release()
        loop.turn_end = time.monotonic()
        if 0 < received < _PACE_BYTES:
            sleep = _pace(received, loop.turn_at - since)
            if sleep >= _SHORTEST_PACE_S:
                return sleep
        return 0.0

    def _accept(self, listener: Any, loop: _Loop, store: CaptureStore) -> bool:
        """Accepts one waiting connection; False when there was none."""
        try:
            sock, peer = listener.accept()
        except (BlockingIOError, InterruptedError, ConnectionAbortedError):
            return False
        sock.setblocking(False)
        client = _Client(sock, store.connect(_peer_name(sock, peer)), Decoder())
        loop.clients[sock.fileno()] = client
        loop.selector.register(sock, selectors.EVENT_READ, "client")
        return True

    def _read(self, client: _Client, loop: _Loop, store: CaptureStore) -> int:
        """Takes what the connection has sent; the bytes read."""
        try:
            data = self._receive(client.sock)
        except (BlockingIOError, InterruptedError):
            return 0
        except OSError:
            data = b""  # reset by the peer: the same as an end of stream here
        if data:
            self._take(client, store, data)
            if not client.decoder.out_of_step:
                return len(data)
        self._close(client, loop, store)
        return len(data)

    def _receive(self, sock: socket.socket) -> bytes:
        """What the socket has, up to RECV_BYTES. Read into a buffer kept for the purpose, then
        copied at its size: recv(RECV_BYTES) would allocate 1 MiB for every read (a fresh
        mapping, faulted in page by page) to keep a few kilobytes of a trickle."""
        size = sock.recv_into(self._recv_buffer)
        return self._recv_view[:size].tobytes()

    @staticmethod
    def _take(client: _Client, store: CaptureStore, data: bytes) -> None:
        client.conn.bytes += len(data)
        store.ingest_frames(client.conn, client.decoder.feed_frames(data))
        if client.conn.refused_at is not None and not client.decoder.ignoring:
            # A protocol this host does not read: the rest is read (so that the layer is not
            # left blocked on a full socket) and dropped.
            client.decoder.ignore_rest()

    def _send_commands(self, clients: dict[int, _Client]) -> None:
        if not clients:
            return
        while True:
            try:
                command = self._outbox.get_nowait()
            except queue.Empty:
                return
            for client in clients.values():
                # A few bytes into a socket the layer never writes back on: they fit. A layer
                # that has gone misses the command, which is all there is to do about it.
                with contextlib.suppress(OSError):
                    client.sock.send(command)

    def _drain(self, client: _Client, store: CaptureStore, deadline: float) -> None:
        """Takes what a connection has already sent before the capture ends.

        Bounded in time: an application still running may never stop sending.
        """
        while not client.decoder.out_of_step and time.monotonic() < deadline:
            try:
                data = self._receive(client.sock)
            except OSError:
                return
            if not data:
                return
            self._take(client, store, data)
            store.maybe_commit()

    def _close(self, client: _Client, loop: _Loop, store: CaptureStore) -> None:
        store.ingest(client.conn, client.decoder.finish())
        store.disconnect(client.conn)
        loop.selector.unregister(client.sock)
        del loop.clients[client.sock.fileno()]
        client.sock.close()
        # A process has ended (or gone wrong): its last messages go to disk now, not in 100 ms.
        store.commit()

    def _close_listeners(self) -> None:
        for listener in self._listeners:
            listener.close()
        self._listeners.clear()
        for path in self._unix_paths:
            with contextlib.suppress(OSError):
                path.unlink()
        self._unix_paths.clear()
        for folder in self._short_dirs:
            with contextlib.suppress(OSError):
                folder.rmdir()
        self._short_dirs.clear()

    # -- control ----------------------------------------------------------------------------

    def request_capture(self, frames: int) -> None:
        """Asks every connected layer (or the next to connect) whose `frames` setting is `host` to
        capture its next `frames` frames. Safe from any thread and from a signal handler."""
        self._outbox.put(capture_command(frames))
        if self._wake is not None:
            with contextlib.suppress(OSError):
                self._wake[1].send(b"c")

    @property
    def error(self) -> str | None:
        """Why the capture thread stopped by itself (a traceback), or None while all is well."""
        return self._error

    def counters(self) -> Counters:
        if self._store is None:
            raise CaptureServerError("the capture server has not been started")
        return self._store.counters()

    def stop(
        self, timeout: float | None = None, progress: Progress | None = None
    ) -> CaptureSummary:
        """Stops listening, takes what was already sent, and finalizes the capture file.

        `timeout` bounds the wait for the capture thread; `progress(done, total)` follows the
        finalizing, which builds what the capture kept in its journal (in messages)."""
        if self._summary is not None:
            return self._summary
        if self._thread is None or self._store is None or self._wake is None:
            raise CaptureServerError("the capture server has not been started")
        self._stopping.set()
        with contextlib.suppress(OSError):
            self._wake[1].send(b"x")
        self._thread.join(timeout)
        if self._thread.is_alive():
            raise CaptureServerError(f"the capture thread did not stop within {timeout} s")
        for end in self._wake:
            end.close()
        store = self._store
        if self._error is not None:
            store.note(None, "server_error", self._error.strip().splitlines()[-1])
        try:
            status = store.finalize(progress)
        except Exception as exc:
            store.abandon()
            raise CaptureServerError(f"could not finalize {self.capture_path}: {exc}") from exc
        self._summary = CaptureSummary(self.capture_path, status, store.counters())
        if self._error is not None:
            raise CaptureServerError(f"the capture server failed:\n{self._error}")
        return self._summary


def _pace(received: int, seconds: float) -> float:
    """How long to sleep after a turn that read `received` bytes sent over `seconds`: the time
    the connections take to send _PACE_BYTES at that rate, at most _PACE_S."""
    return min(_PACE_S, _PACE_BYTES * max(seconds, 0.0) / received)


def _peer_name(sock: socket.socket, peer: object) -> str:
    if isinstance(peer, tuple):
        return f"tcp:{peer[0]}:{peer[1]}"
    try:  # Linux tells who is on the other end of a Unix socket
        creds = sock.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, struct.calcsize("3i"))
        return f"unix:pid {struct.unpack('3i', creds)[0]}"
    except (AttributeError, OSError):
        return "unix"


def _remove_stale_socket(path: Path) -> None:
    """Removes a socket left by a capture that died; refuses one still in use, or a file."""
    try:
        mode = path.lstat().st_mode
    except FileNotFoundError:
        return
    if not stat.S_ISSOCK(mode):
        raise CaptureServerError(f"cannot listen on unix:{path}: it exists and is not a socket")
    probe = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        probe.connect(str(path))
    except OSError:
        os.unlink(path)
    else:
        raise CaptureServerError(f"cannot listen on unix:{path}: another capture is using it")
    finally:
        probe.close()
