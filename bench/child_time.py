#!/usr/bin/env python3
"""Runs a command and writes how long it ran (wall-clock seconds, start to exit) to a file.

  python bench/child_time.py SECONDS_FILE -- COMMAND ARGS...

bench/frame_cost.py puts it between `vkscope run` and the application, so that what is timed is
the application alone: not vkscope's start-up, nor the capture it finalizes after the application
has exited. Its exit status is the command's. It loads no Vulkan itself.
"""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path


def main(argv: list[str]) -> int:
    if len(argv) < 3 or argv[1] != "--":
        print("usage: child_time.py SECONDS_FILE -- COMMAND ARGS...", file=sys.stderr)
        return 2
    start = time.perf_counter()
    code = subprocess.call(argv[2:])
    Path(argv[0]).write_text(f"{time.perf_counter() - start:.6f}\n")
    return code


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
