"""`vkscope run` with a capture: the capture server starts before the application, the layer
streams to it, a progress line shows what arrives, and the capture is finalized when the
application has exited (normally, with an error, or by a crash)."""

from __future__ import annotations

import tempfile
import threading
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from rich.console import Console
from rich.live import Live
from rich.progress import BarColumn, Progress, TaskProgressColumn, TextColumn, TimeRemainingColumn
from rich.text import Text

from . import launch
from .capture import CaptureServer, CaptureSummary, Counters, store_instance_columns
from .gpu_state import DEFAULT_RATE_HZ, GpuSampler, sysfs_root
from .supervisor import Supervisor

# How long the server keeps reading after the application exited: the layer's sender thread
# flushes its queue at the last vkDestroyInstance, so the data is already in the socket.
DRAIN_TIMEOUT_S = 30.0


@dataclass(frozen=True)
class FrameRequests:
    """`vkscope run --frames host`: when the capture server asks the layer to capture frames,
    and how many each time. SIGUSR1 to vkscope asks again at any time."""

    frames: int
    after_s: float | None = None


@dataclass(frozen=True)
class GpuSampling:
    """The host's GPU sampler for `vkscope run` (docs/gpu-state.md): on by default."""

    rate_hz: float = DEFAULT_RATE_HZ
    override_pci: str | None = None  # the GPU of devices that give no PCI address (--gpu-pci)


@dataclass
class RecordingResult:
    launch: launch.LaunchResult
    summary: CaptureSummary


def progress_text(c: Counters) -> Text:
    text = Text()
    text.append("capturing ", style="bold")
    text.append(f"{c.frames:,} frames · {c.instances:,} workloads · {c.submits:,} submits")
    if c.dropped:
        text.append(f" · {c.dropped:,} dropped by the layer", style="yellow")
    if c.bad_messages:
        text.append(f" · {c.bad_messages:,} bad messages", style="red")
    if c.refused_connections:
        text.append(f" · {c.refused_connections:,} connections refused", style="red")
    return text


def record(
    command: Sequence[str],
    layer_dir: Path,
    settings: Mapping[str, str],
    capture_path: Path,
    console: Console,
    log_file: Path,
    supervisor: Supervisor,
    requests: FrameRequests | None = None,
    tags: Mapping[str, str] | None = None,
    gpu: GpuSampling | None = GpuSampling(),
) -> RecordingResult:
    """Runs the application under the layer with the timeline streaming into `capture_path`.

    Call it inside `supervisor` (active before the capture server's threads start)."""
    with tempfile.TemporaryDirectory(prefix="vkscope-") as tmp:
        socket_path = Path(tmp) / "capture.sock"
        sampler: GpuSampler | None = None
        server = CaptureServer(
            capture_path,
            [f"unix:{socket_path}"],
            tags=tags,
            on_device=lambda request: sampler.add_device(request) if sampler else None,
            finishing=store_instance_columns,
        )
        if gpu is not None:
            sampler = GpuSampler(
                server.take_gpu_state,
                rate_hz=gpu.rate_hz,
                sysfs_root=sysfs_root(),
                override_pci=gpu.override_pci,
            )
        server.start()
        if sampler is not None:
            sampler.start()
        for note in server.notes:  # a socket path too long for Unix sockets, say
            console.print(f"vkscope: {note}", style="yellow", highlight=False)
        layer_settings = {"timeline": "true", **settings, "host": server.addresses[0]}
        done = threading.Event()
        live = Live(progress_text(server.counters()), console=console, transient=True)

        def refresh() -> None:
            while not done.wait(0.25):
                live.update(progress_text(server.counters()))

        updater = threading.Thread(target=refresh, name="vkscope-progress", daemon=True)
        timer: threading.Timer | None = None
        if requests is not None:
            frames = requests.frames
            supervisor.on_request = lambda: server.request_capture(frames)
            if requests.after_s is not None:
                timer = threading.Timer(requests.after_s, server.request_capture, (frames,))
                timer.daemon = True
                timer.start()
        try:
            if console.is_terminal:
                live.start()
                updater.start()
            result = launch.run(command, layer_dir, layer_settings, log_file, supervisor)
        finally:
            if timer is not None:
                timer.cancel()
            supervisor.on_request = None
            done.set()
            if updater.is_alive():
                updater.join()
            live.stop()
            if sampler is not None:
                sampler.stop()  # its last samples and summary, before the capture is finalized
            summary = finalize(server, console)
    return RecordingResult(result, summary)


def finalize(server: CaptureServer, console: Console) -> CaptureSummary:
    """Stops the server; on a terminal, a progress bar follows the building of the capture's
    journal into its tables (docs/capture-schema.md; docs/bench/ingest.md says how long)."""
    if not console.is_terminal:
        return server.stop(timeout=DRAIN_TIMEOUT_S)
    bar = Progress(
        TextColumn("finalizing the capture"),
        BarColumn(),
        TaskProgressColumn(),
        TimeRemainingColumn(),
        console=console,
        transient=True,
    )
    task = bar.add_task("finalize", total=None)

    def progress(done: int, total: int) -> None:
        bar.update(task, completed=done, total=total)

    with bar:
        return server.stop(timeout=DRAIN_TIMEOUT_S, progress=progress)
