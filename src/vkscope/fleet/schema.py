"""The fleet dataset's tables, as Arrow schemas: one definition for the writer, both engines and
docs/fleet.md.

A dataset is a folder of Parquet files (layout.py): `captures` (one row per capture: its
provenance and tags), `frames` (one row per frame) and `instances` (one row per workload
instance). DATASET_VERSION changes whenever a reader of the previous version would misread a
dataset of the new one (a column removed, renamed or given another meaning or unit); a new
nullable column keeps it, and both engines read files with and without it side by side (by
column name: a file without a column reads it as NULL).

Counters are columns of `instances`, one per counter the captures collected, named
`counter_<name>` (counter_column): DOUBLE, NULL where an instance has no value of it.
"""

from __future__ import annotations

import re
from typing import Final

import pyarrow as pa

# 1: captures, frames, instances; identity and usable GPU time from the capture's read side.
DATASET_VERSION: Final = 1
FORMAT: Final = "vkscope-fleet"

TABLES: Final = ("captures", "frames", "instances")

CAPTURES: Final = pa.schema(
    [
        pa.field("capture_id", pa.string(), nullable=False),
        pa.field("partition", pa.string(), nullable=False),
        pa.field("dataset_version", pa.int32(), nullable=False),
        pa.field("source", pa.string()),  # the capture's file name when exported
        pa.field("schema_version", pa.int32()),  # the capture file's
        pa.field("vkscope_version", pa.string()),
        pa.field("status", pa.string()),  # complete, incomplete, capturing
        pa.field("started_utc", pa.timestamp("us", tz="UTC")),
        pa.field("finished_utc", pa.timestamp("us", tz="UTC")),
        pa.field("date", pa.string()),  # started_utc's UTC date, YYYY-MM-DD
        pa.field("application", pa.string()),  # the first process's name
        pa.field("device", pa.string()),  # the first device's name
        pa.field("driver", pa.string()),  # its driver name and info
        pa.field("vendor_id", pa.int64()),
        pa.field("device_id", pa.int64()),
        pa.field("api_version", pa.string()),
        pa.field("devices", pa.int32()),  # how many devices the capture has
        pa.field("frames", pa.int64()),
        pa.field("instances", pa.int64()),
        pa.field("timed_instances", pa.int64()),
        pa.field("tags", pa.map_(pa.string(), pa.string())),  # vkscope run --tag KEY=VALUE
        # The GPU's clocks during the capture, as JSON, where a sampler recorded them; NULL
        # where none did.
        pa.field("clocks", pa.string()),
    ]
)

FRAMES: Final = pa.schema(
    [
        pa.field("capture_id", pa.string(), nullable=False),
        pa.field("partition", pa.string(), nullable=False),
        pa.field("process", pa.int64()),
        pa.field("device", pa.string()),
        pa.field("frame", pa.int64()),
        pa.field("queue", pa.string()),  # the presenting queue, family.index
        pa.field("cpu_ns", pa.int64()),
        pa.field("reason", pa.string()),
        pa.field("captured", pa.bool_()),
        pa.field("instances", pa.int64()),
        pa.field("timed_instances", pa.int64()),
        pa.field("gpu_ns", pa.int64()),  # the frame's GPU time: its timed instances' sum
    ]
)

INSTANCES: Final = pa.schema(
    [
        pa.field("capture_id", pa.string(), nullable=False),
        pa.field("partition", pa.string(), nullable=False),
        pa.field("process", pa.int64()),
        pa.field("device", pa.string()),
        pa.field("frame", pa.int64()),
        pa.field("queue", pa.string()),  # family.index
        pa.field("identity", pa.string(), nullable=False),  # stable across frames and captures
        pa.field("type", pa.string()),
        pa.field("label_path", pa.string()),
        pa.field("ordinal", pa.int32()),  # occurrence within its parent, in the identity
        pa.field("gpu_ns", pa.int64()),  # usable GPU time; NULL: not timed (timing says why)
        pa.field("timing", pa.string()),
        pa.field("timing_reason", pa.string()),
        pa.field("serialization", pa.string()),
        pa.field("draws", pa.int64()),
        pa.field("groups_x", pa.int64()),
        pa.field("groups_y", pa.int64()),
        pa.field("groups_z", pa.int64()),
        pa.field("bytes", pa.int64()),
        pa.field("pixels", pa.int64()),
        # Sampled GPU state where a sampler recorded it: whether the clock changed during it.
        pa.field("clock_changed", pa.bool_()),
    ]
)

SCHEMAS: Final = {"captures": CAPTURES, "frames": FRAMES, "instances": INSTANCES}

COUNTER_PREFIX: Final = "counter_"
_NOT_IN_NAME: Final = re.compile(r"[^0-9a-z]+")


def counter_column(name: str) -> str:
    """The instances column of a counter: lower case, runs of anything but letters and digits
    as one underscore (`Shader Cycles (ALU)` -> counter_shader_cycles_alu)."""
    return COUNTER_PREFIX + (_NOT_IN_NAME.sub("_", name.lower()).strip("_") or "unnamed")


def instances_schema(counters: list[str]) -> pa.Schema:
    """The instances schema with a DOUBLE column for each of `counters` (column names)."""
    schema = INSTANCES
    for column in counters:
        schema = schema.append(pa.field(column, pa.float64()))
    return schema
