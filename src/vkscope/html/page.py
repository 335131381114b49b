"""Builds the HTML timeline: the capture as compact JSON, inlined with the page's script and style.

The page is one file with no outside references. Its data travels in a
`<script type="application/json">` block, column by column (one list per field, one entry per
workload instance, and per workload identity), with the strings that repeat (types, label
stacks, whole metadata objects) stored once and referred to by index. Times are made relative
to the capture's first one, so they stay exact as JavaScript numbers. The columns are kept as
arrays and written one at a time: a page of a million workloads never holds the JSON, or a
Python object per workload or identity, of more than one column.
"""

from __future__ import annotations

import io
import re
from array import array
from collections import Counter
from collections.abc import Iterable, Iterator
from html import escape
from importlib import resources
from pathlib import Path
from typing import Any, Final, TextIO

import msgspec
import numpy as np
import numpy.typing as npt

from .. import __version__
from ..capture import Capture, Device, Frame, WorkloadInstance, open_capture
from ..capture.read.coverage import IdentityCoverage, budget_summary, identity_coverage
from ..capture.read.timer_floor import NEAR_FLOOR_FACTOR, TimerFloor
from ..capture.read.warmup import warmup_frames
from ..capture_summary import FrameCounts
from ..outputs import text_output
from .gpu_tracks import gpu_tracks
from .identities import PageIdentities

DATA_VERSION: Final = 2
_SAFE_INT: Final = 2**53 - 1  # past this, a JSON number loses digits in a browser
_LONG_NUMBER: Final = re.compile(rb"\d{16,}")
_PLACEHOLDER: Final = re.compile(r"\{\{(\w+)\}\}")
_CLOSERS: Final = re.compile(r"</(script|style)", re.IGNORECASE)
_ENUM_KEYS: Final = {
    "format": "format",
    "load": "load",
    "stencil_load": "load",
    "store": "store",
    "stencil_store": "store",
}
_ENUM_PREFIXES: Final = {
    "format": "VK_FORMAT_",
    "load": "VK_ATTACHMENT_LOAD_OP_",
    "store": "VK_ATTACHMENT_STORE_OP_",
}
_DIAGNOSTICS_SHOWN: Final = 20
_COLUMNS: Final = ("id", "key", "ord", "q", "f", "t", "l", "m", "s", "sc", "b", "e", "ti", "ix")
_ADDED: Final = tuple(n for n in _COLUMNS if n not in ("key", "ix"))  # appended by _Builder.add
# Of those, the indexes into the page's tables and positions (no None; 4 bytes each).
_INDEXES: Final = ("ord", "q", "f", "t", "l", "m", "ti")
_NEVER_SHOWN: Final = 200  # never-measured identities a budgeted capture's page lists
_NONE: Final = -(2**63)  # stands for None in the integer columns
_CHUNK: Final = 65_536  # a column's entries turned into Python values (and JSON) at once

_encode = msgspec.json.Encoder().encode
Ints = npt.NDArray[np.int64]


def _floor_info(f: TimerFloor | None) -> dict[str, Any] | None:
    """The timer's floor of a queue's family, as the page reads it (docs/timing.md)."""
    if f is None:
        return None
    return {
        "family": f.family,
        "floor_ns": f.floor_ns,
        "uncertainty_ns": f.uncertainty_ns,
        "near_ns": f.near_ns,
        "factor": NEAR_FLOOR_FACTOR,
    }


def write_html(capture_path: Path | str, out_path: Path | str) -> None:
    """Writes the HTML timeline of the capture at `capture_path` to `out_path`.

    Raises the capture package's CaptureError subclasses for a file that cannot be read as a
    capture (nothing is written then) and OutputError when the page cannot be written. A file
    is replaced in one step, so a failed run never leaves half a page behind; a character
    device or a FIFO is written in place (outputs.py).
    """
    with open_capture(capture_path) as capture:
        data = _collect(capture).finish()
        name = capture.path.name
    with text_output(Path(out_path)) as f:
        _write_page(f, name, data)


def build_page(capture: Capture) -> str:
    """The whole page for an open capture, as text."""
    data = _collect(capture).finish()
    out = io.StringIO()
    _write_page(out, capture.path.name, data)
    return out.getvalue()


