#!/usr/bin/env bash
# Generates into the source tree what the build generates into the installed package: the host's
# protocol module (src/vkscope/protocol_gen.py, git-ignored), for mypy and for the
# benchmarks that run on the tree. scripts/setup.sh and scripts/test.sh run it.
set -euo pipefail
cd "$(dirname "$0")/.."
PYTHONPATH=generator .venv/bin/python -m vkscope_codegen.protocol_gen \
    --protocol src/vkscope/protocol.toml --python src/vkscope/protocol_gen.py
