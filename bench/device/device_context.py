"""What the device checks share: the installed package's layer and workload program, environments
that enable them, a capture receiver, and the timing analysis every check applies."""

from __future__ import annotations

import re
import subprocess
import time
import traceback
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from harness.driver import Driver
from harness.env import base_env, layer_env
from harness.timeline import DEVICE, GOODBYE, Capture, Receiver
from harness.timing import NOT_SERIALIZED, REASONS, SUBMIT_DONE, TIMING_FIELDS

# The one instance vkscope may leave untimed in every scenario: indirect_draw's secondary, executed
# twice before its queries could be read (docs/timing.md, "Hard cases").
EXPLAINED = {("ambiguous", "secondary executed several times")}


@dataclass
class Context:
    layer: Path
    workload: Path
    driver: Driver
    quick: bool
    # A check that runs interleaved rounds runs this many instead of its own (--rounds): one
    # check split across device calls, joined again by `checks.py --merge`.
    rounds: int | None = None

    def env(self, layer: bool = True, **settings: str) -> dict[str, str]:
        """The layer's folder on the loader's path (enabled unless `layer` is false, as an
        application that names layers itself, `--validation`, needs), and vkscope settings."""
        return layer_env(self.layer, enable=layer, **settings)

    def bare_env(self) -> dict[str, str]:
        return base_env()

    def run(
        self, args: Sequence[str], env: dict[str, str], timeout: float = 300
    ) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [str(self.workload), *args], env=env, capture_output=True, text=True, timeout=timeout
        )

    def wall_s(self, args: Sequence[str], env: dict[str, str]) -> float:
        """Wall-clock seconds of one workload process, which must succeed."""
        start = time.perf_counter()
        res = self.run(args, env)
        seconds = time.perf_counter() - start
        if res.returncode != 0:
            raise RuntimeError(f"{' '.join(args)} exited {res.returncode}:\n{res.stderr[-2000:]}")
        return seconds

    def capture(
        self, args: Sequence[str], timeout: float = 300, **settings: str
    ) -> tuple[subprocess.CompletedProcess[str], Capture]:
        """Runs the workload under the layer, streaming to a receiver; what it sent."""
        receiver = Receiver()
        try:
            res = self.run(args, self.env(host=receiver.address, **settings), timeout)
            return res, receiver.finish(timeout=10)
        finally:
            receiver.close()

    def validation(self, args: Sequence[str], **settings: str) -> dict[str, Any]:
        """The workload with the Khronos validation layer below vkscope (`--validation above`
        puts vkscope above it in the application's layer list): its message count."""
        res = self.run([*args, "--validation", "above"], self.env(layer=False, **settings))
        text = res.stdout + res.stderr
        counts = [int(n) for n in re.findall(r"validation messages: (\d+)", text)]
        return {
            "args": list(args),
            "settings": settings,
            "rc": res.returncode,
            "messages": counts[-1] if counts else None,
            "tail": text[-600:] if res.returncode or counts != [0] else "",
        }


@dataclass
class Outcome:
    """What one check found: its data, and every expectation it missed."""

    data: dict[str, Any] = field(default_factory=dict)
    failures: list[str] = field(default_factory=list)

    def expect(self, ok: bool, what: str) -> bool:
        if not ok:
            self.failures.append(what)
        return ok


def run_check(fn: Callable[[Context, Outcome], None], ctx: Context) -> dict[str, Any]:
    outcome = Outcome()
    start = time.perf_counter()
    try:
        fn(ctx, outcome)
    except (Exception, SystemExit) as exc:  # a check that breaks fails loudly, with its data
        outcome.failures.append(
            f"{type(exc).__name__}: {exc}\n{''.join(traceback.format_tb(exc.__traceback__)[-3:])}"
        )
    return {
        "status": "failed" if outcome.failures else "passed",
        "failures": outcome.failures,
        "seconds": round(time.perf_counter() - start, 1),
        **outcome.data,
    }


def timing_analysis(capture: Capture, mode: str | None) -> dict[str, Any]:
    """Every instance's timing status, and the times outside the CPU window of their submission
    (SUBMIT to SUBMIT_DONE, widened by the clock calibration's deviation) or out of queue order
    (with serialization, a workload starts after the previous one of its queue ended)."""
    done = {m.sequence: m.payload["cpu_ns"] for m in capture.of(SUBMIT_DONE)}
    devices = capture.of(DEVICE)
    clock = (devices[0].payload.get("clock") or {}) if devices else {}
    slack = int(clock.get("max_deviation_ns") or 0)
    status: Counter[str] = Counter()
    outside = disordered = missing = unexplained = unknown_reason = 0
    last: dict[int, tuple[int, int]] = {}
    for s, _, f, _ in capture.submitted():
        key = (f.get("timing"), f.get("timing_reason"), f.get("serialization"))
        status[" / ".join(str(k) for k in key if k is not None) or "no timing fields"] += 1
        if mode is None:
            continue
        if not f.keys() >= TIMING_FIELDS:
            missing += 1
            continue
        if f["timing"] != "ok":
            unknown_reason += f.get("timing_reason") not in REASONS
            unexplained += (f["timing"], f.get("timing_reason")) not in EXPLAINED
            continue
        begin, end = int(f["gpu_begin_ns"]), int(f["gpu_end_ns"])
        window_end = done.get(s.sequence)
        if window_end is None or not (
            s.payload["cpu_ns"] - slack <= begin <= end <= window_end + slack
        ):
            outside += 1
        queue = s.payload["queue"]
        if queue in last:
            before_begin, before_end = last[queue]
            if before_begin > begin if mode == "none" else before_end > begin:
                disordered += 1
        last[queue] = (begin, end)
    goodbye = capture.of(GOODBYE)
    return {
        "instances": sum(status.values()),
        "status": dict(sorted(status.items())),
        "without_timing_fields": missing,
        "unexplained_untimed": unexplained,
        "unknown_reasons": unknown_reason,
        "outside_cpu_window": outside,
        "out_of_queue_order": disordered,
        "clock": clock,
        "dropped": goodbye[-1].payload.get("dropped") if goodbye else None,
        "not_serialized": sum(n for k, n in status.items() if NOT_SERIALIZED in k),
    }
