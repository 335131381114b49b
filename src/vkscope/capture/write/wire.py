"""Frames of the vkscope wire protocol (docs/protocol.md): an incremental decoder and an encoder.

The decoder never raises on what it is fed: whatever a connection sends becomes either a Message
or a Diagnostic carrying the stream offset of the frame it is about, so a broken layer (or a
stranger on the port) costs one connection's data at most, never the capture.
"""

from __future__ import annotations

import bisect
import struct
from typing import Any, Final

import msgspec

from ...protocol import (
    ANNEX,
    FRAME,
    MAX_PAYLOAD,
    PAYLOAD_TYPES,
    PLAIN,
    PLAIN_HEADER,
    SEQUENCED,
    SEQUENCED_HEADER,
    WORKLOAD,
    header_bytes,
    split_run,
    type_name,
)
from ...protocol import SEQUENCE_BIT as SEQUENCED_BIT

_PLAIN = PLAIN  # type, tag, length
_SEQUENCED = SEQUENCED  # type, sequence, tag, length
_LENGTH_AT: Final = struct.Struct("<I").unpack_from  # a plain frame's length, at its byte 9
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


class Frames(msgspec.Struct, gc=False):
    """What one piece of a connection's stream held, as the store takes it (Decoder.feed_frames).

    WORKLOAD and ANNEX frames, one per workload or instance and so nearly all of a busy stream,
    and FRAME frames, one per frame of the application, are handed over as bytes, never as
    decoded objects: the store keeps them as they are until the capture is finalized
    (journal.py). Consecutive WORKLOADs come as one run of raw frames (headers and payloads as
    sent), found by their lengths alone; a FRAME comes as its frame as sent. The payloads of
    both are decoded, and checked against the protocol, when the journal is built (build.py). An
    ANNEX comes as its payload, checked here (a JSON object, in UTF-8), a whole piece's at a
    time. Every other frame is a Message or a Diagnostic in `items`.
    """

    items: list[Message | Diagnostic]
    # (stream offset of the first frame, the frames): runs of consecutive WORKLOAD frames.
    workloads: list[tuple[int, bytes]]
    workload_count: int
    # (stream offset, the frame as sent): FRAME frames.
    frame_ends: list[tuple[int, bytes]]
    # (submitID, tagID, offset, payload, position): ANNEXes whose payload is a JSON object;
    # `position` is how many of `items` came before it in the stream.
    annexes: list[tuple[int, int, int, bytes, int]]


class _AnyObject(msgspec.Struct):
    """Any JSON object: what an ANNEX payload must be (its fields are read when it is merged)."""


_OBJECT_LIST: Final = msgspec.json.Decoder(list[_AnyObject])


class Decoder:
    """Turns the bytes of one connection, in whatever pieces they arrive, into messages."""

    def __init__(self) -> None:
        self._rest = bytearray()  # an incomplete frame carried over to the next feed
        self._need = 0  # bytes _rest must reach before that frame can be decoded
        self._base = 0  # stream offset of _rest[0]
        self.out_of_step = False
        self.ignoring = False  # told to ignore the rest of the stream (ignore_rest)
        self.ignored_bytes = 0  # bytes after an out-of-step frame, or ignored, never looked at

    @property
    def offset(self) -> int:
        """Stream offset of the first byte not yet decoded."""
        return self._base

    def ignore_rest(self) -> None:
        """Everything from now on is counted and dropped, unread (a connection refused)."""
        self.ignoring = True
        self.ignored_bytes += len(self._rest)
        self._rest = bytearray()

    def feed(self, data: bytes | bytearray | memoryview) -> list[Message | Diagnostic]:
        """Every frame completed by `data`, each decoded into a Message or a Diagnostic."""
        frames = self.feed_frames(data)
        if not frames.workloads and not frames.annexes and not frames.frame_ends:
            return frames.items
        out = list(frames.items)
        for mtype, runs in ((WORKLOAD, frames.workloads), (FRAME, frames.frame_ends)):
            for offset, run in runs:
                out += [_message(mtype, None, t, p, o) for t, o, p in split_run(offset, run, mtype)]
        out += [_message(ANNEX, s, t, p, o) for s, t, o, p, _ in frames.annexes]
        out.sort(key=_offset)
        return out

    def feed_frames(self, data: bytes | bytearray | memoryview) -> Frames:
        """Every frame completed by `data`, WORKLOADs, FRAMEs and ANNEXes left as bytes."""
        frames = Frames(items=[], workloads=[], workload_count=0, frame_ends=[], annexes=[])
        if self.out_of_step or self.ignoring:
            self.ignored_bytes += len(data)
            return frames
        if self._rest:
            if len(self._rest) + len(data) < self._need:
                # Appending to a bytearray keeps a big frame arriving in small pieces linear.
                self._rest += data
                return frames
            buf = bytes(self._rest) + bytes(data)
        else:
            buf = bytes(data)  # no copy when it is bytes already
        pos = self._decode(buf, frames)
        if self.out_of_step:
            self.ignored_bytes += len(buf) - pos
            pos = len(buf)
        if frames.annexes:
            _check_annexes(frames)
        self._rest = bytearray(buf[pos:])
        self._base += pos
        return frames

    def finish(self) -> list[Diagnostic]:
        """Call at end of stream: reports a frame the stream ended inside of."""
        if self.out_of_step or self.ignoring or not self._rest:
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

    def _decode(self, buf: bytes, frames: Frames) -> int:
        """Decodes every whole frame in buf; returns how many bytes they took."""
        # Locals, not globals, in the loop: it runs once per message. A WORKLOAD, the most
        # frequent frame, takes the first branch and nothing else: its length is all it needs.
        end = len(buf)
        pos = 0
        base = self._base
        plain, sequenced, length_at = _PLAIN.unpack_from, _SEQUENCED.unpack_from, _LENGTH_AT
        decoders = _DECODERS
        items = frames.items
        append = items.append
        add_annex = frames.annexes.append
        add_frame_end = frames.frame_ends.append
        workload_runs = frames.workloads
        count = 0
        need = PLAIN_HEADER
        while end - pos >= PLAIN_HEADER:
            mtype = buf[pos]
            if mtype == WORKLOAD:
                # A run of WORKLOAD frames is passed over in a loop of its own: per frame, only
                # its length is read. A frame that is incomplete or oversized ends the run and
                # the general path below says why.
                run = pos
                while True:
                    (length,) = length_at(buf, pos + 9)
                    stop = pos + PLAIN_HEADER + length
                    if stop > end or length > MAX_PAYLOAD:
                        break
                    count += 1
                    pos = stop
                    if end - pos < PLAIN_HEADER or buf[pos] != WORKLOAD:
                        break
                if pos > run:
                    workload_runs.append((base + run, buf[run:pos]))
                if end - pos < PLAIN_HEADER:
                    break
                mtype = buf[pos]
                if mtype == WORKLOAD and length <= MAX_PAYLOAD:
                    need = stop - pos  # the frame at pos is incomplete
                    break
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
                frames.workload_count = count
                return pos
            stop = start + length
            if stop > end:
                need = stop - pos
                break
            if mtype == FRAME:
                add_frame_end((base + pos, buf[pos:stop]))
                pos = stop
                continue
            raw = buf[start:stop]
            if mtype == ANNEX:
                add_annex((sequence, tag, base + pos, raw, len(items)))
                pos = stop
                continue
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
        frames.workload_count = count
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
        return _bad_payload(frame, self._base + pos, mtype, kind, detail)


