"""The GPU's state during `vkscope run` on lavapipe (docs/gpu-state.md): the host samples a GPU of
a sysfs fixture (tests/support/gpu_sysfs.py) named by --gpu-pci, since lavapipe has no PCI
address; its clock and power move while the application runs. The samples are stored, joined to
frames and workloads, shown by report (text, JSON, CSV), HTML, Perfetto and diff, warned about;
an older capture still opens; bad options are refused before the application starts."""

from __future__ import annotations

import csv
import io
import json
import sqlite3
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from support import gpu_sysfs
from support.captures import downgrade_to_version_8
from support.perfetto import ReadTrace

from harness.env import base_env, run, vkscope_cli
from vkscope.capture import open_capture
from vkscope.capture.read.gpu_join import GpuJoin
from vkscope.html.page import page_data

pytestmark = pytest.mark.vulkan

RATE_HZ = 400
LOW_MHZ, HIGH_MHZ = 1900, 2482
POWER_W = (40, 45, 50, 55, 60, 65, 70)


@dataclass(frozen=True)
class Captures:
    moving: Path  # clocks and power moving under the application
    fast: Path  # clocks held at HIGH_MHZ
    slow: Path  # clocks held at half of it
    unsampled: Path  # no --gpu-pci: lavapipe names no GPU
    root: Path


def record(tmp: Path, root: Path, name: str, *extra: str, frames: int = 6) -> Path:
    out = tmp / f"{name}.vkscope"
    res = run(
        [vkscope_cli(), "run", "--timing", "queue", "-s", "frame_submits=1", "-o", out,
         "--no-report", "--no-html", "--no-trace", *extra, "--", _workload(),
         "--scenario", "compute", "--frames", str(frames), "--compute-iterations", "4000"],
        {**base_env(), "VKSCOPE_SYSFS_ROOT": str(root)}, cwd=tmp,
    )  # fmt: skip
    assert res.returncode == 0, res.stdout + res.stderr
    return out


def _workload() -> Path:
    from vkscope import paths

    return paths.workload_program()


