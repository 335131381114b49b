"""Every read command on damaged captures: report, query, perfetto, html, diff and overlap answer a
damaged file with exit 2 and one line naming the file and what is wrong (or read what is left),
never a traceback, and never change the file or leave anything beside it.

The captures are real: the bundled workload program under `vkscope run`, timed with `queue` (the
one damaged) and with `none` (overlap's other side). Each kind of damage is a test; hypothesis
picks where it strikes (which byte, bit, page, table, row, column, value).
"""

from __future__ import annotations

import contextlib
import hashlib
import io
import os
import random
import shutil
import signal
import sqlite3
import struct
import subprocess
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, reject, settings
from hypothesis import strategies as st

from harness.env import base_env, run, vkscope_cli
from vkscope.capture import CaptureError, open_capture
from vkscope.capture.schema import SCHEMA_VERSION
from vkscope.cli import main

pytestmark = pytest.mark.vulkan

Draw = Callable[[st.SearchStrategy[object]], object]


@dataclass(frozen=True)
class Originals:
    queue: Path  # the capture that gets damaged
    none: Path  # the other side of an overlap


@pytest.fixture(scope="module")
def originals(tmp_path_factory: pytest.TempPathFactory, workload: Path) -> Originals:
    folder = tmp_path_factory.mktemp("originals")
    for timing in ("queue", "none"):
        res = run(
            [vkscope_cli(), "run", "--no-report", "--no-trace", "--no-html", "--timing", timing,
             "-o", folder / f"{timing}.vkscope", "--", workload, "--all", "--frames", "2"],
            base_env(), cwd=folder,
        )  # fmt: skip
        assert res.returncode == 0, res.stderr
    return Originals(folder / "queue.vkscope", folder / "none.vkscope")


@pytest.fixture(scope="module")
def killed(tmp_path_factory: pytest.TempPathFactory, workload: Path) -> Path:
    """A capture whose `vkscope run` was SIGKILLed mid-run: never finalized, its -wal and -shm
    beside it."""
    folder = tmp_path_factory.mktemp("killed")
    capture = folder / "killed.vkscope"
    proc = subprocess.Popen(
        [vkscope_cli(), "run", "--timing", "none", "-o", capture, "--", workload,
         "--scenario", "compute", "--frames", "1000000"],
        env=base_env(), cwd=folder, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )  # fmt: skip
    try:
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            with contextlib.suppress(CaptureError), open_capture(capture) as cap:
                if cap.workload_count() > 100:
                    break
            time.sleep(0.1)
    finally:
        children = Path(f"/proc/{proc.pid}/task/{proc.pid}/children").read_text().split()
        proc.kill()
        proc.wait()
        for child in children:  # the application, which SIGKILL leaves behind
            with contextlib.suppress(ProcessLookupError):
                os.kill(int(child), signal.SIGKILL)
    return capture


def test_a_capture_whose_vkscope_was_killed_reads_in_every_reader(
    killed: Path, originals: Originals
) -> None:
    with open_capture(killed) as cap:
        assert cap.meta.status == "capturing"
    beside = [Path(f"{killed}{end}") for end in ("", "-wal")]
    before = [hashlib.sha256(p.read_bytes()).hexdigest() for p in beside]
    with tempfile.TemporaryDirectory() as scratch:
        out = Path(scratch)
        for argv in (
            ["report", str(killed)],
            ["query", str(killed), "SELECT count(*) FROM instances_view"],
            ["perfetto", str(killed), "-o", str(out / "t.pftrace")],
            ["html", str(killed), "-o", str(out / "p.html")],
            ["diff", str(originals.none), str(killed), "--min-frames", "1"],
            ["overlap", str(killed), str(originals.queue)],
        ):
            code, text, err = _run(argv)
            assert code in (0, 1), (argv, err)
            if argv[0] == "report":
                assert "capturing: not finalized" in text
    assert [hashlib.sha256(p.read_bytes()).hexdigest() for p in beside] == before


# -- the damage ------------------------------------------------------------------------------


def _page_size(data: bytes | bytearray) -> int:
    size = struct.unpack_from(">H", data, 16)[0]
    return 65536 if size == 1 else size


