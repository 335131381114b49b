"""Message types of the wire protocol and the typed payloads the decoder checks them against.

All of it is generated at build time from the protocol definition (vkscope/protocol.toml) into
protocol_gen.py: message codes (HELLO, ..., SUBMIT_DONE, and the host command CAPTURE), NAMES,
the msgspec Struct of each payload (Hello, Device, Workload, ...; ANNEX payloads are plain dicts)
in PAYLOAD_TYPES, the limits and the enumerations (SERIALIZATION, TIMING_REASON, ...). This module
re-exports it and adds what only the host needs. See the definition's header for what a field's
`required`, `default` and `absent` settings make of its Struct attribute.
"""

from __future__ import annotations

from .protocol_gen import *  # noqa: F403  (the generated names, re-exported)
from .protocol_gen import NAMES


def type_name(message_type: int) -> str:
    return NAMES.get(message_type, f"0x{message_type:02x}")
