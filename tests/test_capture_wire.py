"""The frame decoder: exact decoding of valid streams, and never raising on anything else."""

from __future__ import annotations

import itertools
import struct
from typing import TypeAlias

import msgspec
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from vkscope import protocol as m
from vkscope.capture.write.client import Stream
from vkscope.capture.write.wire import (
    MALFORMED_JSON,
    MAX_PAYLOAD,
    OVERSIZE,
    TRUNCATED,
    UNKNOWN_TYPE,
    Decoder,
    Diagnostic,
    Message,
    encode_frame,
)

Item: TypeAlias = Message | Diagnostic


def decode_all(data: bytes, cuts: list[int] | None = None) -> list[Item]:
    decoder = Decoder()
    out: list[Item] = []
    pieces = [data] if not cuts else _split(data, cuts)
    for piece in pieces:
        out += decoder.feed(piece)
    out += decoder.finish()
    return out


def _split(data: bytes, cuts: list[int]) -> list[bytes]:
    points = sorted({c % (len(data) + 1) for c in cuts} | {0, len(data)})
    return [data[a:b] for a, b in itertools.pairwise(points)]


def sample_stream() -> Stream:
    s = Stream()
    s.hello()
    s.device(queues=2)
    s.labels(1, ["frame", "shadow"])
    s.workload(7, "dispatch", api="vkCmdDispatch", groups=[4, 2, 1], invocations=512)
    s.workload(8, "renderpass", width=64, height=32, draws=3, attachments=[])
    sid = s.submit([(7, 1), (8, 0)], frame=0)
    s.annex(sid, 7, invocations=1024)
    s.frame(0)
    s.goodbye()
    return s


def test_valid_stream_decodes_exactly_in_any_pieces() -> None:
    s = sample_stream()
    data = s.data()
    whole = decode_all(data)
    assert [type(i) for i in whole] == [Message] * len(s.frames)
    offsets = [0]
    for frame in s.frames[:-1]:
        offsets.append(offsets[-1] + len(frame))
    assert [i.offset for i in whole] == offsets
    assert decode_all(data, list(range(0, len(data), 3))) == whole
    submit = whole[5]
    assert isinstance(submit, Message)
    assert (submit.type, submit.sequence, submit.tag) == (m.SUBMIT, 1, 0)
    assert submit.payload.workloads == [(7, 1), (8, 0)]
    annex = whole[6]
    assert isinstance(annex, Message)
    assert (annex.sequence, annex.tag, annex.payload) == (1, 7, {"invocations": 1024})
    workload = whole[3]
    assert isinstance(workload, Message)
    assert workload.payload.groups == (4, 2, 1)
    assert msgspec.json.decode(workload.raw)["api"] == "vkCmdDispatch"


def test_unknown_types_are_skipped_by_length_with_and_without_sequence() -> None:
    data = (
        encode_frame(0x40, 5, {"future": True})
        + encode_frame(0xC4, 9, b"\x00\xff not even json", sequence=77)
        + encode_frame(m.GOODBYE, 0, {"dropped": 0})
    )
    items = decode_all(data)
    first, second = items[0], items[1]
    assert isinstance(first, Diagnostic) and isinstance(second, Diagnostic)
    assert (first.kind, second.kind) == (UNKNOWN_TYPE, UNKNOWN_TYPE)
    assert second.offset == len(encode_frame(0x40, 5, {"future": True}))
    assert "0xc4" in second.reason
    assert isinstance(items[2], Message) and items[2].type == m.GOODBYE


@pytest.mark.parametrize(
    ("payload", "kind", "words"),
    [
        (b'{"device": 1, "type":', MALFORMED_JSON, "not valid JSON"),
        (b"\xff\xfe", MALFORMED_JSON, "not valid JSON"),
        (b"[1, 2]", "invalid_payload", "Expected `object`"),
        (b'{"device": 1, "api": "x"}', "invalid_payload", "`type`"),
        (
            b'{"device": 1, "type": "dispatch", "api": "", "groups": [1]}',
            "invalid_payload",
            "$.groups",
        ),
    ],
)
def test_bad_payloads_are_reported_and_decoding_goes_on(
    payload: bytes, kind: str, words: str
) -> None:
    good = encode_frame(m.HELLO, 0, {"protocol": 1, "pid": 1, "process": "a"})
    data = good + encode_frame(m.WORKLOAD, 3, payload) + good
    items = decode_all(data)
    assert isinstance(items[0], Message) and isinstance(items[2], Message)
    diag = items[1]
    assert isinstance(diag, Diagnostic)
    assert (diag.kind, diag.offset, diag.type) == (kind, len(good), m.WORKLOAD)
    assert words in diag.reason and diag.reason.startswith("WORKLOAD payload")


