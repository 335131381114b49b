"""Commands the host sends to the layer over its connection (docs/protocol.md, "Host commands").

They use the layer's own framing (wire.encode_frame): type, tag, payload length, little-endian.
"""

from __future__ import annotations

from ...protocol import CAPTURE
from .wire import encode_frame


def capture_command(frames: int) -> bytes:
    """CAPTURE: capture the next `frames` frames of a layer whose `frames` setting is `host`
    (0 stops a capture in progress)."""
    if not 0 <= frames < 1 << 64:
        raise ValueError(f"frame count {frames} out of range")
    return encode_frame(CAPTURE, frames, b"")
