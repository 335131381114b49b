"""Frames of the vkscope wire protocol (docs/protocol.md): an incremental decoder and an encoder.

The decoder never raises on what it is fed: whatever a connection sends becomes either a Message
or a Diagnostic carrying the stream offset of the frame it is about, so a broken layer (or a
stranger on the port) costs one connection's data at most, never the capture.
"""

from __future__ import annotations

import struct
from typing import Any, Final

import msgspec

from .messages import MAX_PAYLOAD, PAYLOAD_TYPES, type_name
from .messages import SEQUENCE_BIT as SEQUENCED_BIT

_PLAIN = struct.Struct("<BQI")  # type, tag, length
_SEQUENCED = struct.Struct("<BQQI")  # type, sequence, tag, length
PLAIN_HEADER: Final = _PLAIN.size
SEQUENCED_HEADER: Final = _SEQUENCED.size
_EXCERPT = 32

# Diagnostic kinds. Only UNKNOWN_TYPE is benign (a newer layer); the rest are bad messages.
MALFORMED_JSON: Final = "malformed_json"
INVALID_PAYLOAD: Final = "invalid_payload"
UNKNOWN_TYPE: Final = "unknown_type"
OVERSIZE: Final = "oversize"
TRUNCATED: Final = "truncated"


class Message(msgspec.Struct, gc=False):
    """One decoded frame. `raw` is the payload's JSON text exactly as sent."""

    type: int
    sequence: int | None
    tag: int
    payload: Any
    raw: bytes
    offset: int


class Diagnostic(msgspec.Struct, gc=False):
    """Something wrong with the frame that starts at stream byte `offset`."""

    offset: int
    kind: str
    reason: str
    excerpt: bytes = b""
    type: int | None = None


_DECODERS: Final[dict[int, msgspec.json.Decoder[Any]]] = {
    t: msgspec.json.Decoder(p) for t, p in PAYLOAD_TYPES.items()
}


