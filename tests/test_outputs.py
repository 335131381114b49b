"""Where the commands write (src/vkscope/outputs.py), each command run as its own process:

- an `-o` that is a character device (made with mknod) or a FIFO is written in place, never
  replaced: /dev/null takes the output, /dev/full ends the command with one line and exit code 2,
  and the node is still the same device afterwards;
- a regular file is replaced whole or not at all: on a full file system (a small tmpfs in a mount
  namespace of its own) the old file stays as it was and no partial file is left;
- a folder or a socket is refused before anything is written, a missing folder said as such;
- a full standard output is one line and exit code 2, a closed one (`| head`) no error at all;
- `vkscope run` into a full standard output says so once and exits with the application's
  status, its capture, trace and page written.
"""

from __future__ import annotations

import os
import shlex
import signal
import socket
import stat
import subprocess
import sys
import threading
from collections.abc import Callable
from pathlib import Path
from typing import IO

import pytest
from support.analysis_scenes import scene
from support.captures import capture_from
from support.other_user import need_root

from harness.env import base_env, vkscope_cli

FULL = os.makedev(1, 7)  # the kernel's /dev/full: every write fails with ENOSPC
NULL = os.makedev(1, 3)  # /dev/null
NO_SPACE = "No space left on device"

Command = Callable[[Path], list[str]]


@pytest.fixture(scope="module")
def captures(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """A capture timed with `queue` serialization and one with `none` (for overlap)."""
    folder = tmp_path_factory.mktemp("outputs")
    queue = capture_from(folder, scene("queue"), name="queue.vkscope")
    none = capture_from(folder, scene("none"), name="none.vkscope")
    return queue, none


@pytest.fixture(scope="module")
def commands(captures: tuple[Path, Path]) -> dict[str, Command]:
    """Each command that writes a file, as the arguments that write it to `out`."""
    cap, none = map(str, captures)
    return {
        "report": lambda out: ["report", cap, "-o", str(out)],
        "report-json": lambda out: ["report", cap, "--format", "json", "-o", str(out)],
        "query": lambda out: ["query", cap, "SELECT * FROM workloads", "-o", str(out)],
        "overlap": lambda out: ["overlap", none, cap, "-o", str(out)],
        "html": lambda out: ["html", cap, "-o", str(out)],
        "perfetto": lambda out: ["perfetto", cap, "-o", str(out)],
    }


NAMES = ["report", "report-json", "query", "overlap", "html", "perfetto"]


def vkscope(
    args: list[str], stdout: int | IO[str] = subprocess.PIPE
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "vkscope", *args],
        stdout=stdout,
        stderr=subprocess.PIPE,
        text=True,
        timeout=120,
    )


def one_line(err: str) -> str:
    """The one line a command ends with on an output it cannot write."""
    assert "Traceback" not in err, err
    assert err.startswith("vkscope: ") and err.count("\n") == 1, err
    return err


def written_to_a_file(command: Command, folder: Path) -> bytes:
    """What the command writes as a regular file (the reference for the other kinds)."""
    out = folder / "reference.out"
    res = vkscope(command(out))
    assert res.returncode == 0, res.stderr
    data = out.read_bytes()
    out.unlink()
    return data


@pytest.mark.parametrize("name", NAMES)
def test_a_full_character_device_is_written_in_place_and_said(
    commands: dict[str, Command], name: str, tmp_path: Path
) -> None:
    need_root()
    device = tmp_path / "full"
    os.mknod(device, stat.S_IFCHR | 0o666, FULL)
    res = vkscope(commands[name](device))
    assert res.returncode == 2, (res.stdout, res.stderr)
    assert one_line(res.stderr) == f"vkscope: cannot write {device}: {NO_SPACE}\n"
    assert res.stdout == ""  # no "wrote" for what was not written
    after = device.stat()
    assert stat.S_ISCHR(after.st_mode) and after.st_rdev == FULL, "the device was replaced"
    assert [p.name for p in tmp_path.iterdir()] == ["full"]  # no partial file beside it


