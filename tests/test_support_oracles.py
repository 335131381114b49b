"""The tests' own oracles (tests/support/) checked on their own: a frame decoder independent of
the host's and a Perfetto trace reader that nests slices as the trace processor does."""

from __future__ import annotations

from pathlib import Path

from support.perfetto import BEGIN, CLEARED, END, MONOTONIC, ReadTrace, pb

from harness.timeline import _PLAIN, _SEQUENCED, ANNEX, SUBMIT, WORKLOAD, Capture, Message, decode


def test_decoder_reads_both_frame_shapes() -> None:
    plain = _PLAIN.pack(WORKLOAD, 7, 2) + b"{}"
    sequenced = _SEQUENCED.pack(ANNEX, 3, 7, 12) + b'{"draws":12}'
    messages = decode(plain + sequenced)
    assert messages == [
        Message(WORKLOAD, None, 7, {}),
        Message(ANNEX, 3, 7, {"draws": 12}),
    ]


def test_capture_merges_annexes_into_instances() -> None:
    frames = [
        Message(WORKLOAD, None, 5, {"type": "dispatch", "groups": None}),
        Message(SUBMIT, 9, 0, {"workloads": [[5, 0]]}),
        Message(ANNEX, 9, 5, {"groups": [8, 2, 1]}),
    ]
    capture = Capture([frames])
    ((submit, tag, instance, stack),) = list(capture.submitted())
    assert (submit.sequence, tag, instance["groups"], stack) == (9, 5, [8, 2, 1], [])


def test_reader_nests_like_the_trace_processor(tmp_path: Path) -> None:
    """The reader's own check: equal times keep file order, END closes the innermost."""
    trace = pb.Trace()
    p = trace.packet.add()
    p.trusted_packet_sequence_id = 1
    p.sequence_flags = CLEARED
    p.track_descriptor.uuid = 5
    p.track_descriptor.name = "t"
    for ts, kind, name in ((10, BEGIN, "a"), (20, END, None), (20, BEGIN, "b"), (30, END, None)):
        q = trace.packet.add()
        q.trusted_packet_sequence_id = 1
        q.timestamp, q.timestamp_clock_id = ts, MONOTONIC
        q.track_event.type, q.track_event.track_uuid = kind, 5
        if name:
            q.track_event.name = name
    path = tmp_path / "t.pftrace"
    path.write_bytes(trace.SerializeToString())
    slices = ReadTrace(path).slices()
    assert [(s.name, s.begin, s.end, s.depth) for s in slices] == [
        ("a", 10, 20, 0),
        ("b", 20, 30, 0),
    ]
