#!/usr/bin/env python3
"""Runs a command and writes how long it ran to a file: wall-clock seconds (start to exit), the
CPU seconds of the command (user and system, every thread) and this script's own CPU seconds,
separated by spaces; with `--run-queue`, a fourth: the seconds the command's threads were ready
to run but waited for a CPU.

  python bench/child_time.py SECONDS_FILE [--cpus 1,3] [--run-queue] -- COMMAND ARGS...

`--cpus` runs the command on those CPUs only (every thread it starts inherits the set).

`--run-queue` reads the kernel's scheduler statistics of every thread of the command
(/proc/PID/task/TID/schedstat: time on a CPU, time waiting on a run queue) every POLL_S while it
runs, and adds up each thread's last reading. A thread's record goes when the thread ends, so
what it waited after the last reading is lost: up to POLL_S of wall time, of which a thread waits
a small part; a caller that compares two frame counts cancels it. The polling costs this
script's CPU, which is why it is an option: a run that measures time should not pay for it.

bench/frame_cost.py puts it between `vkscope run` and the application, so that what is timed is
the application alone: not vkscope's start-up, nor the capture it finalizes after the application
has exited. Its exit status is the command's. It loads no Vulkan itself.
"""

from __future__ import annotations

import os
import resource
import subprocess
import sys
import time
from pathlib import Path

POLL_S = 0.02


def thread_waits(pid: int) -> dict[int, int]:
    """Nanoseconds each live thread of `pid` has waited on a run queue."""
    waits: dict[int, int] = {}
    try:
        tids = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return waits
    for tid in tids:
        try:
            fields = Path(f"/proc/{pid}/task/{tid}/schedstat").read_text().split()
        except OSError:
            continue  # the thread ended between the listing and the read
        waits[int(tid)] = int(fields[1])
    return waits


def run_polled(command: list[str]) -> tuple[int, float]:
    """Runs `command`; its exit status and the seconds its threads waited on a run queue."""
    proc = subprocess.Popen(command)
    last: dict[int, int] = {}
    while proc.poll() is None:
        last.update(thread_waits(proc.pid))
        time.sleep(POLL_S)
    return proc.returncode, sum(last.values()) / 1e9


def main(argv: list[str]) -> int:
    seconds_file, rest = argv[0] if argv else "", argv[1:]
    if rest[:1] == ["--cpus"] and len(rest) > 1:
        os.sched_setaffinity(0, {int(c) for c in rest[1].split(",")})
        rest = rest[2:]
    run_queue = rest[:1] == ["--run-queue"]
    rest = rest[1:] if run_queue else rest
    if len(rest) < 2 or rest[0] != "--":
        print(
            "usage: child_time.py SECONDS_FILE [--cpus LIST] [--run-queue] -- COMMAND ARGS...",
            file=sys.stderr,
        )
        return 2
    start = time.perf_counter()
    if run_queue:
        code, waited = run_polled(rest[1:])
    else:
        code = subprocess.call(rest[1:])
    wall = time.perf_counter() - start
    command = resource.getrusage(resource.RUSAGE_CHILDREN)
    own = resource.getrusage(resource.RUSAGE_SELF)
    values = [wall, command.ru_utime + command.ru_stime, own.ru_utime + own.ru_stime]
    if run_queue:
        values.append(waited)
    Path(seconds_file).write_text(" ".join(f"{v:.6f}" for v in values) + "\n")
    return code


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