@pytest.mark.parametrize("name", NAMES)
def test_the_null_device_takes_the_output_and_stays_a_device(
    commands: dict[str, Command], name: str, tmp_path: Path
) -> None:
    need_root()
    device = tmp_path / "null"
    os.mknod(device, stat.S_IFCHR | 0o666, NULL)
    res = vkscope(commands[name](device))
    assert res.returncode == 0, res.stderr
    assert res.stderr == ""
    after = device.stat()
    assert stat.S_ISCHR(after.st_mode) and after.st_rdev == NULL
    assert [p.name for p in tmp_path.iterdir()] == ["null"]


@pytest.mark.parametrize("name", ["html", "perfetto", "report-json"])
def test_a_fifo_gets_what_a_file_would(
    commands: dict[str, Command], name: str, tmp_path: Path
) -> None:
    expected = written_to_a_file(commands[name], tmp_path)
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    got: list[bytes] = []
    reader = threading.Thread(target=lambda: got.append(fifo.read_bytes()))
    reader.start()
    res = vkscope(commands[name](fifo))
    reader.join(timeout=60)
    assert res.returncode == 0, res.stderr
    assert got == [expected]
    assert stat.S_ISFIFO(fifo.stat().st_mode)
    assert [p.name for p in tmp_path.iterdir()] == ["pipe"]


def in_a_full_file_system(args: list[str]) -> tuple[int, str, list[str], str]:
    """Runs vkscope with its output on a 64 KiB tmpfs (in a mount namespace of its own) that
    holds `out`, the previous output, and is otherwise full; returns the exit code, stderr,
    the folder's files and what `out` holds afterwards."""
    mount = "/mnt/vkscope-full"  # inside the namespace only; made there
    script = f"""
set -e
mkdir -p {mount}
mount -t tmpfs -o size=64k vkscope-full {mount}
printf 'the previous output' > {mount}/out
head -c 1M /dev/zero > {mount}/filler 2>/dev/null || true
set +e
{shlex.join([sys.executable, "-m", "vkscope", *args])} >/dev/null 2>{mount}/../vkscope-full.err
echo "rc=$?"
cat {mount}/../vkscope-full.err >&2
ls -A {mount}
echo "--"
cat {mount}/out
"""
    res = subprocess.run(["unshare", "--mount", "sh", "-c", script], capture_output=True,
                         text=True, timeout=120)  # fmt: skip
    head, _, old = res.stdout.partition("--\n")
    rc_line, *files = head.splitlines()
    assert rc_line.startswith("rc="), (res.stdout, res.stderr)
    return int(rc_line[3:]), res.stderr, files, old


@pytest.mark.parametrize("name", NAMES)
def test_a_full_file_system_leaves_the_previous_file(
    commands: dict[str, Command], name: str
) -> None:
    need_root()
    out = Path("/mnt/vkscope-full/out")
    code, err, files, old = in_a_full_file_system(commands[name](out))
    assert code == 2, err
    assert one_line(err) == f"vkscope: cannot write {out}: {NO_SPACE}\n"
    assert sorted(files) == ["filler", "out"]  # no partial file left
    assert old == "the previous output"


def test_a_link_keeps_pointing_at_its_file(commands: dict[str, Command], tmp_path: Path) -> None:
    expected = written_to_a_file(commands["html"], tmp_path)
    target = tmp_path / "pages" / "page.html"
    target.parent.mkdir()
    target.write_text("an older page")
    target.chmod(0o640)
    link = tmp_path / "latest.html"
    link.symlink_to(target)
    res = vkscope(commands["html"](link))
    assert res.returncode == 0, res.stderr
    assert link.is_symlink() and link.resolve() == target
    assert target.read_bytes() == expected
    assert stat.S_IMODE(target.stat().st_mode) == 0o640
    assert sorted(p.name for p in target.parent.iterdir()) == ["page.html"]


