"""Generated histories: what a nightly CI of a game would export, made up, with a regression
planted where the caller says. For the tests (found, dated and attributed; no false alarm on a
history of noise alone), the benchmarks (a history of any size) and docs/fleet.md's walkthrough.

Each build runs on each device pool: one capture of `frames` frames of `workloads` workloads
each. A workload's GPU time is its identity's cost on that device, times a factor for the whole
run (`run_noise`: the machine that night), times one for the instance (`instance_noise`), both
normal; a planted regression multiplies its identities' costs on its device from its build on.
"""

from __future__ import annotations

import datetime
import hashlib
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Final

import pyarrow as pa

from .identity import identity_text
from .layout import Dataset, folder_name
from .missing import require
from .schema import CAPTURES, DATASET_VERSION, FRAMES, counter_column, instances_schema

_PASSES: Final = (
    ("renderpass", "Frame/Shadows", "0.0"),
    ("renderpass", "Frame/GBuffer", "0.0"),
    ("dispatch", "Frame/Particles", "1.0"),
    ("buffer_transfer", "Frame/Upload", "2.0"),
    ("renderpass", "Frame/Lighting", "0.0"),
    ("dispatch", "Frame/PostProcess/Bloom", "0.0"),
    ("dispatch", "Frame/PostProcess/Tonemap", "0.0"),
    ("image_transfer", "Frame/Readback", "2.0"),
)
COUNTER: Final = counter_column("fragment_shader_invocations")
START: Final = datetime.datetime(2026, 1, 5, 1, 0, tzinfo=datetime.UTC)


@dataclass(frozen=True)
class Regression:
    build: int  # from this build on
    device: str
    identities: tuple[int, ...] = (1,)  # workload numbers within a frame
    factor: float = 1.15


@dataclass(frozen=True)
class History:
    builds: int = 50
    devices: tuple[str, ...] = ("gpu-a", "gpu-b")
    frames: int = 10
    workloads: int = 40  # per frame
    instance_noise: float = 0.03
    run_noise: float = 0.01
    regressions: tuple[Regression, ...] = ()
    seed: int = 1
    builds_per_day: int = 1
    extra_tags: dict[str, str] = field(default_factory=dict)

    @property
    def captures(self) -> int:
        return self.builds * len(self.devices)

    @property
    def instances(self) -> int:
        return self.captures * self.frames * self.workloads


def workload(n: int) -> tuple[str, str, str, int]:
    """Type, label path, queue and ordinal of workload number `n` within a frame."""
    kind, label, queue = _PASSES[n % len(_PASSES)]
    return kind, label, queue, n // len(_PASSES)


def capture_id(history: History, build: int, device: str) -> str:
    key = f"{history.seed}/{build}/{device}".encode()
    return hashlib.sha256(key).hexdigest()[:32]


def _strings(values: list[str], times: int) -> pa.Array:
    one = pa.array(values, pa.string())
    return pa.concat_arrays([one] * times)