def test_oversize_length_stops_the_stream() -> None:
    good = encode_frame(m.GOODBYE, 0, {"dropped": 0})
    bad = struct.pack("<BQI", m.WORKLOAD, 1, MAX_PAYLOAD + 1)
    decoder = Decoder()
    items = decoder.feed(good + bad + good)
    items += decoder.feed(good)
    items += decoder.finish()
    assert isinstance(items[0], Message)
    assert len(items) == 2
    diag = items[1]
    assert isinstance(diag, Diagnostic)
    assert (diag.kind, diag.offset) == (OVERSIZE, len(good))
    assert "out of step" in diag.reason
    assert decoder.out_of_step and decoder.ignored_bytes == 2 * len(good) + len(bad)


def test_a_payload_of_exactly_the_limit_is_accepted() -> None:
    body = b'{"message": "' + b"x" * (MAX_PAYLOAD - 15) + b'"}'
    assert len(body) == MAX_PAYLOAD
    frame = encode_frame(m.LOG, 0, body)
    decoder = Decoder()
    items: list[Item] = []
    for i in range(0, len(frame), 65536):  # a big frame in small pieces
        items += decoder.feed(frame[i : i + 65536])
    assert len(items) == 1 and isinstance(items[0], Message)


@pytest.mark.parametrize("keep", [1, 12, 13, 20, 21, 30])
def test_truncated_frame_is_reported_at_finish(keep: int) -> None:
    good = encode_frame(m.GOODBYE, 0, {"dropped": 0})
    cut = encode_frame(m.SUBMIT, 0, {"device": 1}, sequence=4)[:keep]
    items = decode_all(good + cut)
    assert isinstance(items[0], Message)
    diag = items[1]
    assert isinstance(diag, Diagnostic)
    assert (diag.kind, diag.offset) == (TRUNCATED, len(good))
    assert "stream ended inside" in diag.reason


def test_encoder_refuses_a_sequence_mismatch() -> None:
    with pytest.raises(ValueError, match="needs a sequence"):
        encode_frame(m.SUBMIT, 0, {})
    with pytest.raises(ValueError, match="carries no sequence"):
        encode_frame(m.HELLO, 0, {}, sequence=1)


# -- fuzzing ---------------------------------------------------------------------------------

_ints = st.integers(min_value=0, max_value=2**64 - 1)
_small = st.integers(min_value=0, max_value=2**31)
_frames = st.one_of(
    st.builds(
        lambda tag, d: encode_frame(m.WORKLOAD, tag, {"device": d, "type": "dispatch", "api": ""}),
        _ints,
        _small,
    ),
    st.builds(
        lambda seq, tags: encode_frame(
            m.SUBMIT, 0, {"device": 0, "queue": 0, "frame": 0, "workloads": tags}, seq
        ),
        _ints,
        st.lists(st.tuples(_ints, _small), max_size=4),
    ),
    st.builds(
        lambda seq, tag, v: encode_frame(m.ANNEX, tag, {"draws": v}, seq), _ints, _ints, _small
    ),
    st.builds(
        lambda t, body: encode_frame(t, 0, body), st.integers(0x09, 0x7F), st.binary(max_size=40)
    ),
    st.builds(
        lambda t, seq, body: encode_frame(t, 0, body, seq),
        st.integers(0x83, 0xFF),
        _ints,
        st.binary(max_size=40),
    ),
    st.builds(lambda n: encode_frame(m.DROPPED, 0, {"dropped": n}), _small),
)


@settings(max_examples=300, deadline=None)
@given(st.binary(max_size=2000), st.lists(st.integers(min_value=0), max_size=8))
def test_arbitrary_bytes_never_raise(data: bytes, cuts: list[int]) -> None:
    items = decode_all(data, cuts)
    offsets = [i.offset for i in items]
    assert offsets == sorted(offsets)
    assert all(0 <= o < max(len(data), 1) for o in offsets)


@settings(max_examples=400, deadline=None)
@given(
    st.lists(_frames, min_size=1, max_size=12),
    st.integers(min_value=0),
    st.sampled_from(["truncate", "flip", "insert", "delete"]),
    st.binary(min_size=1, max_size=30),
    st.lists(st.integers(min_value=0), max_size=6),
)
def test_frames_before_the_first_corruption_decode_exactly(
    frames: list[bytes], where: int, how: str, junk: bytes, cuts: list[int]
) -> None:
    data = b"".join(frames)
    reference = decode_all(data)
    assert len(reference) == len(frames)  # one item per frame: a message or a skip
    at = where % len(data)
    if how == "truncate":
        mutated = data[:at]
    elif how == "flip":
        mutated = data[:at] + bytes([data[at] ^ (junk[0] or 1)]) + data[at + 1 :]
    elif how == "insert":
        mutated = data[:at] + junk + data[at:]
    else:
        mutated = data[:at] + data[at + len(junk) :]
    intact, end = 0, 0
    for frame in frames:
        end += len(frame)
        if end > at:
            break
        intact += 1
    items = decode_all(mutated, cuts)
    assert items[:intact] == reference[:intact]
