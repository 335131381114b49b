"""A process of another local user, for the tests that a capture only takes its own user's
connections: `setpriv` drops the test's root to uid NOBODY (optionally keeping the capability to
pass any folder's permissions, so that only the socket's own check stands in its way)."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

NOBODY = 65534  # Debian's `nobody`: a real second user, owning nothing of the capture
SYSTEM_PYTHON = "/usr/bin/python3"  # readable by every user, unlike a test's virtual env

# Connects to a capture server's address as the layer would and sends what is not the protocol;
# prints `sent N` (and what came back), or `cannot connect: WHY`.
_HOSTILE = r"""
import socket, sys
kind, _, where = sys.argv[1].partition(":")
for _ in range(int(sys.argv[2])):
    if kind == "unix":
        sock = socket.socket(socket.AF_UNIX)
        address = "\0" + where[1:] if where.startswith("@") else where
    else:
        host, _, port = where.rpartition(":")
        sock = socket.socket(socket.AF_INET)
        address = (host, int(port))
    sock.settimeout(5)
    try:
        sock.connect(address)
    except OSError as exc:
        print("cannot connect:", exc.strerror or exc)
        continue
    junk = b"\xffnot the protocol\x00" * 4096
    sent = 0
    try:
        for _ in range(16):
            sent += sock.send(junk)
    except OSError as exc:
        print("send failed:", exc.strerror or exc)
    print("sent", sent)
    sock.close()
"""


def need_root() -> None:
    if os.geteuid() != 0:
        pytest.fail("acting as a second user needs root (CI runs as root): run the tests as root")


def as_other_user(cmd: list[str], *, pass_folders: bool = False) -> list[str]:
    """`cmd` run as NOBODY; `pass_folders`: with CAP_DAC_OVERRIDE, which reads past the
    permissions of files and folders (never a socket's peer check)."""
    caps = ["--inh-caps=+dac_override", "--ambient-caps=+dac_override"] if pass_folders else []
    ids = [f"--reuid={NOBODY}", f"--regid={NOBODY}", "--clear-groups"]
    return ["setpriv", *ids, *caps, *cmd]


def hostile_command(address: str, times: int = 1, *, pass_folders: bool = False) -> list[str]:
    """A command line that connects to `address` as NOBODY `times` times, sending junk."""
    cmd = [SYSTEM_PYTHON, "-c", _HOSTILE, address, str(times)]
    return as_other_user(cmd, pass_folders=pass_folders)


def hostile_connect(
    address: str, times: int = 1, *, pass_folders: bool = False, cwd: Path | None = None
) -> str:
    """Runs hostile_command and returns what it printed."""
    need_root()
    res = subprocess.run(
        hostile_command(address, times, pass_folders=pass_folders),
        capture_output=True,
        text=True,
        timeout=60,
        cwd=cwd or "/",
    )
    assert res.returncode == 0, res.stderr
    return res.stdout.strip()
