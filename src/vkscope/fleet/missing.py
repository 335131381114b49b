"""The fleet's dependencies are an extra (`pip install 'vkscope[fleet]'`; Spark also needs
`pyspark` and a Java runtime): a command that needs one that is missing says what to install."""

from __future__ import annotations

import importlib
from types import ModuleType
from typing import Final

_INSTALL: Final = {
    "pyarrow": "pip install 'vkscope[fleet]'",
    "duckdb": "pip install 'vkscope[fleet]'",
    "numpy": "pip install 'vkscope[fleet]'",
    "adbc_driver_sqlite": "pip install 'vkscope[fleet]'",
    "pyspark": "pip install 'vkscope[spark]' and a Java 17+ runtime "
    "(Debian: apt-get install openjdk-17-jre-headless)",
}


class MissingDependency(Exception):
    """A package the command needs is not installed; the message says how to install it."""


def require(module: str) -> ModuleType:
    try:
        return importlib.import_module(module)
    except ImportError:
        raise MissingDependency(
            f"this needs the Python package {module}, which is not installed: "
            f"{_INSTALL.get(module, f'pip install {module}')}"
        ) from None
