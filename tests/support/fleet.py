"""Fleet datasets for the tests, and one Spark session (local mode, two executor threads)
shared by every Spark test of a run: starting Spark's JVM is most of what such a test costs."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from vkscope.fleet import generate
from vkscope.fleet.layout import Dataset

# A regression planted at build 30 on gpu-b, in workload 1 of each frame (GBuffer).
PLANTED = generate.Regression(build=30, device="gpu-b", identities=(1,), factor=1.15)
PLANTED_IDENTITY = generate.identity_text(*generate.workload(1))


def history(root: Path, **fields: Any) -> Dataset:
    dataset = Dataset(root)
    generate.write(dataset, generate.History(**fields))
    return dataset


@pytest.fixture(scope="session")
def spark() -> Iterator[Any]:
    """The session every SparkEngine of the run gets (getOrCreate finds it)."""
    from pyspark.sql import SparkSession

    session = (
        SparkSession.builder.master("local[2]")
        .appName("vkscope-tests")
        .config("spark.sql.shuffle.partitions", "4")
        .config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "false")
        .config("spark.sql.session.timeZone", "UTC")
        .getOrCreate()
    )
    session.sparkContext.setLogLevel("ERROR")
    assert session.sparkContext.defaultParallelism >= 2
    yield session
    session.stop()