@pytest.fixture(scope="module")
def captures(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Captures]:
    tmp = tmp_path_factory.mktemp("gpu_state")
    root = tmp / "sys"
    gpu_sysfs.amdgpu(root)
    stop = threading.Event()

    def move() -> None:  # what power management does to the GPU while it works
        n = 0
        while not stop.wait(0.01):
            gpu_sysfs.set_amd_clock(root, gpu_sysfs.AMD, HIGH_MHZ if n % 2 else LOW_MHZ)
            gpu_sysfs.set_amd_power(root, gpu_sysfs.AMD, POWER_W[n % len(POWER_W)])
            n += 1

    mover = threading.Thread(target=move)
    mover.start()
    try:
        moving = record(tmp, root, "moving", "--gpu-pci", gpu_sysfs.AMD, "--gpu-state-rate",
                        str(RATE_HZ))  # fmt: skip
    finally:
        stop.set()
        mover.join()
    gpu_sysfs.set_amd_clock(root, gpu_sysfs.AMD, HIGH_MHZ)
    fast = record(tmp, root, "fast", "--gpu-pci", gpu_sysfs.AMD, frames=5)
    gpu_sysfs.set_amd_clock(root, gpu_sysfs.AMD, HIGH_MHZ // 2)
    slow = record(tmp, root, "slow", "--gpu-pci", gpu_sysfs.AMD, frames=5)
    unsampled = record(tmp, root, "unsampled", frames=1)
    yield Captures(moving, fast, slow, unsampled, root)


def report(path: Path, *args: str) -> str:
    res = run([vkscope_cli(), "report", path, *args], {**base_env(), "COLUMNS": "250"})
    assert res.returncode == 0, res.stdout + res.stderr
    return res.stdout


@pytest.mark.solo
def test_the_samples_are_stored_with_the_gpu_and_how_it_was_matched(captures: Captures) -> None:
    with open_capture(captures.moving) as capture:
        (gpu,) = capture.gpus()
        assert (gpu.pci, gpu.vendor, gpu.driver) == (gpu_sysfs.AMD, "amd", "amdgpu")
        assert gpu.interval_ns == 1_000_000_000 // RATE_HZ
        assert set(gpu.origins) == {"graphics_clock_mhz", "memory_clock_mhz", "power_w",
                                    "temperature_c", "utilization_pct"}  # fmt: skip
        assert "energy_mj" in gpu.absent and "throttle" in gpu.absent
        (device,) = capture.device_gpus()
        assert (device.gpu, device.pci, device.matched_by) == (gpu.id, gpu_sysfs.AMD, "override")
        samples = list(capture.gpu_samples(gpu.id))
        sampling = capture.gpu_sampling()
        assert sampling is not None and sampling.samples == len(samples)
        assert len(samples) >= 0.5 * sampling.wall_ns / gpu.interval_ns
        assert {s.graphics_clock_mhz for s in samples} == {LOW_MHZ, HIGH_MHZ}
        assert {s.power_w for s in samples} <= set(map(float, POWER_W))
        # On CLOCK_MONOTONIC, like the submissions they are joined to.
        submits = [s.cpu_ns for s in capture.submits()]
        assert samples[0].t_ns < max(submits) and min(submits) < samples[-1].t_ns
    with open_capture(captures.unsampled) as capture:
        assert capture.gpus() == []
        (device,) = capture.device_gpus()
        assert device.gpu is None and "no PCI address" in (device.reason or "")


def test_the_report_warns_when_the_clocks_moved_and_says_how_to_hold_them(
    captures: Captures,
) -> None:
    text = report(captures.moving, "--table", "workloads")
    assert f"AMD GPU 1002:744c at {gpu_sysfs.AMD} (amdgpu), sampled every 2.50 ms" in text
    moved = f"the graphics clock moved during the captured frames: {LOW_MHZ} to {HIGH_MHZ} MHz"
    assert moved in text
    assert "to hold its clocks steady: echo profile_standard | sudo tee" in text
    assert "not offered by this GPU: sm_clock_mhz, energy_mj, throttle" in text
    steady = report(captures.fast, "--table", "workloads")
    assert f"graphics {HIGH_MHZ:,} MHz; memory 1,249 MHz" in steady
    assert "warning" not in steady
    assert "not sampled: the driver gives no PCI address" in report(captures.unsampled)


def test_frames_and_workloads_carry_their_clocks_and_energy(captures: Captures) -> None:
    data = json.loads(report(captures.moving, "--format", "json"))
    (gpu,) = data["capture"]["gpu_state"]["gpus"]
    state = gpu["state"]
    assert state["graphics_clock_mhz"]["min"] == LOW_MHZ
    assert state["graphics_clock_mhz"]["max"] == HIGH_MHZ
    assert gpu["energy_signal"] == "power_w"
    resolution = gpu["energy_resolution_ns"]
    assert resolution >= 1_000_000_000 // RATE_HZ
    # The captured frames' energy: what their power allows over at most the whole sampling.
    wall_s = data["capture"]["gpu_state"]["sampling"]["wall_ns"] / 1e9
    assert 0 < state["energy_mj"] <= max(POWER_W) * wall_s * 1000
    frames = data["frames"]
    assert len(frames) >= 5
    for f in frames:
        assert f["gpu_clock_min_mhz"] in (LOW_MHZ, HIGH_MHZ)
        assert LOW_MHZ <= f["gpu_clock_mhz"] <= HIGH_MHZ
        assert min(POWER_W) <= f["power_w"] <= max(POWER_W)
    with open_capture(captures.moving) as capture:
        first_sample = next(capture.gpu_samples(1)).t_ns
    # Sampling starts once the application created its device: work before the first sample
    # says so (the first frame, here).
    timed = [w for w in data["workloads"] if w["gpu_ns"] is not None]
    early = [w for w in timed if w["gpu_begin_ns"] < first_sample and w["gpu_ns"] >= resolution]
    assert all(w["energy_note"] == "outside the samples" for w in early)
    timed = [w for w in timed if w["gpu_begin_ns"] > first_sample]
    long = [w for w in timed if w["gpu_ns"] >= resolution]
    short = [w for w in timed if w["gpu_ns"] < resolution]
    assert long and short, [w["gpu_ns"] for w in timed]
    for w in long:  # energy over its window: what power x duration allows
        assert min(POWER_W) <= w["power_w"] <= max(POWER_W)
        assert w["energy_mj"] == pytest.approx(w["power_w"] * w["gpu_ns"] * 1e-6)
    for w in short:  # not resolved: said, never 0
        assert w["energy_mj"] is None and w["power_w"] is None
        assert w["energy_note"].startswith("shorter than the GPU's power_w readings resolve")
    assert any(w["clock_changed"] for w in long)
    csv_frames = list(csv.DictReader(io.StringIO(
        report(captures.moving, "--format", "csv", "--table", "frames"))))  # fmt: skip
    assert [float(r["gpu_clock_min_mhz"]) for r in csv_frames] == [
        f["gpu_clock_min_mhz"] for f in frames
    ]


def test_perfetto_has_a_counter_track_per_metric(captures: Captures, tmp_path: Path) -> None:
    out = tmp_path / "t.pftrace"
    res = run([vkscope_cli(), "perfetto", captures.moving, "-o", out], base_env())
    assert res.returncode == 0, res.stderr
    trace = ReadTrace(out)
    (parent,) = [t for t in trace.tracks.values() if t.name.startswith("GPU state: AMD GPU")]
    children = {t.name: t for t in trace.children(parent.uuid)}
    assert set(children) == {"graphics clock", "memory clock", "power", "temperature",
                             "utilization"}  # fmt: skip
    assert all(t.counter for t in children.values())
    clock = [e.value for e in trace.events if e.track == children["graphics clock"].uuid]
    with open_capture(captures.moving) as capture:
        assert len(clock) == capture.gpu_sampling().samples  # type: ignore[union-attr]
    assert set(clock) == {LOW_MHZ, HIGH_MHZ}


def test_the_html_page_draws_a_clock_and_a_power_track(
    captures: Captures, tmp_path: Path, load: Any
) -> None:
    with open_capture(captures.moving) as capture:
        data = page_data(capture)
    tracks = data["gpu_state"]["tracks"]
    assert [t["name"] for t in tracks] == ["graphics clock (MHz)", "power (W)"]
    assert set(tracks[0]["v"]) == {LOW_MHZ, HIGH_MHZ}
    page = tmp_path / "p.html"
    assert run([vkscope_cli(), "html", captures.moving, "-o", page], base_env()).returncode == 0
    loaded = load(page)
    assert loaded.errors == []
    # The tracks' rows are the canvas's last 2 x 46 CSS pixels: the clock's line is drawn there.
    drawn = loaded.js("""() => {
        const c = document.getElementById('timeline');
        const dpr = window.devicePixelRatio || 1;
        const h = c.height, rowH = Math.round(46 * dpr);
        const px = c.getContext('2d').getImageData(Math.round(170 * dpr), h - 2 * rowH,
                                                   c.width - Math.round(190 * dpr), rowH).data;
        let blue = 0;
        for (let i = 0; i < px.length; i += 4) if (px[i + 2] > 150 && px[i] < 100) blue++;
        return blue;
    }""")
    assert drawn > 50


def test_diff_says_the_clocks_differ_and_normalizes_on_request(captures: Captures) -> None:
    env = base_env()
    res = run([vkscope_cli(), "diff", captures.fast, captures.slow, "--format", "json"], env)
    assert res.returncode in (0, 1), res.stderr
    plain = json.loads(res.stdout)
    clocks = plain["clocks"]
    assert (clocks["base_mhz"], clocks["new_mhz"]) == (HIGH_MHZ, HIGH_MHZ // 2)
    assert clocks["differ"] and clocks["change_pct"] == pytest.approx(-50.0, abs=0.1)
    res = run([vkscope_cli(), "diff", captures.fast, captures.slow, "--normalize-clock",
               "--format", "json"], env)  # fmt: skip
    scaled = json.loads(res.stdout)
    assert scaled["clocks"]["normalized"] and scaled["clocks"]["new_scale"] == pytest.approx(0.5)
    per_frame = scaled["totals"]["gpu_ns_per_frame"]
    before = plain["totals"]["gpu_ns_per_frame"]["new"]["median_ns"]
    assert per_frame["new"]["median_ns"] == pytest.approx(before * 0.5, rel=1e-3)
    text = run([vkscope_cli(), "diff", captures.fast, captures.slow], env).stdout
    assert f"GPU clock: base {HIGH_MHZ} MHz, new {HIGH_MHZ // 2} MHz (-50.0%)" in text
    refused = run([vkscope_cli(), "diff", captures.fast, captures.unsampled,
                   "--normalize-clock"], env)  # fmt: skip
    assert refused.returncode == 2
    assert "has no sampled graphics clock" in refused.stderr and "Traceback" not in refused.stderr


def test_the_fleet_dataset_gets_the_clocks(captures: Captures, tmp_path: Path) -> None:
    pytest.importorskip("pyarrow")
    import pyarrow.parquet as pq

    dataset = tmp_path / "fleet"
    res = run([vkscope_cli(), "export", "--parquet", dataset, captures.moving,
               captures.unsampled], base_env())  # fmt: skip
    assert res.returncode == 0, res.stdout + res.stderr
    captures_table = pq.read_table(dataset / "captures").to_pylist()
    clocks = {r["source"]: r["clocks"] for r in captures_table}
    assert clocks["unsampled.vkscope"] is None
    (gpu,) = json.loads(clocks["moving.vkscope"])["gpus"]
    assert gpu["state"]["graphics_clock_mhz"]["max"] == HIGH_MHZ
    instances = pq.read_table(dataset / "instances").to_pylist()
    unsampled = _id(captures.unsampled)
    assert True in {r["clock_changed"] for r in instances if r["capture_id"] != unsampled}
    assert {r["clock_changed"] for r in instances if r["capture_id"] == unsampled} == {None}


def _id(path: Path) -> str:
    with open_capture(path) as capture:
        assert capture.meta.capture_id is not None
        return capture.meta.capture_id


def test_an_older_capture_opens_without_gpu_state(captures: Captures, tmp_path: Path) -> None:
    old = tmp_path / "v8.vkscope"
    old.write_bytes(captures.fast.read_bytes())
    downgrade_to_version_8(old)
    with open_capture(old) as capture:
        assert capture.schema_version == 8
        assert capture.gpus() == [] and capture.device_gpus() == []
        assert not GpuJoin(capture)
        assert all(d.pci is None for d in capture.devices())
    text = report(old, "--table", "workloads")
    assert "sampled every" not in text and "not sampled" not in text


def test_bad_sampling_options_are_refused_before_the_application_starts(tmp_path: Path) -> None:
    for args, said in (
        (["--gpu-state-rate", "0"], "--gpu-state-rate must be 1 to 2000"),
        (["--gpu-pci", "first"], "--gpu-pci: 'first' is not a PCI address"),
    ):
        res = run([vkscope_cli(), "run", *args, "-o", tmp_path / "x.vkscope", "--",
                   _workload(), "--scenario", "compute"], base_env(), cwd=tmp_path)  # fmt: skip
        assert res.returncode == 2, res.stdout + res.stderr
        assert said in res.stderr and "Traceback" not in res.stderr
        assert "PASS" not in res.stdout


def test_no_gpu_state_samples_nothing(tmp_path: Path) -> None:
    out = tmp_path / "off.vkscope"
    res = run([vkscope_cli(), "run", "--no-gpu-state", "--gpu-pci", gpu_sysfs.AMD, "-o", out,
               "--no-report", "--no-html", "--no-trace", "--", _workload(), "--scenario",
               "compute", "--frames", "1"], base_env(), cwd=tmp_path)  # fmt: skip
    assert res.returncode == 0, res.stderr
    with sqlite3.connect(out) as db:
        assert db.execute("SELECT count(*) FROM device_gpus").fetchone() == (0,)
        assert db.execute("SELECT count(*) FROM gpu_samples").fetchone() == (0,)
