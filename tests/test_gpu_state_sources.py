"""The host's GPU sampler and its sources (docs/gpu-state.md) on sysfs trees in the kernel's own
formats (tests/support/gpu_sysfs.py): what each driver's files give, in which units, what a GPU
does not offer and why, a GPU without the files, a file that disappears while sampling, and how
Vulkan devices are matched to GPUs by PCI address."""

from __future__ import annotations

import itertools
import threading
import time
from pathlib import Path

import pytest
from support import gpu_sysfs

from vkscope.gpu_state import (
    METRIC_NAMES,
    OVERRIDE,
    PCI_BUS_INFO,
    SLOW_INTERVAL_NS,
    DeviceRequest,
    GpuSampler,
    GpuSource,
    GpuStateBatch,
    NoGpu,
    normal_pci,
    open_gpu,
    sysfs_root,
)


def read_all(root: Path, pci: str) -> dict[str, int | float]:
    source = open_gpu(pci, None, root)
    return {name: read() for name, read in source.reads.items()}


def test_amdgpu_gives_clocks_power_temperature_and_busy_in_its_units(tmp_path: Path) -> None:
    gpu_sysfs.amdgpu(tmp_path, sclk_mhz=2482, power_uw=48_500_000)
    source = open_gpu(gpu_sysfs.AMD, 0x1002, tmp_path)
    info = source.info
    assert (info.vendor, info.driver, info.pci) == ("amd", "amdgpu", gpu_sysfs.AMD)
    assert {k: v() for k, v in source.reads.items()} == {
        "graphics_clock_mhz": 2482.0,  # freq1_input: Hz
        "memory_clock_mhz": 1249.0,
        "power_w": 48.5,  # power1_average: µW
        "temperature_c": 51.0,  # temp1_input: m°C
        "utilization_pct": 37,
    }
    assert info.origins["graphics_clock_mhz"].endswith("hwmon/hwmon1/freq1_input")
    # What amdgpu does not offer is said, with why.
    assert set(info.absent) == {"sm_clock_mhz", "energy_mj", "throttle"}
    assert "gpu_metrics" in info.absent["throttle"]
    assert info.graphics_clock_range == (500, 2900)  # pp_dpm_sclk's levels
    assert info.power_limit_w == 303.0
    assert info.steady_clocks is not None and "profile_standard" in info.steady_clocks


def test_amdgpu_without_hwmon_reads_the_dpm_tables(tmp_path: Path) -> None:
    device = gpu_sysfs.amdgpu(tmp_path)
    for f in (device / "hwmon" / "hwmon1").iterdir():
        f.unlink()
    (device / "hwmon" / "hwmon1").rmdir()
    source = open_gpu(gpu_sysfs.AMD, None, tmp_path)
    assert {k: v() for k, v in source.reads.items()} == {
        "graphics_clock_mhz": 2482,  # the level marked `*` in pp_dpm_sclk
        "memory_clock_mhz": 1249,
        "utilization_pct": 37,
    }
    assert "no hwmon folder" in source.info.absent["power_w"]


def test_i915_gives_the_actual_clock_and_its_throttle_reasons_as_bits(tmp_path: Path) -> None:
    gpu_sysfs.i915(tmp_path, mhz=1300, pl1=1)
    source = open_gpu(gpu_sysfs.INTEL_I915, None, tmp_path)
    info = source.info
    assert info.throttle_reasons[:3] == ("pl1", "pl2", "pl4")
    assert {k: v() for k, v in source.reads.items()} == {"graphics_clock_mhz": 1300, "throttle": 1}
    assert info.graphics_clock_range == (100, 1400)
    # An integrated GPU has no hwmon: its energy is the CPU package's.
    assert "CPU package" in info.absent["energy_mj"]
    assert set(info.absent) >= {"memory_clock_mhz", "power_w", "utilization_pct"}


def test_xe_gives_an_energy_counter_in_millijoules(tmp_path: Path) -> None:
    gpu_sysfs.xe(tmp_path, mhz=2850, energy_uj=81_234_567)
    values = read_all(tmp_path, gpu_sysfs.INTEL_XE)
    assert values == {
        "graphics_clock_mhz": 2850,
        "energy_mj": pytest.approx(81_234.567),  # energy1_input: µJ
        "temperature_c": 44.0,
        "throttle": 0,
    }
    info = open_gpu(gpu_sysfs.INTEL_XE, None, tmp_path).info
    assert info.power_limit_w == 190.0
    assert "max_freq" in (info.steady_clocks or "")


