"""WORKLOAD messages as rows of the workloads table, one INSERT per workload type.

Each type binds only the extracted columns it has (a dispatch its groups and invocations, a
render pass its draws and size, ...) and leaves the others to their NULL default, so a row binds
8 to 10 values instead of 16. Types this vkscope does not know bind every column.
"""

from __future__ import annotations

from typing import Any, Final

from . import messages as m

_BASE: Final = "process, tag_id, device, type, api, metadata"
_EXTRACTED: Final = (
    "draws", "width", "height", "groups_x", "groups_y", "groups_z", "invocations", "bytes",
    "pixels", "kind",
)  # fmt: skip


def _insert(columns: tuple[str, ...]) -> str:
    # Absent fields arrive as messages.ABSENT (or '' for kind), turned back into NULL here.
    values = [f"NULLIF(?,{m.ABSENT})" if c != "kind" else "NULLIF(?,'')" for c in columns]
    names = ", ".join((_BASE, *columns))
    return f"INSERT INTO workloads ({names}) VALUES (?,?,?,?,?,?,{','.join(values)})"


WORKLOAD_SQL: Final = {
    "workloads:renderpass": _insert(("draws", "width", "height")),
    "workloads:dispatch": _insert(("groups_x", "groups_y", "groups_z", "invocations")),
    "workloads:buffer_transfer": _insert(("bytes", "kind")),
    "workloads:image_transfer": _insert(("pixels", "kind")),
    "workloads:trace_rays": _insert(("width", "height")),
    "workloads:other": _insert(_EXTRACTED),
}

_NO_GROUPS: Final = (m.ABSENT, m.ABSENT, m.ABSENT)


class WorkloadRows:
    def __init__(self, lists: dict[str, list[Any]]) -> None:
        for name in WORKLOAD_SQL:
            lists[name] = []
        self._lists = [lists[name] for name in WORKLOAD_SQL]
        self._renderpass = lists["workloads:renderpass"].append
        self._dispatch = lists["workloads:dispatch"].append
        self._buffer = lists["workloads:buffer_transfer"].append
        self._image = lists["workloads:image_transfer"].append
        self._rays = lists["workloads:trace_rays"].append
        self._other = lists["workloads:other"].append

    def pending(self) -> int:
        return sum(map(len, self._lists))

    def add(self, conn: Any, msg: Any) -> None:
        """The WORKLOAD handler itself (one call less per message than going through another)."""
        w: m.Workload = msg.payload
        process, tag, t = conn.process, msg.tag, w.type
        meta = msg.raw.decode("utf-8", "replace")
        if t == "dispatch":
            gx, gy, gz = w.groups or _NO_GROUPS
            self._dispatch((process, tag, w.device, t, w.api, meta, gx, gy, gz, w.invocations))
        elif t == "renderpass":
            self._renderpass((process, tag, w.device, t, w.api, meta, w.draws, w.width, w.height))
        elif t == "buffer_transfer":
            self._buffer((process, tag, w.device, t, w.api, meta, w.nbytes, w.kind))
        elif t == "image_transfer":
            self._image((process, tag, w.device, t, w.api, meta, w.pixels, w.kind))
        elif t == "trace_rays":
            self._rays((process, tag, w.device, t, w.api, meta, w.width, w.height))
        else:
            gx, gy, gz = w.groups or _NO_GROUPS
            self._other(
                (process, tag, w.device, t, w.api, meta, w.draws, w.width, w.height, gx, gy, gz,
                 w.invocations, w.nbytes, w.pixels, w.kind)
            )  # fmt: skip
