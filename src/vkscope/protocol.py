"""Message types of the wire protocol and the typed payloads the decoder checks them against.

All of it is generated at build time from the protocol definition (vkscope/protocol.toml) into
protocol_gen.py: message codes (HELLO, ..., SUBMIT_DONE, and the host command CAPTURE), NAMES,
the msgspec Struct of each payload (Hello, Device, Workload, ...; ANNEX payloads are plain dicts)
in PAYLOAD_TYPES, the limits and the enumerations (SERIALIZATION, TIMING_REASON, ...). This module
re-exports it and adds what only the host needs: names for message types, and the frames' header
layout, which the decoder (capture/write/wire.py) and the journal (capture/write/journal.py)
read. See the definition's header for what a field's `required`, `default` and `absent` settings
make of its Struct attribute.
"""

from __future__ import annotations

import struct
from typing import Final

from .protocol_gen import *  # noqa: F403  (the generated names, re-exported)
from .protocol_gen import NAMES

# A frame's header (docs/protocol.md, "Frames"), little-endian: type, tag and payload length; a
# sequenced type (SEQUENCE_BIT) has its sequence number between type and tag.
PLAIN: Final = struct.Struct("<BQI")
SEQUENCED: Final = struct.Struct("<BQQI")
PLAIN_HEADER: Final = PLAIN.size
SEQUENCED_HEADER: Final = SEQUENCED.size


def type_name(message_type: int) -> str:
    return NAMES.get(message_type, f"0x{message_type:02x}")


def header_bytes(mtype: int, sequence: int | None, tag: int, length: int) -> bytes:
    if sequence is None:
        return PLAIN.pack(mtype, tag, length)
    return SEQUENCED.pack(mtype, sequence, tag, length)


def split_run(offset: int, run: bytes, message_type: int) -> list[tuple[int, int, bytes]]:
    """(tag, stream offset, payload) of each frame of a run of unsequenced frames of one type,
    as sent, the first at stream byte `offset`. Raises ValueError on bytes that are not such a
    run."""
    out = []
    pos, end = 0, len(run)
    plain = PLAIN.unpack_from
    try:
        while pos < end:
            mtype, tag, length = plain(run, pos)
            stop = pos + PLAIN_HEADER + length
            if mtype != message_type or stop > end:
                raise ValueError(f"not a run of {type_name(message_type)} frames at byte {pos}")
            out.append((tag, offset + pos, run[pos + PLAIN_HEADER : stop]))
            pos = stop
    except struct.error as exc:
        name = type_name(message_type)
        raise ValueError(f"not a run of {name} frames at byte {pos}: {exc}") from None
    return out