def _capture_tables(
    history: History, build: int, device: str, costs: object, rng: object
) -> dict[str, pa.Table]:
    np = require("numpy")
    frames, width = history.frames, history.workloads
    cid = capture_id(history, build, device)
    started = START + datetime.timedelta(hours=24 * (build - 1) / history.builds_per_day)
    date = started.date().isoformat()
    base = np.array(costs, dtype=np.float64)
    for planted in history.regressions:
        if planted.device == device and build >= planted.build:
            for n in planted.identities:
                base[n] *= planted.factor
    run_factor = 1.0 + rng.normal(0.0, history.run_noise)  # type: ignore[attr-defined]
    noise = 1.0 + rng.normal(0.0, history.instance_noise, size=(frames, width))  # type: ignore[attr-defined]
    gpu_ns = np.maximum(base[None, :] * run_factor * noise, 1.0).astype(np.int64).ravel()
    shapes = [workload(n) for n in range(width)]
    rows = frames * width
    kinds = [s[0] for s in shapes]
    fragments = np.where(
        np.tile(np.array([k == "renderpass" for k in kinds]), frames), gpu_ns * 3.0, np.nan
    )
    instances = pa.table(
        {
            "capture_id": pa.array([cid] * rows, pa.string()),
            "partition": pa.array([date] * rows, pa.string()),
            "process": pa.array(np.ones(rows, dtype=np.int64)),
            "device": pa.array([device] * rows, pa.string()),
            "frame": pa.array(np.repeat(np.arange(1, frames + 1, dtype=np.int64), width)),
            "queue": _strings([s[2] for s in shapes], frames),
            "identity": _strings([identity_text(*s) for s in shapes], frames),
            "type": _strings(kinds, frames),
            "label_path": _strings([s[1] for s in shapes], frames),
            "ordinal": pa.array(np.tile(np.array([s[3] for s in shapes], np.int32), frames)),
            "gpu_ns": pa.array(gpu_ns),
            "timing": pa.array(["ok"] * rows, pa.string()),
            "timing_reason": pa.nulls(rows, pa.string()),
            "serialization": pa.array(["queue"] * rows, pa.string()),
            "draws": pa.nulls(rows, pa.int64()),
            "groups_x": pa.nulls(rows, pa.int64()),
            "groups_y": pa.nulls(rows, pa.int64()),
            "groups_z": pa.nulls(rows, pa.int64()),
            "bytes": pa.nulls(rows, pa.int64()),
            "pixels": pa.nulls(rows, pa.int64()),
            "clock_changed": pa.nulls(rows, pa.bool_()),
            COUNTER: pa.array(fragments, from_pandas=True),
        },
        schema=instances_schema([COUNTER]),
    )
    per_frame = gpu_ns.reshape(frames, width).sum(axis=1)
    frames_table = pa.table(
        {
            "capture_id": [cid] * frames,
            "partition": [date] * frames,
            "process": [1] * frames,
            "device": [device] * frames,
            "frame": list(range(1, frames + 1)),
            "queue": ["0.0"] * frames,
            "cpu_ns": [int(i * 16_666_667) for i in range(frames)],
            "reason": ["present"] * frames,
            "captured": [True] * frames,
            "instances": [width] * frames,
            "timed_instances": [width] * frames,
            "gpu_ns": per_frame.tolist(),
        },
        schema=FRAMES,
    )
    tags = {
        "build": str(build),
        "device": device,
        "commit": hashlib.sha1(f"commit {build}".encode()).hexdigest()[:12],
        "branch": "main",
        **history.extra_tags,
    }
    captures = pa.table(
        {
            "capture_id": [cid],
            "partition": [date],
            "dataset_version": [DATASET_VERSION],
            "source": [f"generated-{build}-{device}.vkscope"],
            "schema_version": [None],
            "vkscope_version": [None],
            "status": ["complete"],
            "started_utc": [started],
            "finished_utc": [started + datetime.timedelta(seconds=30)],
            "date": [date],
            "application": ["game"],
            "device": [device],
            "driver": ["generated"],
            "vendor_id": [None],
            "device_id": [None],
            "api_version": [None],
            "devices": [1],
            "frames": [frames],
            "instances": [rows],
            "timed_instances": [rows],
            "tags": [list(tags.items())],
            "clocks": [None],
        },
        schema=CAPTURES,
    )
    return {"captures": captures, "frames": frames_table, "instances": instances}


def captures(history: History) -> Iterator[tuple[str, str, dict[str, pa.Table]]]:
    """Each capture of the history in build order: its id, partition value and tables."""
    np = require("numpy")
    rng = np.random.default_rng(history.seed)
    # Costs per device: a log-normal spread of workloads around 50 us, each device its speed.
    shared = rng.lognormal(np.log(50_000.0), 0.8, size=history.workloads)
    costs = {d: shared * (1.0 + 0.25 * n) for n, d in enumerate(history.devices)}
    for build in range(1, history.builds + 1):
        for device in history.devices:
            tables = _capture_tables(history, build, device, costs[device], rng)
            date = tables["captures"].column("date")[0].as_py()
            yield capture_id(history, build, device), date, tables


def write(dataset: Dataset, history: History) -> int:
    """Writes the history into `dataset` (partitioned by date); returns the captures written."""
    manifest = dataset.create("date")
    if COUNTER not in manifest.counters:
        manifest.counters[COUNTER] = {"name": "fragment_shader_invocations", "unit": "invocations"}
        dataset.write_manifest(manifest)
    written = 0
    with dataset.writing():
        have = dataset.capture_ids()
        for cid, date, tables in captures(history):
            if cid not in have:
                dataset.add(cid, date, tables)
                written += 1
    return written


__all__ = ["History", "Regression", "capture_id", "folder_name", "identity_text", "write"]