class Decoder:
    """Turns the bytes of one connection, in whatever pieces they arrive, into messages."""

    def __init__(self) -> None:
        self._rest = bytearray()  # an incomplete frame carried over to the next feed
        self._need = 0  # bytes _rest must reach before that frame can be decoded
        self._base = 0  # stream offset of _rest[0]
        self.out_of_step = False
        self.ignored_bytes = 0  # bytes after an out-of-step frame, never looked at

    @property
    def offset(self) -> int:
        """Stream offset of the first byte not yet decoded."""
        return self._base

    @property
    def pending_bytes(self) -> int:
        return len(self._rest)

    def feed(self, data: bytes | bytearray | memoryview) -> list[Message | Diagnostic]:
        if self.out_of_step:
            self.ignored_bytes += len(data)
            return []
        if self._rest:
            # Appending to a bytearray keeps a big frame arriving in small pieces linear.
            self._rest += data
            if len(self._rest) < self._need:
                return []
            buf = bytes(self._rest)
        else:
            buf = bytes(data)  # no copy when it is bytes already
        out: list[Message | Diagnostic] = []
        pos = self._decode(buf, out)
        if self.out_of_step:
            self.ignored_bytes += len(buf) - pos
            pos = len(buf)
        self._rest = bytearray(buf[pos:])
        self._base += pos
        return out

    def finish(self) -> list[Diagnostic]:
        """Call at end of stream: reports a frame the stream ended inside of."""
        if self.out_of_step or not self._rest:
            return []
        buf, have = self._rest, len(self._rest)
        header = SEQUENCED_HEADER if buf[0] & SEQUENCED_BIT else PLAIN_HEADER
        if have < header:
            reason = f"stream ended inside a frame header ({have} of {header} bytes)"
        else:
            length = _header(buf, 0)[3]
            reason = (
                f"stream ended inside a {type_name(buf[0])} frame: payload of {length} bytes, "
                f"{have - header} received"
            )
        diag = Diagnostic(self._base, TRUNCATED, reason, bytes(buf[:_EXCERPT]), buf[0])
        self._base += have
        self._rest = bytearray()
        return [diag]

    def _decode(self, buf: bytes, out: list[Message | Diagnostic]) -> int:
        """Decodes every whole frame in buf; returns how many bytes they took."""
        # Locals, not globals, in the loop: it runs once per message.
        end = len(buf)
        pos = 0
        base = self._base
        plain, sequenced = _PLAIN.unpack_from, _SEQUENCED.unpack_from
        decoders = _DECODERS
        append = out.append
        need = PLAIN_HEADER
        while end - pos >= PLAIN_HEADER:
            mtype = buf[pos]
            if mtype & SEQUENCED_BIT:
                if end - pos < SEQUENCED_HEADER:
                    need = SEQUENCED_HEADER
                    break
                _, sequence, tag, length = sequenced(buf, pos)
                start = pos + SEQUENCED_HEADER
            else:
                _, tag, length = plain(buf, pos)
                sequence = None
                start = pos + PLAIN_HEADER
            if length > MAX_PAYLOAD:
                append(self._oversize(buf[pos : pos + _EXCERPT], pos, mtype, length))
                self.out_of_step = True
                return pos
            stop = start + length
            if stop > end:
                need = stop - pos
                break
            raw = buf[start:stop]
            decoder = decoders.get(mtype)
            if decoder is None:
                append(self._unknown(buf[pos:stop], pos, mtype, length))
            else:
                try:
                    append(Message(mtype, sequence, tag, decoder.decode(raw), raw, base + pos))
                except msgspec.ValidationError as exc:
                    append(self._bad(buf[pos:stop], pos, mtype, INVALID_PAYLOAD, str(exc)))
                except (msgspec.DecodeError, ValueError) as exc:
                    append(self._bad(buf[pos:stop], pos, mtype, MALFORMED_JSON, str(exc)))
            pos = stop
        self._need = need
        return pos

    # Each takes the frame (as far as it goes) and its position; the excerpt is its first bytes.

    def _oversize(self, frame: bytes, pos: int, mtype: int, length: int) -> Diagnostic:
        reason = (
            f"{type_name(mtype)} frame claims a {length}-byte payload, over the "
            f"{MAX_PAYLOAD}-byte limit: the stream is out of step; the rest of it is ignored"
        )
        return Diagnostic(self._base + pos, OVERSIZE, reason, frame[:_EXCERPT], mtype)

    def _unknown(self, frame: bytes, pos: int, mtype: int, length: int) -> Diagnostic:
        reason = f"unknown message type 0x{mtype:02x} ({length}-byte payload) skipped"
        return Diagnostic(self._base + pos, UNKNOWN_TYPE, reason, frame[:_EXCERPT], mtype)

    def _bad(self, frame: bytes, pos: int, mtype: int, kind: str, detail: str) -> Diagnostic:
        what = "is not valid JSON" if kind == MALFORMED_JSON else "does not match the protocol"
        reason = f"{type_name(mtype)} payload {what}: {detail}"
        return Diagnostic(self._base + pos, kind, reason, frame[:_EXCERPT], mtype)


def _header(buf: bytes | bytearray, pos: int) -> tuple[int, int | None, int, int]:
    """(type, sequence, tag, length) of the whole header at pos."""
    if buf[pos] & SEQUENCED_BIT:
        mtype, sequence, tag, length = _SEQUENCED.unpack_from(buf, pos)
        return mtype, sequence, tag, length
    mtype, tag, length = _PLAIN.unpack_from(buf, pos)
    return mtype, None, tag, length


def encode_frame(
    message_type: int, tag: int, payload: object, sequence: int | None = None
) -> bytes:
    """One frame; `payload` is encoded as JSON unless it is already bytes (sent as they are)."""
    body = payload if isinstance(payload, bytes) else msgspec.json.encode(payload)
    if message_type & SEQUENCED_BIT:
        if sequence is None:
            raise ValueError(f"message type 0x{message_type:02x} needs a sequence number")
        return _SEQUENCED.pack(message_type, sequence, tag, len(body)) + body
    if sequence is not None:
        raise ValueError(f"message type 0x{message_type:02x} carries no sequence number")
    return _PLAIN.pack(message_type, tag, len(body)) + body