def test_a_gpu_vkscope_cannot_sample_says_why(tmp_path: Path) -> None:
    gpu_sysfs.unbound(tmp_path)
    with pytest.raises(NoGpu, match="no driver bound"):
        open_gpu(gpu_sysfs.NO_DRIVER, None, tmp_path)
    with pytest.raises(NoGpu, match=r"no PCI device 0000:0a:00\.0"):
        open_gpu("0000:0a:00.0", None, tmp_path)
    # A GPU whose driver gives none of the files: a source that offers nothing, says why.
    device = gpu_sysfs.device(tmp_path, gpu_sysfs.AMD)
    device.mkdir(parents=True)
    (device / "uevent").write_text("DRIVER=amdgpu\nPCI_ID=1002:744C\n")
    bare = open_gpu(gpu_sysfs.AMD, None, tmp_path)
    assert bare.reads == {}
    assert set(bare.info.absent) == set(METRIC_NAMES)


def test_pci_addresses_are_written_as_sysfs_writes_them() -> None:
    assert normal_pci("0000:3:0.0") == "0000:03:00.0"
    assert normal_pci(" 0000:C1:00.1 ") == "0000:c1:00.1"
    assert normal_pci("10000:01:00.0") == "00010000:01:00.0"
    with pytest.raises(ValueError, match="not a PCI address"):
        normal_pci("GPU-0")
    assert sysfs_root({}) == Path("/sys")
    assert sysfs_root({"VKSCOPE_SYSFS_ROOT": "/tmp/x"}) == Path("/tmp/x")


class Sink:
    def __init__(self) -> None:
        self.batches: list[GpuStateBatch] = []
        self.lock = threading.Lock()

    def __call__(self, batch: GpuStateBatch) -> None:
        with self.lock:
            self.batches.append(batch)

    def samples(self) -> list[tuple[int | float | None, ...]]:
        with self.lock:
            return [s for b in self.batches for s in b.samples]


def wait_for(condition: object, timeout: float = 10.0) -> None:
    deadline = time.monotonic() + timeout
    while not condition():  # type: ignore[operator]
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.01)


