"""The host's side of samplers (docs/counters.md): `--counters` items naming samplers are checked
before the application starts, the notes say where samples are per command buffer, `vkscope
counters` lists them per device, and the values of several counter sources merge per instance."""

from __future__ import annotations

import dataclasses
import json
import subprocess
from pathlib import Path

import pytest

from harness.env import base_env, layer_env, run, vkscope_cli
from vkscope.capture.write.annexes import merge_annex
from vkscope.counters.samplers import (
    SamplerError,
    check_devices,
    check_samplers,
    handover_supported,
    listing,
    requested,
    sampling_notes,
    without_samplers,
)
from vkscope.devices import probe

ROOT = Path(__file__).resolve().parents[1]


def test_sampler_items_are_told_apart_from_other_counters() -> None:
    text = "pipeline_statistics, sampler:cpu_time,sampler:/opt/x.so ,fragment_shader_invocations"
    assert requested(text) == ["cpu_time", "/opt/x.so"]
    assert without_samplers(text) == "pipeline_statistics,fragment_shader_invocations"
    assert check_samplers("sampler:cpu_time,sampler:mali") == ["cpu_time", "mali"]
    # The in-layer NVML sampler gave way to the host's GPU sampler: naming it says so.
    with pytest.raises(SamplerError, match="sampler:nvml is gone: `vkscope run` samples"):
        check_samplers("sampler:cpu_time,sampler:nvml")
    with pytest.raises(SamplerError, match="names no sampler"):
        requested("sampler:")
    with pytest.raises(SamplerError, match="no sampler named 'cpu'"):
        check_samplers("sampler:cpu")


def test_a_library_must_answer_the_interface(tmp_path: Path) -> None:
    good = tmp_path / "counting.so"
    src = ROOT / "tests/support/samplers/counting.c"
    subprocess.run(
        ["cc", "-shared", "-fPIC", "-I", str(ROOT / "include"), "-o", str(good), str(src)],
        check=True,
    )
    assert check_samplers(f"sampler:{good}") == [str(good)]
    text = tmp_path / "text.so"
    text.write_text("not a library")
    with pytest.raises(SamplerError, match="cannot be loaded"):
        check_samplers(f"sampler:{text}")


@pytest.mark.vulkan
def test_lavapipe_is_on_the_handover_list_and_others_get_a_note() -> None:
    (device, *_) = probe()
    assert handover_supported(device)
    assert sampling_notes([device], None) == []
    other = dataclasses.replace(device, vendor_id=0x1002, name="some GPU")
    assert not handover_supported(other)
    (note,) = sampling_notes([other], None)
    assert "per command buffer" in note and "counter_sampling=handover" in note
    nvidia = dataclasses.replace(device, vendor_id=0x10DE, driver_version="580.95.5")
    assert handover_supported(nvidia)
    assert not handover_supported(dataclasses.replace(nvidia, driver_version="550.1"))
    # Every built-in is listed on every device; those that cannot open there say why.
    assert [s["name"] for s in listing(device)["samplers"]] == ["cpu_time", "mali"]
    available = {s["name"]: (s["available"], s["note"]) for s in listing(device)["samplers"]}
    assert available["cpu_time"] == (True, None)
    assert available["mali"] == (False, "not an Arm Mali device")
    arm = dataclasses.replace(device, vendor_id=0x13B5, name="Mali-G715")
    # This build has no libGPUCounters: on an Arm device the reason says how to build the plugin.
    (mali,) = [s for s in listing(arm)["samplers"] if s["name"] == "mali"]
    assert not mali["available"]
    assert "libvkscope_sampler_mali.so is not installed" in mali["note"]
    assert "-DVKSCOPE_LIBGPUCOUNTERS=" in mali["note"]
    with pytest.raises(SamplerError, match=r"sampler:mali cannot sample here: device 0 .*Arm Mali"):
        check_devices(["cpu_time", "mali"], [device])
    with pytest.raises(SamplerError, match="VKSCOPE_LIBGPUCOUNTERS"):
        check_devices(["mali"], [arm])
    check_devices(["cpu_time", "/x/libmine.so"], [device])


@pytest.mark.vulkan
def test_vkscope_counters_lists_the_samplers_of_each_device() -> None:
    res = run([vkscope_cli(), "counters", "--json"], base_env())
    assert res.returncode == 0, res.stderr
    (device, *_) = json.loads(res.stdout)
    assert device["samplers"]["sampling"] == "handover"
    found = {s["name"]: s for s in device["samplers"]["samplers"]}
    assert list(found) == ["cpu_time", "mali"]
    assert found["cpu_time"]["available"]
    assert not found["mali"]["available"] and found["mali"]["note"] == "not an Arm Mali device"
    text = run([vkscope_cli(), "counters"], {**base_env(), "COLUMNS": "300"}).stdout
    assert "samplers (--counters sampler:NAME or sampler:PATH)" in text
    assert "cpu_time" in text
    assert "(unavailable: not an Arm Mali device)" in text


@pytest.mark.vulkan
def test_a_sampler_no_device_here_can_open_is_refused_before_the_application_starts(
    workload: Path, tmp_path: Path
) -> None:
    res = run(
        [vkscope_cli(), "run", "--counters", "sampler:mali", "-o", tmp_path / "x.vkscope",
         "--", workload, "--scenario", "compute"],
        base_env(), cwd=tmp_path,
    )  # fmt: skip
    assert res.returncode == 2, res.stdout + res.stderr
    assert "sampler:mali cannot sample here" in res.stderr
    assert "not an Arm Mali device" in res.stderr
    assert "Traceback" not in res.stderr
    assert "PASS" not in res.stdout, "the application ran"


@pytest.mark.vulkan
def test_mali_given_to_the_layer_directly_says_why_and_the_application_runs(
    layer_dir: Path, workload: Path
) -> None:
    res = run([workload, "--scenario", "compute"], layer_env(layer_dir, counters="sampler:mali"))
    assert res.returncode == 0, res.stdout + res.stderr
    assert "sampler mali cannot sample" in res.stderr and "not an Arm Mali device" in res.stderr


def test_counters_of_several_sources_merge() -> None:
    fields: dict[str, object] = {}
    merge_annex(fields, {"counters": {"compute_shader_invocations": 64}})
    merge_annex(fields, {"counters": {"cpu_time": 1000.0}})
    assert fields == {"counters": {"compute_shader_invocations": 64, "cpu_time": 1000.0}}
    # One source without values leaves the other's and says why it has none.
    merge_annex(fields, {"counters": None, "counters_reason": "handover_gave_up"})
    assert fields["counters"] == {"compute_shader_invocations": 64, "cpu_time": 1000.0}
    assert fields["counters_reason"] == "handover_gave_up"
    alone: dict[str, object] = {}
    merge_annex(alone, {"counters": None, "counters_reason": "outside_frame"})
    merge_annex(alone, {"gpu_begin_ns": 5})
    assert alone == {"counters": None, "counters_reason": "outside_frame", "gpu_begin_ns": 5}
