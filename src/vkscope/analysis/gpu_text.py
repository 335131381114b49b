"""What a report's header says about the GPUs the host sampled (docs/gpu-state.md): the clocks and
power during the captured frames, the throttle reasons seen, and a warning when the clocks moved
or the GPU throttled, with how to hold that GPU's clocks steady."""

from __future__ import annotations

from ..capture.read.gpu_join import GpuSummary, Spread
from .context import GpuReport
from .describe import duration_text

WARNING = "warning"  # the name of a header line people should not miss


def _spread(s: Spread | None, unit: str) -> str | None:
    if s is None:
        return None
    if s.min == s.max:
        return f"{s.median:,.4g} {unit}"
    return f"{s.median:,.4g} {unit} (min {s.min:,.4g}, max {s.max:,.4g})"


def _gpu_lines(g: GpuSummary) -> list[tuple[str, str]]:
    gpu = g.gpu
    sampled = (
        f"{gpu.name or '?'} at {gpu.pci} ({gpu.driver}), sampled every "
        f"{duration_text(gpu.interval_ns)}"
    )
    lines = [("GPU", sampled)]
    s = g.state
    if s is None:
        lines.append(("", "no sample fell in a captured frame"))
        return lines
    frames = f"{g.frames:,} captured frame" + ("" if g.frames == 1 else "s")
    clocks = [
        f"graphics {c}" if (c := _spread(s.graphics_clock_mhz, "MHz")) else None,
        f"memory {c}" if (c := _spread(s.memory_clock_mhz, "MHz")) else None,
    ]
    said = "; ".join(c for c in clocks if c)
    lines.append(("clocks", f"{said or 'not offered'} ({s.samples:,} samples in {frames})"))
    power = [
        _spread(s.power_w, "W"),
        f"limit {gpu.power_limit_w:,.4g} W" if gpu.power_limit_w else None,
        f"{s.energy_mj / 1000:,.4g} J in the captured frames" if s.energy_mj else None,
        f"{s.temperature_c.max:,.3g} °C at most" if s.temperature_c else None,
    ]
    if any(power):
        lines.append(("power", "; ".join(p for p in power if p)))
    if s.throttle:
        lines.append(("throttle", ", ".join(s.throttle)))
    for warning in g.warnings():
        lines.append((WARNING, warning))
    if g.warnings() and gpu.steady_clocks:
        lines.append(("", f"to hold its clocks steady: {gpu.steady_clocks}"))
    for metric, lost in gpu.lost.items():
        said = (
            f"{lost.failures:,} reads of {metric} failed during the capture, the first: "
            f"{lost.reason}"
        )
        lines.append((WARNING, said))
    if gpu.absent:
        lines.append(("", f"not offered by this GPU: {', '.join(gpu.absent)} (JSON says why)"))
    return lines


def gpu_lines(report: GpuReport | None) -> list[tuple[str, str]]:
    if report is None:
        return []
    lines: list[tuple[str, str]] = []
    for g in report.summaries:
        lines += _gpu_lines(g)
    for d in report.unmatched:
        lines.append(("GPU", f"device {d.device} not sampled: {d.reason}"))
    return lines