def _message(
    mtype: int, sequence: int | None, tag: int, payload: bytes, offset: int
) -> Message | Diagnostic:
    try:
        return Message(mtype, sequence, tag, _DECODERS[mtype].decode(payload), payload, offset)
    except (msgspec.DecodeError, ValueError) as exc:
        frame = header_bytes(mtype, sequence, tag, len(payload)) + payload[:_EXCERPT]
        return bad_payload(frame, offset, mtype, exc)


def _offset(item: Message | Diagnostic) -> int:
    return item.offset


def bad_payload(frame: bytes, offset: int, mtype: int, exc: Exception) -> Diagnostic:
    """The diagnostic for a payload msgspec refused with `exc`; `frame`: its first bytes."""
    kind = INVALID_PAYLOAD if isinstance(exc, msgspec.ValidationError) else MALFORMED_JSON
    return _bad_payload(frame, offset, mtype, kind, str(exc))


def _bad_payload(frame: bytes, offset: int, mtype: int, kind: str, detail: str) -> Diagnostic:
    what = "is not valid JSON" if kind == MALFORMED_JSON else "does not match the protocol"
    reason = f"{type_name(mtype)} payload {what}: {detail}"
    return Diagnostic(offset, kind, reason, frame[:_EXCERPT], mtype)


def _check_annexes(frames: Frames) -> None:
    """Checks the piece's ANNEX payloads; those that fail become Diagnostics.

    One msgspec call checks them all, joined into a JSON array. A payload that is not exactly
    one JSON value breaks the array or changes its length; only then is each checked on its
    own, to say which.
    """
    if _all_valid([a[3] for a in frames.annexes]):
        return
    bad: list[Diagnostic] = []
    kept = []
    decode = _DECODERS[ANNEX].decode
    for entry in frames.annexes:
        sequence, tag, offset, payload, _ = entry
        try:
            decode(payload)
        except (msgspec.DecodeError, ValueError) as exc:
            frame = header_bytes(ANNEX, sequence, tag, len(payload)) + payload[:_EXCERPT]
            bad.append(bad_payload(frame, offset, ANNEX, exc))
        else:
            kept.append(entry)
    # Put the diagnostics among the other items in stream order, and recount how many items
    # come before each annex.
    items = sorted([*frames.items, *bad], key=_offset)
    offsets = [item.offset for item in items]
    frames.items = items
    frames.annexes = [(*a[:4], bisect.bisect(offsets, a[2])) for a in kept]


def _all_valid(payloads: list[bytes]) -> bool:
    """Whether each payload is a JSON object, all of it UTF-8 (which decoding it into a dict
    would check, but not skipping over its fields)."""
    joined = b",".join(payloads)
    try:
        joined.decode()
        return len(_OBJECT_LIST.decode(b"[" + joined + b"]")) == len(payloads)
    except (msgspec.DecodeError, ValueError):
        return False


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