def _write_page(out: TextIO, name: str, data: dict[str, Any]) -> None:
    """Writes the page to `out`, the data a piece at a time (never the whole of it at once)."""
    parts = {
        "title": escape(f"vkscope · {name}"),
        "generator": escape(f"vkscope {__version__}"),
        "css": _asset("timeline.css"),
        "js": _asset("timeline.js"),
    }
    template = _asset("template.html")
    done = 0
    for m in _PLACEHOLDER.finditer(template):
        out.write(template[done : m.start()])
        if m.group(1) == "data":
            _write_json(out, data)
        else:
            out.write(parts[m.group(1)])
        done = m.end()
    out.write(template[done:])


class _Keys:
    """The `key` column (`submitID.tagID`), made text only a part at a time."""

    def __init__(self, submits: array[int], tags: array[int]) -> None:
        self.submits = submits
        self.tags = tags

    def __len__(self) -> int:
        return len(self.submits)

    def __getitem__(self, part: slice) -> list[str]:
        pairs = zip(self.submits[part], self.tags[part], strict=True)
        return [f"{submit}.{tag}" for submit, tag in pairs]


_Column = npt.NDArray[Any] | _Keys


def _write_json(out: TextIO, value: Any) -> None:
    """`value` as JSON, its objects a key at a time and each column (a numpy array, or the
    keys) turned into Python values and JSON a chunk at a time."""
    if isinstance(value, dict):
        out.write("{")
        for n, (key, item) in enumerate(value.items()):
            out.write(f"{',' if n else ''}{_escaped(_encode(key))}:")
            _write_json(out, item)
        out.write("}")
    elif isinstance(value, np.ndarray | _Keys):
        out.write("[")
        for start in range(0, len(value), _CHUNK):
            encoded = _encode(_listed(value, start, start + _CHUNK))
            out.write(("," if start else "") + _escaped(encoded[1:-1]))
            del encoded
        out.write("]")
    else:
        out.write(_escaped(_encode(value)))


def _listed(column: _Column, start: int = 0, stop: int | None = None) -> list[Any]:
    """A column's entries from `start` to `stop` as a list, None where an integer column
    holds _NONE or a float column NaN."""
    if isinstance(column, _Keys):
        return column[start:stop]
    part = column[start:stop]
    values: list[Any] = part.tolist()
    missing = np.isnan(part) if part.dtype.kind == "f" else part == _NONE
    for i in np.flatnonzero(missing).tolist():
        values[i] = None
    return values


def _lists(value: Any) -> Any:
    """`value` with every column made a list, as the page reads it."""
    if isinstance(value, dict):
        return {key: _lists(item) for key, item in value.items()}
    return _listed(value) if isinstance(value, np.ndarray | _Keys) else value


def _escaped(data: bytes) -> str:
    # "<" only occurs inside JSON strings, where \u003c means the same: no "</script>" can end
    # the data block early, whatever the application named its labels.
    return data.replace(b"<", b"\\u003c").decode("utf-8")


def _asset(name: str) -> str:
    text = resources.files(__package__).joinpath("assets", name).read_text(encoding="utf-8")
    if name != "template.html" and _CLOSERS.search(text):
        raise RuntimeError(f"html asset {name} contains a closing tag; it cannot be inlined")
    return text


def page_data(capture: Capture) -> dict[str, Any]:
    """Everything the page shows, as JSON-ready values (the layout is in docs/html.md)."""
    result: dict[str, Any] = _lists(_collect(capture).finish())
    return result


def _collect(capture: Capture) -> _Builder:
    builder = _Builder(capture)
    for w in capture.workloads():
        builder.add(w)
    return builder


