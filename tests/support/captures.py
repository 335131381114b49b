"""Captures made the real way for tests: protocol streams sent to a real CaptureServer over a Unix
socket, each on its own connection, and the finished file returned; and such a capture turned
into what an older vkscope wrote."""

from __future__ import annotations

import sqlite3
import time
import uuid
from collections.abc import Iterable
from pathlib import Path

from vkscope.capture import CaptureServer, store_instance_columns
from vkscope.capture.schema import INSTANCES_VIEW_SELECT
from vkscope.capture.write.client import Stream, connect


def capture_from(
    tmp_path: Path,
    streams: Iterable[Stream] | Stream,
    *,
    name: str = "cap.vkscope",
    one_by_one: bool = False,
) -> Path:
    """Sends each stream over its own connection to a real capture server writing
    `tmp_path`/`name`; returns the file, finalized (its status checked: complete).

    `one_by_one` sends one message at a time and waits for the server to commit it, so that
    every annex meets an instance that is already in the file (or not there yet).
    """
    streams = [streams] if isinstance(streams, Stream) else list(streams)
    path = tmp_path / name
    server = CaptureServer(path, [f"unix:@vkscope-test-{uuid.uuid4().hex}"],
                           batch_messages=1 if one_by_one else 50_000,
                           commit_interval_s=0.01,
                           finishing=store_instance_columns)  # fmt: skip
    with server:
        for sent, s in enumerate(streams, 1):
            with connect(server.addresses[0]) as sock:
                for piece in s.frames if one_by_one else [s.data()]:
                    sock.sendall(piece)
                    if one_by_one:
                        _settle(server)
            deadline = time.monotonic() + 30
            while True:
                c = server.counters()
                if c.connections == sent and not c.open_connections and not c.uncommitted:
                    break
                assert time.monotonic() < deadline, f"the server did not take the stream: {c}"
                time.sleep(0.01)
        summary = server.stop()
    assert summary.status == "complete", summary
    return path


def _settle(server: CaptureServer) -> None:
    deadline = time.monotonic() + 5
    time.sleep(0.005)
    while server.counters().uncommitted and time.monotonic() < deadline:
        time.sleep(0.005)


def downgrade_to_version_8(path: Path) -> None:
    """What a version 8 vkscope wrote: no GPU state sampled by the host, no PCI address, no
    stored instance columns."""
    with sqlite3.connect(path) as db:
        db.execute("DROP TABLE instance_columns")
        db.execute("DELETE FROM meta WHERE key = 'instance_columns'")
        for table in ("gpus", "device_gpus", "gpu_samples"):
            db.execute(f"DROP TABLE {table}")
        db.execute("ALTER TABLE devices DROP COLUMN pci")
        db.execute("PRAGMA user_version = 8")
        db.execute("UPDATE meta SET value = 8 WHERE key = 'schema_version'")


def downgrade_to_version_2(path: Path) -> None:
    """What a version 2 vkscope wrote: no journal (its rows went straight to the tables), no
    counters, no tags."""
    downgrade_to_version_8(path)
    with sqlite3.connect(path) as db:
        db.execute("DROP TABLE tags")
        db.execute("DELETE FROM meta WHERE key = 'capture_id'")
        db.execute("DROP TABLE journal")
        db.execute("DROP TABLE device_counters")
        db.execute("DROP TABLE command_buffer_counters")
        db.execute("PRAGMA user_version = 2")
        db.execute("UPDATE meta SET value = 2 WHERE key = 'schema_version'")


def downgrade_to_version_1(path: Path) -> None:
    """What a version 1 vkscope wrote: no timing columns, and the version 1 view."""
    v1_view = INSTANCES_VIEW_SELECT.split("FROM workload_instances")[0].split(", i.gpu_end_ns -")[0]
    downgrade_to_version_2(path)
    with sqlite3.connect(path) as db:
        db.execute("DROP VIEW instances_view")
        for table, column in (
            ("devices", "clock_domain"), ("devices", "clock_max_deviation_ns"),
            ("frames", "captured"), ("submits", "cpu_complete_ns"),
            ("workload_instances", "timing"), ("workload_instances", "timing_reason"),
            ("workload_instances", "serialization"),
        ):  # fmt: skip
            db.execute(f"ALTER TABLE {table} DROP COLUMN {column}")
        rest = INSTANCES_VIEW_SELECT[INSTANCES_VIEW_SELECT.index("FROM workload_instances") :]
        db.execute(f"CREATE VIEW instances_view AS {v1_view}, i.gpu_end_ns\n{rest}")
        db.execute("UPDATE workload_instances SET gpu_begin_ns = NULL, gpu_end_ns = NULL")
        db.execute("PRAGMA user_version = 1")
        db.execute("UPDATE meta SET value = 1 WHERE key = 'schema_version'")
