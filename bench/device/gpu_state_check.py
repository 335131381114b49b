"""The device check of the host's GPU sampler on NVIDIA (docs/gpu-state.md): `vkscope run` on
dispatches of about 40 ms (longer than NVML's power readings resolve on an H200, 28 ms), sampling
at 1 kHz through NVML, and what the capture says against
NVML itself, asked without vkscope:

- the right GPU, by PCI address: the device's address (VK_EXT_pci_bus_info, probed without the
  layer) is the sampled GPU's, matched by `pci_bus_info`, and NVML names it the same;
- clocks within the GPU's range (above 0, at most NVML's maximum graphics clock);
- each long dispatch's energy within what power x duration allows (its average power above 0 and
  at most the enforced power limit with a margin for NVML's instantaneous readings), or a note
  that says why it has none: never 0 mJ without a word;
- the samples are the dispatches' own: each long dispatch has samples inside its GPU time window,
  their clocks in range. How often NVML's `gpu_idle` clock event reason is set inside them and
  between them is recorded, not judged: on the H200 it is set in most samples taken while a
  dispatch runs (at 1980 MHz, the top clock), so it is a lagging flag, not the sampled instant's
  state, and no reader gives it to a workload;
- throttle reasons: every bit seen is one NVML says the GPU supports; one seen during the
  captured frames is provoked by the load, none seen is said honestly (with the peak power
  against the limit);
- the sampler's own account: samples, late ticks, its CPU time.

Where the probe finds no PCI address or no NVML (lavapipe, another vendor), the check is not
available on the device and says what the probe saw.
"""

from __future__ import annotations

import statistics
import subprocess
import tempfile
from collections import Counter
from pathlib import Path
from typing import Any

from bench.device.device_context import Context, Outcome
from bench.device.dispatch_calibration import calibrate, iterations_for
from harness.env import base_env, vkscope_cli

TARGET_US = 40_000  # the shortest ratio dispatch's length
FRAMES = 6
RATE_HZ = 1000
POWER_MARGIN = 1.25  # instantaneous power may exceed the enforced limit briefly


def _nvml_facts(pci: str) -> dict[str, Any]:
    """What NVML says of the GPU at `pci`, asked without vkscope."""
    import pynvml as nv

    nv.nvmlInit()
    try:
        handle = nv.nvmlDeviceGetHandleByPciBusId(pci)
        name = nv.nvmlDeviceGetName(handle)
        supported = getattr(nv, "nvmlDeviceGetSupportedClocksEventReasons", None)
        supported = supported or nv.nvmlDeviceGetSupportedClocksThrottleReasons
        top = nv.nvmlDeviceGetMaxClockInfo(handle, nv.NVML_CLOCK_GRAPHICS)
        return {
            "name": name.decode() if isinstance(name, bytes) else str(name),
            "max_graphics_clock_mhz": int(top),
            "power_limit_w": nv.nvmlDeviceGetEnforcedPowerLimit(handle) / 1000,
            "supported_reasons_mask": int(supported(handle)),
            "driver_version": str(nv.nvmlSystemGetDriverVersion()),
        }
    finally:
        nv.nvmlShutdown()


def _capture(
    ctx: Context, iterations: int, out_dir: Path
) -> tuple[subprocess.CompletedProcess[str], Path]:
    path = out_dir / "gpu_state.vkscope"
    cmd = [
        vkscope_cli(),
        "run",
        "--timing",
        "queue",
        "-s",
        "frame_submits=1",
        "--gpu-state-rate",
        str(RATE_HZ),
        "-o",
        str(path),
        "--no-report",
        "--no-html",
        "--no-trace",
        "--",
        str(ctx.workload),
        "--scenario",
        "compute",
        "--frames",
        str(FRAMES),
        "--compute-iterations",
        str(iterations),
    ]
    res = subprocess.run(cmd, env=base_env(), capture_output=True, text=True, timeout=300)
    return res, path


