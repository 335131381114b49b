"""The capture server: accepts the layer's connections and writes what they send into a capture.

One thread runs a selectors loop over the listening sockets and every connection, so SQLite is
only ever touched from that thread. Each connection has its own decoder; whatever one connection
sends (garbage included) affects that connection alone. A connection from a process of another
user is closed unread, and counted (peers.py).
"""

from __future__ import annotations

import contextlib
import os
import queue
import secrets
import selectors
import socket
import stat
import sys
import tempfile
import threading
import time
import traceback
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Final

from ...gpu_state import DeviceRequest, GpuStateBatch
from .build import Progress
from .commands import capture_command
from .ingest import Connection, GcPause
from .peers import check_peer
from .store import COMMIT_INTERVAL_S, CaptureStore, Counters, Finishing
from .wire import Decoder

RECV_BYTES: Final = 1 << 20
_TICK_S: Final = 0.05  # how often an idle loop still commits and notices stop()
_DRAIN_S: Final = 2.0  # at stop(), time allowed for reading what connections already sent
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
        tags: Mapping[str, str] | None = None,
        on_device: Callable[[DeviceRequest], None] | None = None,
        finishing: Finishing | None = None,
    ) -> None:
        """`on_device` hears of every device the application creates (from the capture thread:
        it must return at once), for the host's GPU sampler, which hands its samples back
        through take_gpu_state()."""
        if not listen:
            raise ValueError("a capture server needs at least one address to listen on")
        self.capture_path = Path(capture_path)
        self._listen = list(listen)
        self._store_options = {"batch_messages": batch_messages}
        self._commit_interval_s = commit_interval_s
        self._tags = dict(tags or {})  # the capture's provenance (vkscope run --tag)
        self._finishing = finishing  # run on the finalized file (store.py)
        self._listeners: list[socket.socket] = []
        self._listening_on: dict[int, str] = {}  # a listener's fd: the address it is bound to
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
        self._on_device = on_device
        self._gpu_state: queue.SimpleQueue[GpuStateBatch] = queue.SimpleQueue()
        self._recv_buffer = bytearray(RECV_BYTES)  # the capture thread's alone
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
                listener = self._bind(address)
                self._listeners.append(listener)
                self._listening_on[listener.fileno()] = self.addresses[-1]
            self._store = CaptureStore(
                self.capture_path,
                batch_messages=self._store_options["batch_messages"],
                commit_interval_s=self._commit_interval_s,
                tags=self._tags,
                finishing=self._finishing,
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
        """For a socket path past the Unix limit: a socket in a short folder of its own under
        /tmp, which only this user may enter (an abstract socket would have no permissions at
        all), else, without a usable /tmp, an abstract one (Linux), whose peers are checked
        like every other; `notes` says which, and why."""
        try:
            folder = Path(tempfile.mkdtemp(prefix="vks-", dir="/tmp"))  # mode 0700
        except OSError:
            if not sys.platform.startswith("linux"):
                raise
            short = f"unix:@vkscope-{os.getpid()}-{secrets.token_hex(4)}"
        else:
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
        store = self._store
        assert store is not None
        selector = selectors.DefaultSelector()
        pacer = selectors.DefaultSelector()
        clients: dict[int, _Client] = {}
        pause = GcPause()
        try:
            for listener in self._listeners:
                selector.register(listener, selectors.EVENT_READ, None)
            assert self._wake is not None
            selector.register(self._wake[0], selectors.EVENT_READ, "wake")
            # The pace's sleep ends early for what writes to the wake socket: a host command or
            # stop(). The next turn takes it.
            pacer.register(self._wake[0], selectors.EVENT_READ)
            turn_at = time.monotonic()
            while not self._stopping.is_set():
                events = selector.select(_TICK_S)
                # What this turn reads was sent since the last turn began.
                since, turn_at = turn_at, time.monotonic()
                if events:
                    pause.hold()
                received = 0
                for key, _ in events:
                    if key.data is None:
                        for _ in range(_ACCEPTS_PER_TURN):  # every connection waiting
                            if not self._accept(key.fileobj, selector, clients, store):  # type: ignore[arg-type]
                                break
                        self._send_commands(clients)  # any waiting for a connection
                    elif key.data == "wake":
                        with contextlib.suppress(BlockingIOError):
                            self._wake[0].recv(4096)
                        self._send_commands(clients)
                    elif key.fd in clients:
                        received += self._read(clients[key.fd], selector, clients, store)
                self._gpu_turn(store)
                if store.maybe_commit() or not events:
                    pause.release()
                if 0 < received < _PACE_BYTES:
                    sleep = _pace(received, turn_at - since)
                    if sleep >= _SHORTEST_PACE_S:
                        pacer.select(sleep)
            # A layer that connected just before stop() may not have been accepted yet: its
            # connection waits in the listen backlog with what it sent.
            for listener in self._listeners:
                while self._accept(listener, selector, clients, store):
                    pass
            deadline = time.monotonic() + _DRAIN_S
            for client in list(clients.values()):
                self._drain(client, store, deadline)
                self._close(client, selector, clients, store)
            self._gpu_turn(store)
        except BaseException:
            self._error = traceback.format_exc()
        finally:
            pause.release()
            selector.close()
            pacer.close()
            self._close_listeners()

    def _accept(
        self,
        listener: socket.socket,
        selector: selectors.BaseSelector,
        clients: dict[int, _Client],
        store: CaptureStore,
    ) -> bool:
        """Accepts one waiting connection; False when there was none."""
        try:
            sock, address = listener.accept()
        except (BlockingIOError, InterruptedError, ConnectionAbortedError):
            return False
        peer = check_peer(sock, address, self._listening_on.get(listener.fileno(), ""))
        if peer.refused is not None:
            sock.close()  # unread: nothing it sent reaches the capture
            store.refuse(peer.refused)
            return True
        sock.setblocking(False)
        client = _Client(sock, store.connect(peer.name), Decoder())
        clients[sock.fileno()] = client
        selector.register(sock, selectors.EVENT_READ, "client")
        return True

    def _read(
        self,
        client: _Client,
        selector: selectors.BaseSelector,
        clients: dict[int, _Client],
        store: CaptureStore,
    ) -> int:
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
        self._close(client, selector, clients, store)
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
        store.rows.ingest_frames(client.conn, client.decoder.feed_frames(data))
        if client.conn.refused_at is not None and not client.decoder.ignoring:
            # A protocol this host does not read: the rest is read (so that the layer is not
            # left blocked on a full socket) and dropped.
            client.decoder.ignore_rest()

    def _gpu_turn(self, store: CaptureStore) -> None:
        """Tells the GPU sampler of new devices, and takes the samples it gave."""
        announced = store.rows.announced
        if announced:
            if self._on_device is not None:
                for conn, device, d in announced:
                    remote = conn.peer.startswith("tcp:")
                    request = DeviceRequest(conn.process, device, d.vendor_id, d.pci, remote)
                    self._on_device(request)
            announced.clear()
        self._take_gpu_state(store)

    def _take_gpu_state(self, store: CaptureStore) -> None:
        while True:
            try:
                store.gpu_state(self._gpu_state.get_nowait())
            except queue.Empty:
                return

    def take_gpu_state(self, batch: GpuStateBatch) -> None:
        """Samples and GPUs from the host's GPU sampler, for the next commit (any thread)."""
        self._gpu_state.put(batch)

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

    def _close(
        self,
        client: _Client,
        selector: selectors.BaseSelector,
        clients: dict[int, _Client],
        store: CaptureStore,
    ) -> None:
        store.rows.ingest(client.conn, client.decoder.finish())
        store.disconnect(client.conn)
        selector.unregister(client.sock)
        del clients[client.sock.fileno()]
        client.sock.close()
        # A process has ended (or gone wrong): its last messages go to disk now, not in 100 ms.
        store.commit()

    def _close_listeners(self) -> None:
        for listener in self._listeners:
            listener.close()
        self._listeners.clear()
        self._listening_on.clear()
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
        self._take_gpu_state(store)  # what the sampler gave after the last turn
        if self._error is not None:
            store.rows.note(None, "server_error", self._error.strip().splitlines()[-1])
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