def test_the_sampler_matches_devices_by_pci_address_and_samples_on_time(tmp_path: Path) -> None:
    gpu_sysfs.amdgpu(tmp_path)
    gpu_sysfs.xe(tmp_path)
    sink = Sink()
    sampler = GpuSampler(sink, rate_hz=200, sysfs_root=tmp_path)
    sampler.start()
    begin = time.monotonic_ns()
    # Two processes' devices on the xe GPU, one on amdgpu: two GPUs sampled.
    sampler.add_device(DeviceRequest(1, 1, 0x8086, gpu_sysfs.INTEL_XE))
    sampler.add_device(DeviceRequest(2, 1, 0x8086, gpu_sysfs.INTEL_XE))
    sampler.add_device(DeviceRequest(1, 2, 0x1002, gpu_sysfs.AMD))
    sampler.add_device(DeviceRequest(1, 3, 0x10005, None))  # no VK_EXT_pci_bus_info
    sampler.add_device(DeviceRequest(3, 1, 0x1002, gpu_sysfs.AMD, remote=True))
    wait_for(lambda: len(sink.samples()) >= 60)
    sampler.stop()
    end = time.monotonic_ns()
    gpus = {g.info.pci: g.id for b in sink.batches for g in b.gpus}
    assert gpus == {gpu_sysfs.INTEL_XE: 1, gpu_sysfs.AMD: 2}
    devices = {(d.process, d.device): d for b in sink.batches for d in b.devices}
    assert (devices[1, 1].gpu, devices[2, 1].gpu, devices[1, 2].gpu) == (1, 1, 2)
    assert devices[1, 1].matched_by == PCI_BUS_INFO
    assert devices[1, 3].gpu is None and "--gpu-pci" in (devices[1, 3].reason or "")
    assert devices[3, 1].gpu is None and "another machine" in (devices[3, 1].reason or "")
    samples = sink.samples()
    assert all(begin <= s[1] <= end for s in samples)  # type: ignore[operator]
    xe = [s for s in samples if s[0] == 1]
    # Every metric column in METRIC_NAMES order: xe's clock, energy, temperature, throttle.
    assert xe[0][3:] == (2850, None, None, None, pytest.approx(81_234.567), 44.0, None, 0)
    times = [int(s[1]) for s in xe]  # type: ignore[arg-type]
    gaps = sorted(b - a for a, b in itertools.pairwise(times))
    assert 3_000_000 < gaps[len(gaps) // 2] < 10_000_000  # 200 Hz: every 5 ms
    (summary,) = [b.summary for b in sink.batches if b.summary is not None]
    assert summary.samples == len(samples)
    assert summary.interval_ns == 5_000_000
    assert 0 < summary.cpu_ns < summary.wall_ns


def test_a_device_announced_after_sampling_stopped_is_still_matched(tmp_path: Path) -> None:
    # The capture's last messages are read as it ends, after the sampler has stopped: a device
    # among them still gets its row (its GPU, or why none), with no samples.
    gpu_sysfs.amdgpu(tmp_path)
    sink = Sink()
    sampler = GpuSampler(sink, rate_hz=200, sysfs_root=tmp_path)
    sampler.start()
    sampler.stop()
    sampler.add_device(DeviceRequest(1, 1, 0x1002, gpu_sysfs.AMD))
    sampler.add_device(DeviceRequest(1, 2, 0x10005, None))
    devices = {(d.process, d.device): d for b in sink.batches for d in b.devices}
    assert devices[1, 1].gpu is not None and devices[1, 1].matched_by == PCI_BUS_INFO
    assert devices[1, 2].gpu is None and "--gpu-pci" in (devices[1, 2].reason or "")
    assert sink.samples() == []


def test_a_file_that_disappears_mid_capture_loses_that_metric_only(tmp_path: Path) -> None:
    device = gpu_sysfs.amdgpu(tmp_path)
    sink = Sink()
    sampler = GpuSampler(sink, rate_hz=500, sysfs_root=tmp_path)
    sampler.start()
    sampler.add_device(DeviceRequest(1, 1, 0x1002, gpu_sysfs.AMD))
    wait_for(lambda: len(sink.samples()) >= 10)
    (device / "hwmon" / "hwmon1" / "power1_average").unlink()
    gone_at = time.monotonic_ns()
    wait_for(lambda: len([s for s in sink.samples() if int(s[1]) > gone_at]) >= 10)  # type: ignore[arg-type]
    sampler.stop()
    power = METRIC_NAMES.index("power_w") + 3
    clock = METRIC_NAMES.index("graphics_clock_mhz") + 3
    after = [s for s in sink.samples() if int(s[1]) > gone_at + 5_000_000]  # type: ignore[arg-type]
    assert after and all(s[power] is None for s in after)
    assert all(s[clock] == 2482.0 for s in after)
    (row,) = [g for b in sink.batches for g in b.gpus][-1:]
    lost = row.lost["power_w"]
    assert lost.failures >= len(after)
    assert "No such file" in lost.reason and "power1_average" in lost.reason
    assert lost.first_ns >= gone_at - 5_000_000


def test_the_users_address_stands_in_for_a_device_without_one(tmp_path: Path) -> None:
    gpu_sysfs.i915(tmp_path)
    sink = Sink()
    sampler = GpuSampler(sink, sysfs_root=tmp_path, override_pci=gpu_sysfs.INTEL_I915)
    sampler.start()
    sampler.add_device(DeviceRequest(1, 1, 0x10005, None))
    sampler.add_device(DeviceRequest(1, 2, 0x8086, "0000:0b:00.0"))  # its own address wins
    wait_for(lambda: len(sink.samples()) >= 3)
    sampler.stop()
    devices = {d.device: d for b in sink.batches for d in b.devices}
    assert (devices[1].gpu, devices[1].matched_by) == (1, OVERRIDE)
    assert devices[2].gpu is None and devices[2].pci == "0000:0b:00.0"
    assert "no PCI device 0000:0b:00.0" in (devices[2].reason or "")


def test_a_slow_read_goes_to_its_own_thread_and_leaves_the_ticks_on_time(tmp_path: Path) -> None:
    """A metric as slow as NVML's energy total on an H200 (about 3 ms a call) is read apart:
    the other metrics keep their rate and their samples' times."""
    gpu_sysfs.xe(tmp_path)
    energy = METRIC_NAMES.index("energy_mj")

    def slow_energy(pci: str, vendor: int | None, root: Path) -> GpuSource:
        source = open_gpu(pci, vendor, root)
        read = source.reads["energy_mj"]

        def slow() -> int | float:
            time.sleep(0.003)
            return read()

        return GpuSource(source.info, {**source.reads, "energy_mj": slow}, source.close)

    sink = Sink()
    sampler = GpuSampler(sink, rate_hz=1000, sysfs_root=tmp_path, opener=slow_energy)
    sampler.start()
    sampler.add_device(DeviceRequest(1, 1, 0x8086, gpu_sysfs.INTEL_XE))
    wait_for(lambda: sum(s[energy + 3] is not None for s in sink.samples()) >= 8)
    sampler.stop()
    samples = sink.samples()
    with_energy = [s for s in samples if s[energy + 3] is not None]
    ticks = [s for s in samples if s[energy + 3] is None]
    # Energy in rows of its own, about every SLOW_INTERVAL_NS; the clocks in every other row.
    assert all(s[3] is None for s in with_energy)
    assert ticks and all(s[3] == 2850 for s in ticks)
    energy_times = [int(s[1]) for s in with_energy]  # type: ignore[arg-type]
    gaps = sorted(b - a for a, b in itertools.pairwise(energy_times))
    assert SLOW_INTERVAL_NS <= gaps[len(gaps) // 2] < 3 * SLOW_INTERVAL_NS
    # At 1 kHz, several ticks per energy read: the slow read holds none of them back.
    assert len(ticks) > 5 * len(with_energy)
