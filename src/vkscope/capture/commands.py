"""Commands the host sends to the layer over its connection (docs/protocol.md, "Host commands").

They use the layer's own framing: type (1 byte), tag (8), payload length (4), little-endian.
"""

from __future__ import annotations

import struct
from typing import Final

CAPTURE: Final = 0x40
_HEADER: Final = struct.Struct("<BQI")


def capture_command(frames: int) -> bytes:
    """CAPTURE: capture the next `frames` frames of a layer whose `frames` setting is `host`
    (0 stops a capture in progress)."""
    if not 0 <= frames < 1 << 64:
        raise ValueError(f"frame count {frames} out of range")
    return _HEADER.pack(CAPTURE, frames, 0)