def check_gpu_state(ctx: Context, out: Outcome) -> None:
    from vkscope.capture import open_capture
    from vkscope.capture.read.gpu_join import GpuJoin
    from vkscope.capture.read.queries import frames_with_work

    pci = ctx.driver.pci
    assert pci is not None  # the check needs pci_bus_info
    nvml = _nvml_facts(pci)
    iterations = iterations_for(calibrate(ctx), TARGET_US)
    out.data |= {"pci": pci, "nvml": nvml, "iterations": iterations, "rate_hz": RATE_HZ}
    with tempfile.TemporaryDirectory(prefix="vkscope-gpu-state-") as tmp:
        res, path = _capture(ctx, iterations, Path(tmp))
        if not out.expect(
            res.returncode == 0,
            f"vkscope run: exit {res.returncode}\n{res.stdout[-800:]}{res.stderr[-1500:]}",
        ):
            return
        with open_capture(path) as capture:
            _judge(capture, GpuJoin(capture), frames_with_work, nvml, pci, out)


def _judge(
    capture: Any, join: Any, frames_with_work: Any, nvml: dict[str, Any], pci: str, out: Outcome
) -> None:
    gpus, devices = capture.gpus(), capture.device_gpus()
    out.data["devices"] = [[d.pci, d.matched_by, d.reason] for d in devices]
    if not out.expect(len(gpus) == 1, f"sampled GPUs: {[g.pci for g in gpus]}"):
        return
    (gpu,) = gpus
    out.expect(gpu.pci == pci, f"sampled {gpu.pci}, the device is at {pci}")
    out.expect(gpu.driver == "nvml", f"read through {gpu.driver}")
    named = f"NVML names {pci} {nvml['name']!r}, the capture {gpu.name!r}"
    out.expect(gpu.name == nvml["name"], named)
    matched = all(d.matched_by == "pci_bus_info" for d in devices)
    out.expect(matched, f"matched: {out.data['devices']}")
    out.data["offered"], out.data["absent"] = sorted(gpu.origins), gpu.absent
    out.data["lost"] = {k: v.reason for k, v in gpu.lost.items()}
    samples = list(capture.gpu_samples(gpu.id))
    clocks = [s.graphics_clock_mhz for s in samples if s.graphics_clock_mhz is not None]
    out.expect(bool(clocks), "no graphics clock sampled")
    top = nvml["max_graphics_clock_mhz"]
    outside = sorted({c for c in clocks if not 0 < c <= top})
    out.expect(not outside, f"clocks outside (0, {top}]: {outside[:5]}")
    signal = join.signal(gpu)
    sampling = capture.gpu_sampling()
    out.data["sampling"] = {
        "samples": len(samples),
        "late": sampling.late if sampling else None,
        "cpu_ns_per_sample": round(sampling.cpu_ns / max(sampling.samples, 1))
        if sampling
        else None,
        "energy_signal": signal.metric,
        "energy_resolution_ns": signal.resolution_ns,
    }
    limit = nvml["power_limit_w"] * POWER_MARGIN
    long_idle = long_total = unsampled = before = 0
    first_tick = min((s.t_ns for s in samples if s.throttle is not None), default=None)
    idle_inside = [0, 0]  # samples with gpu_idle, samples, inside long dispatches
    windows: list[tuple[int, int]] = []
    energies: list[dict[str, Any]] = []
    notes: Counter[str] = Counter()
    for key, captured in frames_with_work(capture):
        frame = join.frame(key)
        if frame is None or captured is False:
            continue
        for w in capture.workloads(frame=key.frame, process=key.process, device=key.device):
            state = frame.workload(w)
            ns = w.gpu_ns
            if state is None or ns is None or w.type != "dispatch" or ns < TARGET_US * 500:
                continue
            if first_tick is None or w.gpu_begin_ns < first_tick:
                before += 1  # NVML was still being opened: the reader says "outside the samples"
                continue
            long_total += 1
            inside = [s for s in frame.samples if w.gpu_begin_ns <= s.t_ns <= w.gpu_end_ns]
            inside = [s for s in inside if s.throttle is not None]  # the fast ticks
            idle = [s for s in inside if s.throttle & 1]
            long_idle += bool(inside) and len(idle) * 2 > len(inside)
            unsampled += not inside
            idle_inside[0] += len(idle)
            idle_inside[1] += len(inside)
            windows.append((w.gpu_begin_ns, w.gpu_end_ns))
            if state.energy_mj is None:
                notes[state.note or "no note"] += 1
                continue
            energies.append({"ms": ns / 1e6, "mj": state.energy_mj, "w": state.power_w})
            said = f"{ns / 1e6:.2f} ms: {state.energy_mj} mJ, {state.power_w} W (limit {limit:.0f})"
            out.expect(state.energy_mj > 0 and 0 < (state.power_w or 0) <= limit, said)
    out.expect(long_total > 0, "no dispatch of the target length was timed")
    out.expect("no note" not in notes, "a dispatch without energy and without a note")
    out.expect(not unsampled, f"{unsampled} of {long_total} long dispatches without a sample")
    ticks = [s for s in samples if s.throttle is not None]
    outside = [
        s for s in ticks if windows and windows[0][0] <= s.t_ns <= windows[-1][1]
        and not any(b <= s.t_ns <= e for b, e in windows)
    ]  # fmt: skip
    powers = [e["w"] for e in energies]
    out.data["dispatches"] = {
        "long": long_total,
        "before_sampling": before,
        "with_energy": len(energies),
        "notes": dict(notes),
        "sampled_idle_inside": long_idle,
        "gpu_idle_share_inside": round(idle_inside[0] / idle_inside[1], 3)
        if idle_inside[1]
        else None,
        "gpu_idle_share_between": round(
            sum(bool(s.throttle & 1) for s in outside) / len(outside), 3
        )
        if outside
        else None,
        "power_w": {"min": min(powers), "median": statistics.median(powers), "max": max(powers)}
        if powers
        else None,
        "first": energies[:5],
    }
    (summary,) = join.summaries()
    state = summary.state
    seen = 0
    for s in samples:
        seen |= s.throttle or 0
    unsupported = seen & ~nvml["supported_reasons_mask"]
    out.expect(not unsupported, f"throttle bits NVML does not support: {unsupported:#x}")
    throttled = list(state.throttled) if state else []
    peak = state.power_w.max if state and state.power_w else None
    out.data["throttle"] = {
        "seen_in_captured_frames": list(state.throttle) if state else [],
        "provoked": throttled,
        "absent_because": None
        if throttled
        else f"no clock-lowering reason during the captured frames: peak power {peak} W against a "
        f"{nvml['power_limit_w']:.0f} W limit",
        "warnings": summary.warnings(),
    }
    c = state.graphics_clock_mhz if state else None
    out.data["graphics_clock_mhz"] = c.as_json() if c else None
    seen_names = out.data["throttle"]["seen_in_captured_frames"]
    print(
        f"  gpu_state: {out.data['sampling']}, {long_total} long dispatches, "
        f"{len(energies)} with energy, throttle {seen_names}",
        flush=True,
    )


