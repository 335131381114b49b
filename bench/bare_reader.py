"""A stand-in for the capture server that only reads: what the layer's messages cost the
application, without the host's work beside it (bench/frame_cost.py's `sink` configuration)."""

from __future__ import annotations

import os
import socket
import threading
from pathlib import Path


class BareReader:
    """A Unix socket that accepts every connection and reads it to its end, keeping nothing: the
    layer streams to it as to a capture server, but nothing is decoded or stored. Its thread runs
    on `cpus` (the host's, in the split placement)."""

    def __init__(self, folder: Path, cpus: set[int] | None = None) -> None:
        self.path = folder / "bare-reader.sock"
        self.path.unlink(missing_ok=True)
        self._listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self._listener.bind(str(self.path))
        self._listener.listen(16)
        self._cpus = cpus
        self._thread = threading.Thread(target=self._serve, name="bare-reader", daemon=True)

    def __enter__(self) -> str:
        self._thread.start()
        return f"unix:{self.path}"

    def __exit__(self, *exc: object) -> None:
        self._listener.shutdown(socket.SHUT_RDWR)
        self._listener.close()
        self._thread.join(timeout=10)
        self.path.unlink(missing_ok=True)

    def _serve(self) -> None:
        if self._cpus:
            os.sched_setaffinity(0, self._cpus)  # this thread only
        while True:
            try:
                conn, _ = self._listener.accept()
            except OSError:
                return  # closed
            threading.Thread(target=self._drain, args=(conn,), daemon=True).start()

    def _drain(self, conn: socket.socket) -> None:
        if self._cpus:
            os.sched_setaffinity(0, self._cpus)
        with conn:
            while conn.recv(1 << 20):
                pass