def test_dev_stdout_writes_into_the_file_standard_output_is(
    commands: dict[str, Command], tmp_path: Path
) -> None:
    """`-o /dev/stdout > FILE`: the file standard output has open, written and not replaced."""
    expected = written_to_a_file(commands["report-json"], tmp_path)
    redirected = tmp_path / "stdout.json"
    redirected.write_text("an older report, longer than the new one? " * 100_000)
    inode = redirected.stat().st_ino
    with redirected.open("r+") as stdout:
        res = vkscope(commands["report-json"](Path("/dev/stdout")), stdout=stdout)
    assert res.returncode == 0, res.stderr
    assert redirected.stat().st_ino == inode
    assert redirected.read_bytes() == expected
    assert [p.name for p in tmp_path.iterdir()] == ["stdout.json"]


def test_what_cannot_be_an_output_is_refused(commands: dict[str, Command], tmp_path: Path) -> None:
    folder = tmp_path / "folder"
    folder.mkdir()
    listening = tmp_path / "socket"
    with socket.socket(socket.AF_UNIX) as sock:
        sock.bind(str(listening))
        for path, why in (
            (folder, "it is a folder"),
            (listening, "it is a socket"),
            (tmp_path / "missing" / "out", f"the folder {tmp_path / 'missing'} does not exist"),
        ):
            for name in NAMES:
                res = vkscope(commands[name](path))
                assert res.returncode == 2, (name, res.stderr)
                assert one_line(res.stderr) == f"vkscope: cannot write {path}: {why}\n", name
    assert sorted(p.name for p in tmp_path.iterdir()) == ["folder", "socket"]
    assert list(folder.iterdir()) == []


@pytest.mark.parametrize(
    "args",
    [
        ["report", "{cap}"],
        ["report", "{cap}", "--format", "markdown"],
        ["query", "{cap}", "SELECT * FROM workloads", "--format", "csv"],
        ["overlap", "{none}", "{cap}"],
        ["diff", "{none}", "{cap}"],
        ["html", "{cap}", "-o", "{tmp}/page.html"],  # its one line, "wrote ..."
    ],
    ids=["report", "markdown", "query", "overlap", "diff", "html"],
)
def test_a_full_standard_output_is_one_line(
    captures: tuple[Path, Path], args: list[str], tmp_path: Path
) -> None:
    cap, none = captures
    args = [a.format(cap=cap, none=none, tmp=tmp_path) for a in args]
    with open("/dev/full", "w") as full:
        res = vkscope(args, stdout=full)
    assert res.returncode == 2, res.stderr
    assert one_line(res.stderr) == f"vkscope: cannot write standard output: {NO_SPACE}\n"


def test_a_closed_standard_output_is_no_error(captures: tuple[Path, Path]) -> None:
    """`vkscope query ... | head -1`: the reader has all it wanted."""
    cap, _ = captures
    many = "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n LIMIT 500000) SELECT i FROM n"  # noqa: E501
    proc = subprocess.Popen(
        [sys.executable, "-m", "vkscope", "query", str(cap), many, "--format", "csv"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    assert proc.stdout is not None and proc.stderr is not None
    assert proc.stdout.readline() == b"i\n"
    proc.stdout.close()
    err = proc.stderr.read().decode()
    assert proc.wait(timeout=60) == 0, err
    assert err == ""


@pytest.mark.vulkan
def test_run_into_a_full_standard_output_keeps_the_application_status(
    fault_app: Path, tmp_path: Path
) -> None:
    cap = tmp_path / "run.vkscope"
    cmd = [vkscope_cli(), "run", "-o", str(cap), "-s", "frame_submits=1", "--",
           str(fault_app), "crash", "abrt", "3"]  # fmt: skip
    with open("/dev/full", "w") as full:
        res = subprocess.run(cmd, stdout=full, stderr=subprocess.PIPE, text=True,
                             env=base_env(), cwd=tmp_path, timeout=300)  # fmt: skip
    assert res.returncode == 128 + signal.SIGABRT, res.stderr  # as without vkscope
    assert "Traceback" not in res.stderr
    assert res.stderr.count(f"cannot write standard output: {NO_SPACE}") == 1, res.stderr
    for written in (cap, cap.with_suffix(".pftrace"), cap.with_suffix(".html")):
        assert written.stat().st_size > 0, written