def render(part: dict[str, Any]) -> list[str]:
    """Its part of docs/bench/device.md."""
    s, d, t = part.get("sampling") or {}, part.get("dispatches") or {}, part.get("throttle") or {}
    nvml = part.get("nvml") or {}
    why = f" ({t['absent_because']})" if t.get("absent_because") else ""
    lines = [
        f"GPU {nvml.get('name')} at {part.get('pci')} (driver {nvml.get('driver_version')}), "
        f"sampled at {part.get('rate_hz')} Hz: {s.get('samples')} samples, {s.get('late')} late, "
        f"{s.get('cpu_ns_per_sample')} ns of the sampler's CPU per sample.",
        "",
        f"- Energy signal: {s.get('energy_signal')}, resolution "
        f"{(s.get('energy_resolution_ns') or 0) / 1e6:.1f} ms.",
        f"- Graphics clock during the captured frames (MHz): {part.get('graphics_clock_mhz')}.",
        f"- Dispatches of about {TARGET_US / 1000:g} ms: {d.get('long')} (and "
        f"{d.get('before_sampling')} that ran before the first sample, left out); with an energy "
        f"{d.get('with_energy')}, average power {d.get('power_w')} W; without, by note: "
        f"{d.get('notes')}; NVML's `gpu_idle` reason set in "
        f"{d.get('gpu_idle_share_inside')} of the samples inside them and "
        f"{d.get('gpu_idle_share_between')} of those between them (recorded, not judged).",
        f"- Throttle reasons seen: {t.get('seen_in_captured_frames')}; provoked: "
        f"{t.get('provoked') or 'none'}{why}.",
    ]
    return lines
