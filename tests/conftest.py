"""Shared fixtures: the installed vkscope package, its layer, and environments that enable it.

The tests run against the installed package (pip install .), never against the source tree, so
they exercise the layer and workload program exactly as a user gets them.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from vkscope import paths

# Fixtures of support modules that several test modules use (test modules never import each
# other): pages in headless Chromium, the workload program on the performance query fixture, the
# fault tests' C application.
pytest_plugins = ["support.browser", "support.performance_query", "support.fault_app"]


@pytest.fixture(scope="session")
def layer_dir() -> Path:
    return paths.layer_dir()


@pytest.fixture(scope="session")
def workload() -> Path:
    return paths.workload_program()
