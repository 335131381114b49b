"""The host the benchmarks measure: this working tree's src/, not the copy installed in the
virtual environment (whatever `pip install .` built last). Importing this module puts src/ first
on sys.path, once, for every benchmark that imports vkscope; SRC is what they hand the processes
they start (on the command line, or in PYTHONPATH)."""

from __future__ import annotations

import sys

from bench.machine import REPO

SRC = REPO / "src"
if str(SRC) not in sys.path:
    sys.path.insert(0, str(SRC))