def _safe(value: Any) -> Any:
    """The value with every integer a browser would round turned into its decimal string."""
    if isinstance(value, bool):
        return value
    if isinstance(value, int):
        return str(value) if abs(value) > _SAFE_INT else value
    if isinstance(value, dict):
        return {k: _safe(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_safe(v) for v in value]
    return value


def _enum_names() -> dict[str, dict[int, str]]:
    """Names of the Vulkan enumerants the metadata carries as numbers, from the registry."""
    names: dict[str, dict[int, str]] = {kind: {} for kind in _ENUM_PREFIXES}
    try:
        import vulkan
    except (ImportError, OSError):  # the page then shows the numbers alone
        return names
    for attribute in dir(vulkan):
        for kind, prefix in _ENUM_PREFIXES.items():
            if not attribute.startswith(prefix) or "__" in attribute:
                continue
            value = getattr(vulkan, attribute)
            if not isinstance(value, int) or attribute.endswith("MAX_ENUM"):
                continue
            name = attribute[len(prefix) :]
            known = names[kind].get(value)
            # Of several aliases, the core name (shortest, no vendor suffix) wins.
            if known is None or len(name) < len(known):
                names[kind][value] = name
    return names


class _Builder:
    """Collects the workload instances of a capture into columns."""

    def __init__(self, capture: Capture) -> None:
        self.capture = capture
        self.devices: dict[tuple[int, int], Device] = {
            (d.process, d.id): d for d in capture.devices()
        }
        self.queue_rows: dict[tuple[int, int | None, int | None], int] = {}
        self.frame_rows: dict[tuple[int, int | None, int | None], int] = {}
        self.types: dict[str | None, int] = {}
        self.labels: dict[tuple[str, ...], int] = {(): 0}
        self.metadata: dict[bytes, int] = {}
        self.metadata_json: list[msgspec.Raw] = []
        self.enum_values: dict[str, set[int]] = {kind: set() for kind in _ENUM_PREFIXES}
        self.timings: dict[tuple[str | None, str | None, str | None], int] = {}
        self.untimed_reasons: Counter[str] = Counter()
        # Integer columns as arrays (8 bytes, _NONE for None; 4 for indexes): a Python list of
        # ints would take five times the memory.
        self.cols: dict[str, array[int]] = {n: array("i" if n in _INDEXES else "q") for n in _ADDED}
        self.submits = array("Q")  # with `tags`, the `key` column
        self.tags = array("Q")
        self.device_of_row: list[tuple[int, int | None]] = []
        self.identities = PageIdentities()

    def add(self, w: WorkloadInstance) -> None:
        c = self.cols
        c["id"].append(w.id)
        self.submits.append(w.submit_id)
        self.tags.append(w.tag_id)
        c["ord"].append(w.ordinal)
        queue = (w.process, w.device, w.queue)
        row = self.queue_rows.get(queue)
        if row is None:
            row = self.queue_rows[queue] = len(self.queue_rows)
            self.device_of_row.append((w.process, w.device))
        c["q"].append(row)
        frame = (w.process, w.device, w.frame)
        c["f"].append(self.frame_rows.setdefault(frame, len(self.frame_rows)))
        c["t"].append(self.types.setdefault(w.type, len(self.types)))
        c["l"].append(self.labels.setdefault(w.labels, len(self.labels)))
        c["m"].append(self._metadata(w.metadata))
        c["s"].append(_NONE if w.submit_cpu_ns is None else w.submit_cpu_ns)
        c["sc"].append(_NONE if w.submit_cpu_complete_ns is None else w.submit_cpu_complete_ns)
        timing = (w.timing, w.timing_reason, w.serialization)
        c["ti"].append(self.timings.setdefault(timing, len(self.timings)))
        begin, end = w.gpu_begin_ns, w.gpu_end_ns
        if w.gpu_ns is None:  # no usable GPU time (capture/read/gpu_time.py)
            begin = end = None
            self.untimed_reasons[w.timing_reason or w.timing or "no GPU timestamps"] += 1
        c["b"].append(_NONE if begin is None else begin)
        c["e"].append(_NONE if end is None else end)
        self.identities.add(w.identity)

    def _metadata(self, metadata: dict[str, Any]) -> int:
        raw = _encode(metadata)
        index = self.metadata.get(raw)
        if index is None:
            index = self.metadata[raw] = len(self.metadata)
            if _LONG_NUMBER.search(raw):
                raw = _encode(_safe(metadata))
            self.metadata_json.append(msgspec.Raw(raw))
            self._collect_enums(metadata)
        return index

    def _collect_enums(self, value: Any, key: str | None = None) -> None:
        if isinstance(value, dict):
            for k, v in value.items():
                self._collect_enums(v, k)
        elif isinstance(value, list):
            for v in value:
                self._collect_enums(v, key)
        elif key in _ENUM_KEYS and isinstance(value, int) and not isinstance(value, bool):
            self.enum_values[_ENUM_KEYS[key]].add(value)

    def _clock_groups(self) -> tuple[dict[tuple[int, int | None], int], bool]:
        """The value each device's GPU times are made relative to, and whether each device got
        its own (their clocks cannot be compared)."""
        firsts: dict[tuple[int, int | None], int] = {}
        for row, begin in zip(self.cols["q"], self.cols["b"], strict=True):
            if begin != _NONE:
                device = self.device_of_row[row]
                firsts[device] = min(begin, firsts.get(device, begin))
        if not firsts:
            return {}, False
        shared = len(firsts) == 1 or all(
            (dev := self.devices.get((p, d or 0))) is not None
            and dev.clock_domain == "clock_monotonic"
            for p, d in firsts
        )
        if shared:
            first = min(firsts.values())
            return dict.fromkeys(firsts, first), False
        return firsts, True

    def _identities(self, warm: set[int]) -> tuple[Ints, dict[str, Any]]:
        """Each instance's identity number (the `ix` column), and the identities' columns: what
        each is, and its GPU time over the frames it ran in that are not warm-up frames
        (`warm`: their rows)."""
        ix = self.identities.number()
        frame = self._column("f")
        steady = ~np.isin(frame, np.fromiter(warm, np.int64, len(warm)))
        begin, end = self._column("b"), self._column("e")
        gpu_ns = np.where(begin == _NONE, _NONE, end - begin)
        del frame, begin, end
        return ix, self.identities.columns(ix, steady, gpu_ns, self.labels)

    def finish(self) -> dict[str, Any]:
        warmup = warmup_frames(self.capture)
        warm = {row for key, row in self.frame_rows.items() if key in warmup.frames}
        ix, identities = self._identities(warm)
        bases, per_device = self._clock_groups()
        # The columns' arrays, changed in place through these views.
        b, e, q = (self._column(name) for name in ("b", "e", "q"))
        has = np.flatnonzero(b != _NONE)
        timed = len(has)
        extent = (int(b[has].min()), int(e[e != _NONE].max())) if timed else None
        gpu = gpu_tracks(self.capture, self.devices, bases, extent)
        base_of_row = [bases.get(device, 0) for device in self.device_of_row]
        base = np.array(base_of_row, np.int64)[q[has]]
        b[has] -= base
        e[has] -= base
        del has, base
        submits, completes = self._column("s"), self._column("sc")
        first_submit = int(submits[submits != _NONE].min()) if (submits != _NONE).any() else 0
        for times in (submits, completes):
            times[times != _NONE] -= first_submit
        queues = self._sorted_queues(q)
        frames = self._frames(warmup.frames)
        enum_names = _enum_names() if any(self.enum_values.values()) else {}
        enums = {
            kind: {str(v): names[v] for v in sorted(self.enum_values[kind]) if v in names}
            for kind, names in enum_names.items()
        }
        count = len(self.submits)
        return {
            "version": DATA_VERSION,
            "capture": self._capture_info(),
            "queues": queues,
            "frames": frames,
            "types": list(self.types),
            "labels": [list(path) for path in self.labels],
            "metadata": self.metadata_json,
            "enums": enums,
            "timing": {
                "states": [list(t) for t in self.timings],
                "timed": timed,
                "untimed": count - timed,
                "untimed_reasons": dict(self.untimed_reasons.most_common(10)),
                "per_device_clocks": per_device,
            },
            "counters": list(self.capture.counter_names()),
            "identities": identities,
            "warmup": {"rule": warmup.rule, "said": warmup.describe()},
            "gpu_state": gpu,
            "budget": self._budget(),
            "workloads": {"count": count, **self._workload_columns(ix)},
        }

    def _workload_columns(self, ix: Ints) -> dict[str, Any]:
        """The workload columns, as arrays (the keys as _Keys)."""
        out: dict[str, Any] = {}
        for name in _COLUMNS:
            if name == "key":
                out[name] = _Keys(self.submits, self.tags)
            else:
                out[name] = ix if name == "ix" else self._column(name)
        return out

    def _column(self, name: str) -> npt.NDArray[np.signedinteger[Any]]:
        """A column's array as numpy's: a view, changed in place where it is changed."""
        return np.frombuffer(self.cols[name], np.int32 if name in _INDEXES else np.int64)

    def _budget(self) -> dict[str, Any] | None:
        """A budgeted capture's budget, and each identity's coverage (docs/html.md): `coverage`
        holds columns (frames, measured, median GPU time, reason never measured) by the `ix`
        column's index; `never` lists the first identities no frame measured."""
        summary = budget_summary(self.capture)
        if summary is None:
            return None
        never: list[dict[str, Any]] = []
        counts = {"identities": 0, "measured_identities": 0, "never_total": 0}

        def counted(found: Iterable[IdentityCoverage]) -> Iterator[IdentityCoverage]:
            for c in found:
                counts["identities"] += 1
                counts["measured_identities"] += c.measured > 0
                if c.reason is not None:
                    counts["never_total"] += 1
                    if len(never) < _NEVER_SHOWN:
                        never.append({**c.as_json(), "label_path": c.identity.label_path})
                yield c

        coverage = self.identities.coverage(counted(identity_coverage(self.capture)))
        return {
            **summary.as_json(),
            "identities": counts["identities"],
            "measured_identities": counts["measured_identities"],
            "coverage": coverage,
            "never": never,
            "never_total": counts["never_total"],
        }

    def _sorted_queues(self, rows: npt.NDArray[np.signedinteger[Any]]) -> list[dict[str, Any]]:
        """Queue rows in (process, device, queue) order, with the workloads' rows renumbered
        in place."""
        keys = list(self.queue_rows)
        order = sorted(range(len(keys)), key=lambda r: tuple(-1 if v is None else v
                                                             for v in keys[r]))  # fmt: skip
        renumber = np.zeros(len(order), np.int64)
        renumber[order] = np.arange(len(order))
        known = {(q.process, q.device, q.id): q for q in self.capture.queues()}
        several = len({p for p, _, _ in keys}) > 1
        names = {p.process: p.name for p in self.capture.processes() if p.name}
        floors = self.capture.queue_floors()
        queues = []
        for old in order:
            process, device, queue = keys[old]
            info = known.get((process, device or 0, queue or 0))
            dev = self.devices.get((process, device or 0))
            name = f"queue {'?' if queue is None else queue}"
            if several:
                name = f"{names.get(process, f'process {process}')} · {name}"
            queues.append({
                "name": name,
                "process": process,
                "device": device,
                "queue": queue,
                "device_name": dev.name if dev else None,
                "family": info.family if info else None,
                "index": info.index if info else None,
                "flags": list(info.flags) if info else [],
                "floor": _floor_info(floors.of(process, device, queue)),
            })  # fmt: skip
        rows[:] = renumber[rows]
        return queues

    def _frames(
        self, warmup: dict[tuple[int, int | None, int | None], str]
    ) -> list[dict[str, Any]]:
        """The frames that have work, in order of their first submission."""
        ended: dict[tuple[int, int | None, int | None], Frame] = {
            (f.process, f.device, f.number): f for f in self.capture.frames()
        }
        out = []
        for key in self.frame_rows:
            process, device, number = key
            frame = ended.get(key)
            out.append({
                "process": process,
                "device": device,
                "number": number,
                "captured": frame.captured if frame else None,
                "warmup": warmup.get(key),
            })  # fmt: skip
        return out

    def _capture_info(self) -> dict[str, Any]:
        capture = self.capture
        meta = capture.meta
        diagnostics = capture.diagnostics()
        frames = FrameCounts.of(capture)
        return {
            "file": capture.path.name,
            "status": meta.status,
            "schema_version": meta.schema_version,
            "vkscope_version": meta.vkscope_version,
            "created_utc": meta.created_utc,
            "finished_utc": meta.finished_utc,
            "process_name": meta.process_name,
            "pid": meta.pid,
            "messages": meta.messages,
            "bad_messages": meta.bad_messages,
            "dropped": meta.dropped,
            "frames_ended": len(capture.frames()),
            "frames_text": frames.sentence(),
            "frames_hint": frames.hint(),
            "processes": [
                {"name": p.name, "pid": p.pid, "state": p.state}
                for p in capture.processes()
                if p.state != "empty"
            ],
            "devices": [_device_info(d) for d in self.devices.values()],
            "diagnostics": len(diagnostics),
            "diagnostic_reasons": [d.reason for d in diagnostics[:_DIAGNOSTICS_SHOWN]],
        }


def _device_info(d: Device) -> dict[str, Any]:
    return {
        "process": d.process,
        "id": d.id,
        "name": d.name,
        "driver": " ".join(x for x in (d.driver_name, d.driver_info) if x) or None,
        "api_version": d.api_version,
        "clock_domain": d.clock_domain,
        "clock_max_deviation_ns": d.clock_max_deviation_ns,
    }
