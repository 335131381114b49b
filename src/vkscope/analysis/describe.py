"""A workload's key metadata, as values (for CSV and JSON) and as a few words (for people)."""

from __future__ import annotations

from collections import Counter
from typing import Any

from ..capture import WorkloadInstance

_SKIP = {"device", "type", "api"}


def _int(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _num(value: Any) -> str:
    n = _int(value)
    return "?" if n is None else f"{n:,}"


def _count(value: Any, noun: str) -> str:
    return f"{_num(value)} {noun}" + ("" if _int(value) == 1 else "s")


def _dim(value: Any) -> str:
    n = _int(value)
    return "?" if n is None else str(n)


def _dims(*values: Any) -> str:
    return "x".join(_dim(v) for v in values)


def _list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else [value]


def size_text(value: Any) -> str:
    """A byte count for people: `4.0 KiB`, `812 bytes`."""
    n = _int(value)
    if n is None:
        return "? bytes"
    size, unit = float(n), "bytes"
    for bigger in ("KiB", "MiB", "GiB", "TiB"):
        if size < 1024:
            break
        size, unit = size / 1024, bigger
    return f"{n:,} bytes" if unit == "bytes" else f"{size:.1f} {unit}"


def duration_text(ns: int | float | None) -> str:
    """A GPU time for people: `850 ns`, `12.3 µs`, `1.25 ms`, `2.00 s` (a percentile between
    two whole nanoseconds: `850.5 ns`)."""
    if ns is None:
        return ""
    if abs(ns) < 1_000:
        if isinstance(ns, float):
            return f"{ns:.0f} ns" if ns.is_integer() else f"{ns:.1f} ns"
        return f"{ns} ns"
    for scale, unit in ((1_000, "µs"), (1_000_000, "ms"), (1_000_000_000, "s")):
        value = ns / scale
        if abs(value) < 999.5 or unit == "s":  # 999.7 µs shows as 1.00 ms, not 1000 µs
            digits = 2 if abs(value) < 10 else 1 if abs(value) < 100 else 0
            return f"{value:.{digits}f} {unit}"
    raise AssertionError("unreachable")


def share_text(share: float | None) -> str:
    return "" if share is None else f"{share * 100:.1f}%"


def _renderpass(md: dict[str, Any]) -> str:
    parts = [_dims(md.get("width"), md.get("height"))]
    layers = _int(md.get("layers"))
    if layers is not None and layers > 1:
        parts[0] += f", {layers} layers"
    parts.append(_count(md.get("draws"), "draw"))
    attachments = md.get("attachments")
    if isinstance(attachments, list):
        kinds = Counter(str(a.get("kind", "?")) for a in attachments if isinstance(a, dict))
        detail = ", ".join(f"{n} {k}" for k, n in kinds.items())
        parts.append(_count(len(attachments), "attachment") + (f" ({detail})" if detail else ""))
    if md.get("split"):
        parts.append("split")
    return ", ".join(parts)


def _dispatch(md: dict[str, Any]) -> str:
    groups, local = md.get("groups"), md.get("local_size")
    if groups is None:
        text = "indirect, group count not known"
    else:
        text = f"{_dims(*_list(groups))} groups"
        if local is not None:
            text += f" of {_dims(*_list(local))}"
    if md.get("invocations") is not None:
        text += " = " + _count(md.get("invocations"), "invocation")
    return text


def describe(w: WorkloadInstance) -> str:
    """The workload's key numbers in a few words."""
    md = w.metadata
    if w.type == "renderpass":
        return _renderpass(md)
    if w.type == "dispatch":
        return _dispatch(md)
    if w.type == "trace_rays":
        return f"{_dims(md.get('width'), md.get('height'), md.get('depth'))} rays"
    if w.type == "buffer_transfer":
        return f"{md.get('kind', '?')} {size_text(md.get('bytes'))}"
    if w.type == "image_transfer":
        return f"{md.get('kind', '?')} {_count(md.get('pixels'), 'pixel')}"
    if w.type == "acceleration_structure":
        return f"{md.get('kind', '?')}, {_count(md.get('count'), 'structure')}"
    scalars = (f"{k}={v}" for k, v in md.items() if k not in _SKIP and not isinstance(v, dict))
    return ", ".join(scalars)


def key_fields(w: WorkloadInstance) -> tuple[str | None, int | None, str | None, int | None]:
    """(size, draws, dispatch size, bytes): the numbers a table of workloads has a column for.

    Size is `WxH` (`WxHxL` with layers, `WxHxD` for rays) or a pixel count for image transfers;
    the dispatch size is its group counts `XxYxZ`.
    """
    md = w.metadata
    size: str | None = None
    if w.type in ("renderpass", "trace_rays", None) or "width" in md:
        third = md.get("depth") if w.type == "trace_rays" else md.get("layers")
        dims = [md.get("width"), md.get("height")]
        if _int(third) is not None and (w.type == "trace_rays" or third != 1):
            dims.append(third)
        size = _dims(*dims) if any(_int(d) is not None for d in dims) else None
    elif w.type == "image_transfer" and _int(md.get("pixels")) is not None:
        size = str(md["pixels"])
    groups = md.get("groups")
    dispatch = _dims(*_list(groups)) if w.type == "dispatch" and groups is not None else None
    return size, _int(md.get("draws")), dispatch, _int(md.get("bytes"))
