#!/usr/bin/env python3
"""Runs a command and writes how long it ran to a file: wall-clock seconds (start to exit), the
CPU seconds of the command (user and system, every thread) and this script's own CPU seconds,
separated by spaces.

  python bench/child_time.py SECONDS_FILE [--cpus 1,3] -- COMMAND ARGS...

`--cpus` runs the command on those CPUs only (every thread it starts inherits the set).

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


def main(argv: list[str]) -> int:
    seconds_file, rest = argv[0] if argv else "", argv[1:]
    if rest[:1] == ["--cpus"] and len(rest) > 1:
        os.sched_setaffinity(0, {int(c) for c in rest[1].split(",")})
        rest = rest[2:]
    if len(rest) < 2 or rest[0] != "--":
        print("usage: child_time.py SECONDS_FILE [--cpus LIST] -- COMMAND ARGS...", file=sys.stderr)
        return 2
    start = time.perf_counter()
    code = subprocess.call(rest[1:])
    wall = time.perf_counter() - start
    command = resource.getrusage(resource.RUSAGE_CHILDREN)
    own = resource.getrusage(resource.RUSAGE_SELF)
    cpu = (command.ru_utime + command.ru_stime, own.ru_utime + own.ru_stime)
    Path(seconds_file).write_text(f"{wall:.6f} {cpu[0]:.6f} {cpu[1]:.6f}\n")
    return code


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