def _page(draw: Draw, data: bytearray) -> int:
    pages = len(data) // _page_size(data)
    return int(draw(st.integers(0, pages - 1)))  # type: ignore[call-overload]


def _bytes(draw: Draw, size: int) -> bytes:
    seed = int(draw(st.integers(0, 2**32)))  # type: ignore[call-overload]
    return random.Random(seed).randbytes(size)


def _set(data: bytearray, offset: int, value: bytes) -> bytearray:
    data[offset : offset + len(value)] = value
    return data


def truncate_anywhere(data: bytearray, draw: Draw) -> bytearray:
    return data[: draw(st.integers(1, len(data) - 1))]  # type: ignore[misc]


def truncate_at_a_page(data: bytearray, draw: Draw) -> bytearray:
    return data[: _page(draw, data) * _page_size(data) or 100]


def truncate_inside_the_header(data: bytearray, draw: Draw) -> bytearray:
    return data[: draw(st.integers(16, 99))]  # type: ignore[misc]


def append_garbage(data: bytearray, draw: Draw) -> bytearray:
    return data + _bytes(draw, int(draw(st.integers(1, 5000))))  # type: ignore[call-overload]


def append_a_page_of_zeros(data: bytearray, draw: Draw) -> bytearray:
    return data + bytes(_page_size(data))


