"""Message types of the wire protocol and the typed payloads the decoder checks them against.

Each payload Struct names the fields the host relies on. Fields the protocol lists but the host
only displays default to None, so a layer that cannot fill one (say, a driver that reports no
driver_info) still gets its message through; fields without a default are required, and a message
lacking one is rejected with msgspec's path to the problem. Unknown fields are ignored, which lets
the layer add fields before the host learns them.
"""

from __future__ import annotations

from typing import Any, Final

import msgspec

HELLO: Final = 0x01
DEVICE: Final = 0x02
WORKLOAD: Final = 0x03
LABELS: Final = 0x04
FRAME: Final = 0x05
DROPPED: Final = 0x06
LOG: Final = 0x07
GOODBYE: Final = 0x08
SUBMIT: Final = 0x81
ANNEX: Final = 0x82
SUBMIT_DONE: Final = 0x83

NAMES: Final[dict[int, str]] = {
    HELLO: "HELLO",
    DEVICE: "DEVICE",
    WORKLOAD: "WORKLOAD",
    LABELS: "LABELS",
    FRAME: "FRAME",
    DROPPED: "DROPPED",
    LOG: "LOG",
    GOODBYE: "GOODBYE",
    SUBMIT: "SUBMIT",
    ANNEX: "ANNEX",
    SUBMIT_DONE: "SUBMIT_DONE",
}

PROTOCOL_VERSION: Final = 1

# Stands for "field absent" in the WORKLOAD columns the store extracts. Binding None through
# Python's sqlite3 costs ~0.2 us a value (it looks for adapters first), so absent fields default
# to this integer, which the INSERT turns back into NULL with NULLIF; an explicit JSON null
# still arrives as None. No real count or size is -2**63.
ABSENT: Final = -(2**63)


def type_name(message_type: int) -> str:
    return NAMES.get(message_type, f"0x{message_type:02x}")


class Hello(msgspec.Struct, gc=False):
    protocol: int
    pid: int
    process: str
    layer_version: str | None = None


class QueueInfo(msgspec.Struct, gc=False):
    id: int
    family: int
    index: int
    flags: list[str] = []
    timestamp_valid_bits: int | None = None


class Clock(msgspec.Struct, gc=False):
    """Which clock a device's GPU times are on (the timing setting; docs/protocol.md)."""

    domain: str | None = None
    max_deviation_ns: int | None = None


class Device(msgspec.Struct, gc=False):
    name: str
    queues: list[QueueInfo]
    vendor_id: int | None = None
    device_id: int | None = None
    driver_name: str | None = None
    driver_info: str | None = None
    api_version: str | None = None
    timestamp_period_ns: float | None = None
    clock: Clock | None = None  # sent only with timing on


class Workload(msgspec.Struct, gc=False):
    """The columns the store extracts; the whole payload is kept as JSON text beside them."""

    device: int
    type: str
    api: str
    draws: int | None = ABSENT
    width: int | None = ABSENT
    height: int | None = ABSENT
    groups: tuple[int, int, int] | None = None
    invocations: int | None = ABSENT
    nbytes: int | None = msgspec.field(name="bytes", default=ABSENT)
    pixels: int | None = ABSENT
    kind: str | None = ""


class Labels(msgspec.Struct, gc=False):
    device: int
    labels: list[str]


class Frame(msgspec.Struct, gc=False):
    device: int
    queue: int
    cpu_ns: int
    reason: str | None = None
    captured: bool | None = None  # None: a layer that predates frame selection


class Dropped(msgspec.Struct, gc=False):
    dropped: int


class Log(msgspec.Struct, gc=False):
    message: str
    level: str = "info"


class Goodbye(msgspec.Struct, gc=False):
    dropped: int = 0


class Submit(msgspec.Struct, gc=False):
    device: int
    queue: int
    frame: int
    workloads: list[tuple[int, int]]
    cpu_ns: int | None = None
    api: str | None = None
    batch: int | None = None


class SubmitDone(msgspec.Struct, gc=False):
    cpu_ns: int


# ANNEX payloads are open-ended: any object, merged field by field into its instance.
Annex = dict[str, Any]

PAYLOAD_TYPES: Final[dict[int, Any]] = {
    HELLO: Hello,
    DEVICE: Device,
    WORKLOAD: Workload,
    LABELS: Labels,
    FRAME: Frame,
    DROPPED: Dropped,
    LOG: Log,
    GOODBYE: Goodbye,
    SUBMIT: Submit,
    ANNEX: Annex,
    SUBMIT_DONE: SubmitDone,
}