def flip_one_bit(data: bytearray, draw: Draw) -> bytearray:
    at = int(draw(st.integers(0, len(data) * 8 - 1)))  # type: ignore[call-overload]
    data[at // 8] ^= 1 << (at % 8)
    return data


def flip_a_header_bit(data: bytearray, draw: Draw) -> bytearray:
    at = int(draw(st.integers(16 * 8, 100 * 8 - 1)))  # type: ignore[call-overload]
    data[at // 8] ^= 1 << (at % 8)
    return data


def flip_many_bits(data: bytearray, draw: Draw) -> bytearray:
    rng = random.Random(int(draw(st.integers(0, 2**32))))  # type: ignore[call-overload]
    for _ in range(rng.randint(2, 200)):
        at = rng.randrange(100 * 8, len(data) * 8)
        data[at // 8] ^= 1 << (at % 8)
    return data


def flip_bits_in_one_page(data: bytearray, draw: Draw) -> bytearray:
    page, size = _page(draw, data), _page_size(data)
    rng = random.Random(int(draw(st.integers(0, 2**32))))  # type: ignore[call-overload]
    for _ in range(rng.randint(1, 64)):
        at = page * size * 8 + rng.randrange(max(800 if page == 0 else 0, 0), size * 8)
        data[at // 8] ^= 1 << (at % 8)
    return data


def zero_a_page(data: bytearray, draw: Draw) -> bytearray:
    page, size = _page(draw, data), _page_size(data)
    start = max(page * size, 100)
    return _set(data, start, bytes(page * size + size - start))


def random_page(data: bytearray, draw: Draw) -> bytearray:
    page, size = _page(draw, data), _page_size(data)
    start = max(page * size, 100)
    return _set(data, start, _bytes(draw, page * size + size - start))


def page_of_ones(data: bytearray, draw: Draw) -> bytearray:
    page, size = _page(draw, data), _page_size(data)
    start = max(page * size, 100)
    return _set(data, start, b"\xff" * (page * size + size - start))


def swap_two_pages(data: bytearray, draw: Draw) -> bytearray:
    size = _page_size(data)
    a, b = _page(draw, data), _page(draw, data)
    a, b = max(a, 1), max(b, 1)
    pa, pb = bytes(data[a * size : (a + 1) * size]), bytes(data[b * size : (b + 1) * size])
    _set(data, a * size, pb)
    return _set(data, b * size, pa)


def copy_a_page_over_another(data: bytearray, draw: Draw) -> bytearray:
    size = _page_size(data)
    a, b = max(_page(draw, data), 1), max(_page(draw, data), 1)
    return _set(data, b * size, bytes(data[a * size : (a + 1) * size]))


def damage_btree_page_headers(data: bytearray, draw: Draw) -> bytearray:
    # The first byte of a page says what kind of b-tree page it is.
    size = _page_size(data)
    page = max(_page(draw, data), 1)
    return _set(data, page * size, bytes([int(draw(st.integers(0, 255)))]))  # type: ignore[call-overload]


def damage_cell_pointers(data: bytearray, draw: Draw) -> bytearray:
    size = _page_size(data)
    page = max(_page(draw, data), 1)
    return _set(data, page * size + 8, _bytes(draw, 8))


def damage_the_schema_page(data: bytearray, draw: Draw) -> bytearray:
    at = int(draw(st.integers(100, _page_size(data) - 16)))  # type: ignore[call-overload]
    return _set(data, at, _bytes(draw, 16))


def zero_page_size(data: bytearray, draw: Draw) -> bytearray:
    return _set(data, 16, b"\x00\x00")


def odd_page_size(data: bytearray, draw: Draw) -> bytearray:
    size = int(draw(st.sampled_from([2, 3, 511, 1000, 4097, 12345, 65535])))  # type: ignore[call-overload]
    return _set(data, 16, struct.pack(">H", size))


def other_valid_page_size(data: bytearray, draw: Draw) -> bytearray:
    size = int(draw(st.sampled_from([1, 512, 1024, 2048, 4096, 16384, 32768])))  # type: ignore[call-overload]
    return _set(data, 16, struct.pack(">H", size))


def huge_page_count(data: bytearray, draw: Draw) -> bytearray:
    return _set(data, 28, struct.pack(">I", int(draw(st.integers(len(data), 2**32 - 1)))))  # type: ignore[call-overload]


def zero_page_count(data: bytearray, draw: Draw) -> bytearray:
    return _set(data, 28, b"\x00\x00\x00\x00")


def wal_mode_without_its_log(data: bytearray, draw: Draw) -> bytearray:
    return _set(data, 18, b"\x02\x02")


def unknown_file_format(data: bytearray, draw: Draw) -> bytearray:
    return _set(data, 18, bytes([int(draw(st.integers(3, 255)))] * 2))  # type: ignore[call-overload]


def reserved_bytes_per_page(data: bytearray, draw: Draw) -> bytearray:
    return _set(data, 20, bytes([int(draw(st.integers(1, 255)))]))  # type: ignore[call-overload]


def payload_fractions(data: bytearray, draw: Draw) -> bytearray:
    return _set(data, 21, _bytes(draw, 3))


def schema_cookie(data: bytearray, draw: Draw) -> bytearray:
    return _set(data, 40, _bytes(draw, 4))


def schema_format_number(data: bytearray, draw: Draw) -> bytearray:
    return _set(data, 44, struct.pack(">I", int(draw(st.sampled_from([0, 5, 99, 2**31])))))  # type: ignore[call-overload]


def text_encoding(data: bytearray, draw: Draw) -> bytearray:
    return _set(data, 56, struct.pack(">I", int(draw(st.sampled_from([2, 3, 4, 99])))))  # type: ignore[call-overload]


def header_user_version(data: bytearray, draw: Draw) -> bytearray:
    value = int(draw(st.sampled_from([0, 1, 3, 99, 2**31 - 1, 2**32 - 1])))  # type: ignore[call-overload]
    return _set(data, 60, struct.pack(">I", value))


def freelist_pointers(data: bytearray, draw: Draw) -> bytearray:
    return _set(data, 32, _bytes(draw, 8))


def damaged_magic(data: bytearray, draw: Draw) -> bytearray:
    at = int(draw(st.integers(0, 15)))  # type: ignore[call-overload]
    data[at] ^= 0x20
    return data


def all_zeros(data: bytearray, draw: Draw) -> bytearray:
    return bytearray(len(data))


def magic_then_noise(data: bytearray, draw: Draw) -> bytearray:
    return bytearray(data[:16] + _bytes(draw, 84) + data[100:])[:100] + _bytes(draw, 4096)


# Damage made with SQL on a copy: tables, rows and cells a writer never leaves like this.

_TABLES = ("meta", "processes", "devices", "queues", "frames", "label_stacks", "workloads",
           "submits", "workload_instances", "annexes", "logs", "diagnostics")  # fmt: skip


def _sql(path: Path, *statements: str) -> None:
    db = sqlite3.connect(path, isolation_level=None)
    try:
        for sql in statements:
            db.execute(sql)
    except sqlite3.Error:
        reject()  # SQLite will not do it (a column in a key or an index, a constraint): again
    finally:
        db.close()


def _column(path: Path, draw: Draw, table: str | None = None) -> tuple[str, str]:
    table = table or str(draw(st.sampled_from(_TABLES)))
    with contextlib.closing(sqlite3.connect(path)) as db:
        columns = [r[1] for r in db.execute(f"PRAGMA table_info({table})")]
    return table, str(draw(st.sampled_from(columns)))


def drop_a_table(path: Path, draw: Draw) -> None:
    table = draw(st.sampled_from(_TABLES))
    _sql(path, "DROP VIEW IF EXISTS instances_view", f"DROP TABLE {table}")


def drop_the_view(path: Path, draw: Draw) -> None:
    _sql(path, "DROP VIEW instances_view")


def drop_an_index(path: Path, draw: Draw) -> None:
    index = draw(st.sampled_from(["submits_by_frame", "submits_by_submit_id", "workloads_by_tag"]))
    _sql(path, f"DROP INDEX {index}")


def drop_a_column(path: Path, draw: Draw) -> None:
    table, column = _column(path, draw)
    _sql(path, "DROP VIEW IF EXISTS instances_view", f"ALTER TABLE {table} DROP COLUMN {column}")


def rename_a_column(path: Path, draw: Draw) -> None:
    table, column = _column(path, draw)
    _sql(path, "DROP VIEW IF EXISTS instances_view",
         f"ALTER TABLE {table} RENAME COLUMN {column} TO renamed")  # fmt: skip


def empty_a_table(path: Path, draw: Draw) -> None:
    _sql(path, f"DELETE FROM {draw(st.sampled_from(_TABLES))}")


_ODD_VALUES = ["'x'", "'12abc'", "x'00ff'", "1.5", "-1", "NULL", str(2**63 - 1), str(-(2**63)),
               "'[1,2'", "'{}'", "''", "CAST(x'fffe41' AS TEXT)"]  # fmt: skip


def a_cell_of_the_wrong_type(path: Path, draw: Draw) -> None:
    table, column = _column(path, draw)
    value = draw(st.sampled_from(_ODD_VALUES))
    _sql(path, f"UPDATE {table} SET {column} = {value} WHERE rowid IN "
               f"(SELECT rowid FROM {table} ORDER BY random() LIMIT 1)")  # fmt: skip


def a_whole_column_of_the_wrong_type(path: Path, draw: Draw) -> None:
    table, column = _column(path, draw)
    _sql(path, f"UPDATE {table} SET {column} = {draw(st.sampled_from(_ODD_VALUES))}")


def an_instance_time_of_the_wrong_type(path: Path, draw: Draw) -> None:
    column = draw(st.sampled_from(["gpu_begin_ns", "gpu_end_ns", "submit_row", "tag_id"]))
    _sql(path, f"UPDATE workload_instances SET {column} = {draw(st.sampled_from(_ODD_VALUES))} "
               "WHERE id % 7 = 3")  # fmt: skip


_BAD_JSON = ["'{\"a\": '", "'[1, 2, 3]'", "'42'", "'\"text\"'", "'null'", "'{\"groups\": \"x\"}'",
             "'[\"a\", 5]'", "'not json'"]  # fmt: skip


def _json_damage(path: Path, draw: Draw, table: str, column: str) -> None:
    value = draw(st.sampled_from(_BAD_JSON))
    _sql(path, f"UPDATE {table} SET {column} = {value} WHERE rowid IN "
               f"(SELECT rowid FROM {table} ORDER BY random() LIMIT 2)")  # fmt: skip


def malformed_workload_metadata(path: Path, draw: Draw) -> None:
    _json_damage(path, draw, "workloads", "metadata")


def malformed_annex(path: Path, draw: Draw) -> None:
    _json_damage(path, draw, "workload_instances", "annex")


def malformed_label_path(path: Path, draw: Draw) -> None:
    _json_damage(path, draw, "label_stacks", "path")


def malformed_queue_flags(path: Path, draw: Draw) -> None:
    _json_damage(path, draw, "queues", "flags")


def text_that_is_not_utf8(path: Path, draw: Draw) -> None:
    table, column = _column(path, draw, str(draw(st.sampled_from(
        ["workloads", "label_stacks", "devices", "processes", "meta"]))))  # fmt: skip
    _sql(path, f"UPDATE {table} SET {column} = CAST(x'c328ff' AS TEXT) WHERE rowid IN "
               f"(SELECT rowid FROM {table} LIMIT 1)")  # fmt: skip


def a_diagnostic_excerpt_that_is_not_hex(path: Path, draw: Draw) -> None:
    _sql(path, "INSERT INTO diagnostics (connection, offset, kind, message_type, reason, excerpt) "
               "VALUES (1, 10, 'bad', 1, 'odd', 'zz1')")  # fmt: skip


def meta_values_of_the_wrong_type(path: Path, draw: Draw) -> None:
    key = draw(st.sampled_from(["status", "schema_version", "connections", "messages", "pid",
                                "process_name", "created_utc", "dropped"]))  # fmt: skip
    _sql(path, f"UPDATE meta SET value = {draw(st.sampled_from(_ODD_VALUES))} WHERE key = '{key}'")


def meta_without_keys(path: Path, draw: Draw) -> None:
    _sql(
        path,
        "DELETE FROM meta WHERE key IN ('status', "
        f"'{draw(st.sampled_from(['schema_version', 'connections', 'pid']))}')",
    )


def submits_pointing_nowhere(path: Path, draw: Draw) -> None:
    first = draw(st.sampled_from([-(2**63), -5, 2**62, 2**63 - 1]))
    count = draw(st.sampled_from([0, -3, 2**40, 2**63 - 1]))
    _sql(path, f"UPDATE submits SET first_instance = {first}, instance_count = {count} "
               "WHERE rowid IN (SELECT rowid FROM submits ORDER BY random() LIMIT 3)")  # fmt: skip


def instances_naming_nothing(path: Path, draw: Draw) -> None:
    column = draw(st.sampled_from(["tag_id", "label_stack_id", "submit_row", "process"]))
    _sql(path, f"UPDATE workload_instances SET {column} = {draw(st.sampled_from([0, -1, 2**62]))}"
               " WHERE id % 5 = 0")  # fmt: skip


def times_that_run_backwards(path: Path, draw: Draw) -> None:
    _sql(
        path,
        "UPDATE workload_instances SET gpu_end_ns = gpu_begin_ns - 1000000 WHERE id % 3 = 0",
        "UPDATE submits SET cpu_ns = -cpu_ns WHERE id % 2 = 0",
    )


def frames_out_of_range(path: Path, draw: Draw) -> None:
    value = draw(st.sampled_from([-1, 2**63 - 1, -(2**63), None]))
    _sql(path, f"UPDATE submits SET frame = {'NULL' if value is None else value} WHERE id % 2 = 0",
         f"UPDATE frames SET number = {'NULL' if value is None else value}")  # fmt: skip


def newer_schema_version(path: Path, draw: Draw) -> None:
    _sql(path, f"PRAGMA user_version = {draw(st.integers(SCHEMA_VERSION + 1, 2**31 - 1))}")


def a_table_that_is_a_view(path: Path, draw: Draw) -> None:
    table = draw(st.sampled_from(["devices", "queues", "frames", "logs", "label_stacks"]))
    _sql(path, "DROP VIEW IF EXISTS instances_view", f"DROP TABLE {table}",
         f"CREATE VIEW {table} AS SELECT 1 AS x")  # fmt: skip


BYTE_DAMAGE = [
    truncate_anywhere, truncate_at_a_page, truncate_inside_the_header, append_garbage,
    append_a_page_of_zeros, flip_one_bit, flip_a_header_bit, flip_many_bits,
    flip_bits_in_one_page, zero_a_page, random_page, page_of_ones, swap_two_pages,
    copy_a_page_over_another, damage_btree_page_headers, damage_cell_pointers,
    damage_the_schema_page, zero_page_size, odd_page_size, other_valid_page_size,
    huge_page_count, zero_page_count, wal_mode_without_its_log, unknown_file_format,
    reserved_bytes_per_page, payload_fractions, schema_cookie, schema_format_number,
    text_encoding, header_user_version, freelist_pointers, damaged_magic, all_zeros,
    magic_then_noise,
]  # fmt: skip
SQL_DAMAGE = [
    drop_a_table, drop_the_view, drop_an_index, drop_a_column, rename_a_column, empty_a_table,
    a_cell_of_the_wrong_type, a_whole_column_of_the_wrong_type,
    an_instance_time_of_the_wrong_type, malformed_workload_metadata, malformed_annex,
    malformed_label_path, malformed_queue_flags, text_that_is_not_utf8,
    a_diagnostic_excerpt_that_is_not_hex, meta_values_of_the_wrong_type, meta_without_keys,
    submits_pointing_nowhere, instances_naming_nothing, times_that_run_backwards,
    frames_out_of_range, newer_schema_version, a_table_that_is_a_view,
]  # fmt: skip
# Damage no reader can read past: every command must refuse the file.
FATAL = {truncate_inside_the_header, zero_page_size, odd_page_size, damaged_magic, all_zeros,
         unknown_file_format, newer_schema_version, text_encoding}  # fmt: skip


def test_there_are_at_least_forty_kinds_of_damage() -> None:
    assert len(BYTE_DAMAGE) + len(SQL_DAMAGE) >= 40


# -- the commands ----------------------------------------------------------------------------


def _commands(damaged: Path, originals: Originals, out: Path) -> list[list[str]]:
    d, q, n = str(damaged), str(originals.queue), str(originals.none)
    return [
        ["report", d],
        ["report", d, "--format", "json", "--frames", "0-"],
        ["query", d, "SELECT * FROM instances_view", "--format", "csv"],
        ["perfetto", d, "-o", str(out / "trace.pftrace")],
        ["html", d, "-o", str(out / "page.html")],
        ["diff", q, d, "--format", "json"],
        ["overlap", n, d, "--format", "json"],
    ]


def _run(argv: list[str]) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(argv)  # an exception here is the traceback a user would see
    return code, out.getvalue(), err.getvalue()


def _fingerprint(folder: Path) -> dict[str, str]:
    return {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in sorted(folder.iterdir())}


def _check_every_reader(damaged: Path, originals: Originals, must_fail: bool) -> None:
    folder = damaged.parent
    before = _fingerprint(folder)
    with tempfile.TemporaryDirectory() as scratch:
        for argv in _commands(damaged, originals, Path(scratch)):
            code, _, err = _run(argv)
            assert code in (0, 1, 2), (argv, code, err)
            if code == 2 or must_fail:
                assert code == 2, (argv, err)
                lines = err.splitlines()
                assert len(lines) == 1 and lines[0].startswith("vkscope"), (argv, err)
                assert str(damaged) in err, (argv, err)
            assert "Traceback" not in err
            # The file is read, never changed, and nothing is left beside it (-wal, -shm).
            assert _fingerprint(folder) == before, argv


def _damaged_copy(original: Path, folder: Path) -> Path:
    path = folder / "damaged.vkscope"
    shutil.copyfile(original, path)
    return path


_SETTINGS = settings(
    max_examples=4,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
    database=None,
)


@pytest.mark.parametrize("damage", BYTE_DAMAGE, ids=lambda f: f.__name__)
@_SETTINGS
@given(data=st.data())
def test_damaged_bytes(
    originals: Originals, damage: Callable[[bytearray, Draw], bytearray], data: st.DataObject
) -> None:
    with tempfile.TemporaryDirectory() as folder:
        path = _damaged_copy(originals.queue, Path(folder))
        path.write_bytes(bytes(damage(bytearray(path.read_bytes()), data.draw)))
        _check_every_reader(path, originals, damage in FATAL)


@pytest.mark.parametrize("damage", SQL_DAMAGE, ids=lambda f: f.__name__)
@_SETTINGS
@given(data=st.data())
def test_damaged_contents(
    originals: Originals, damage: Callable[[Path, Draw], None], data: st.DataObject
) -> None:
    with tempfile.TemporaryDirectory() as folder:
        path = _damaged_copy(originals.queue, Path(folder))
        damage(path, data.draw)
        _check_every_reader(path, originals, damage in FATAL)
