"""GPU time analysis of captures made over a real socket: spans, sums, shares, label subtrees,
and the overlap serialization removes (a `none` capture against a `queue` one)."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st
from support.analysis_scenes import T0, scene
from support.captures import capture_from

from vkscope.analysis import Selection, SelectionError, Summary, compare, read_frames, span_of
from vkscope.analysis.frames import queue_rows
from vkscope.analysis.overlap import OverlapError, OverlapTotals, order_captures
from vkscope.analysis.selection import parse_numbers
from vkscope.capture import open_capture
from vkscope.capture.read.warmup import warmup_frames
from vkscope.capture.write.client import Stream


@pytest.fixture(scope="module")
def queue_capture(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return capture_from(tmp_path_factory.mktemp("queue"), scene("queue"))


@pytest.fixture(scope="module")
def none_capture(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return capture_from(tmp_path_factory.mktemp("none"), scene("none"))


def test_spans_sums_and_gaps_per_frame_and_queue(queue_capture: Path) -> None:
    with open_capture(queue_capture) as cap:
        frames = list(read_frames(cap, Selection()))
        assert [(f.key.frame, f.captured, f.gpu_ns) for f in frames] == [
            (0, True, 1000), (1, True, 1000), (2, True, 1000), (3, True, 1000), (4, False, 0),
        ]  # fmt: skip
        q0, q1 = frames[1].queues
        t = T0 + 1_000_000
        assert (q0.queue, q0.span.workloads, q0.span.timed, q0.span.sum_ns) == (0, 3, 3, 700)
        assert (q0.span.begin_ns, q0.span.end_ns, q0.span.span_ns) == (t, t + 800, 800)
        assert (q0.span.busy_ns, q0.span.gaps, q0.span.idle_ns, q0.span.overlap_ns) == (
            700, 1, 100, 0,
        )  # fmt: skip
        assert (q1.queue, q1.span.workloads, q1.span.timed, q1.span.untimed) == (1, 2, 1, 1)
        assert (q1.span.sum_ns, q1.span.span_ns, q1.span.gaps) == (300, 300, 0)
        rows = list(queue_rows(cap, frames[1], q0, Selection()))
        assert [(w.type, frames[1].share(w)) for w in rows] == [
            ("renderpass", 0.4), ("dispatch", 0.2), ("buffer_transfer", 0.1),
        ]  # fmt: skip
        (untimed,) = frames[4].queues
        assert (untimed.span.workloads, untimed.span.timed, untimed.span.begin_ns) == (1, 0, None)


def summary_of(cap_path: Path, selection: Selection, top: int = 5) -> Summary:
    with open_capture(cap_path) as cap:
        return Summary(top, "gpu_ns", selection, warmup_frames(cap, 0)).run(cap, counters=False)


def test_costliest_workloads_and_label_subtrees(queue_capture: Path) -> None:
    summary = summary_of(queue_capture, Selection())
    assert (summary.frames, summary.workloads, summary.timed, summary.gpu_ns) == (5, 21, 16, 4000)
    top = summary.top
    assert [(c.key.frame, c.workload.type, c.gpu_ns, c.share) for c in top] == [
        (0, "renderpass", 400, 0.4), (1, "renderpass", 400, 0.4), (2, "renderpass", 400, 0.4),
        (3, "renderpass", 400, 0.4), (0, "dispatch", 300, 0.3),
    ]  # fmt: skip
    tree = {r.label_path: (r.workloads, r.self_ns, r.inclusive_ns) for r in summary.labels.rows()}
    assert tree == {
        "": (21, 0, 4000),  # the blit has no label, and no time
        "frame": (17, 400, 4000),
        "frame/shadows": (5, 1600, 1600),
        "frame/post": (8, 0, 2000),
        "frame/post/bloom": (8, 2000, 2000),
    }
    order = [r.label_path for r in summary.labels.rows()]
    assert order == ["", "frame", "frame/post", "frame/post/bloom", "frame/shadows"]
    shares = {r.label_path: r.inclusive_share for r in summary.labels.rows()}
    assert shares["frame/shadows"] == pytest.approx(0.4)


def test_filters_choose_what_is_listed_not_what_spans_count(queue_capture: Path) -> None:
    bloom = summary_of(queue_capture, Selection.parse(frames="1,2", label="*/bloom"))
    assert (bloom.frames, bloom.workloads, bloom.gpu_ns) == (2, 4, 1000)
    dispatch = summary_of(queue_capture, Selection.parse(types="dispatch", queues="1"))
    assert (dispatch.workloads, dispatch.gpu_ns) == (4, 1200)
    shadow = summary_of(queue_capture, Selection.parse(label="shadow", frames="3-"))
    assert (shadow.workloads, shadow.timed) == (2, 1)  # frame 4's render pass is untimed
    with open_capture(queue_capture) as cap:
        (frame,) = read_frames(cap, Selection.parse(frames="2", types="buffer_transfer"))
        assert [q.span.sum_ns for q in frame.queues] == [700, 300]  # whole queues


def test_frames_that_do_not_exist_are_refused(queue_capture: Path) -> None:
    with open_capture(queue_capture) as cap:
        for text, words in (
            ("7", "no frame 7 "), ("3-9", "no frame 5-9 "), ("2,6,8", "no frame 6, 8 "),
            ("100-", "no frame 100- "),
        ):  # fmt: skip
            with pytest.raises(SelectionError, match=words) as info:
                list(read_frames(cap, Selection.parse(frames=text)))
            assert "its frames with work: 0 to 4" in str(info.value)
        assert len(list(read_frames(cap, Selection.parse(frames="3-")))) == 2
        with pytest.raises(SelectionError, match="no frame 5-24 "):  # the first 20 missing
            list(read_frames(cap, Selection.parse(frames="0-1000000000000")))


def test_frame_numbers_parse() -> None:
    n = parse_numbers("3, 5-9,12-")
    assert [x for x in range(20) if x in n] == [3, 5, 6, 7, 8, 9, 12, 13, 14, 15, 16, 17, 18, 19]
    for bad in ("", "x", "3-1", "-4", "1,,2", "1.5"):
        with pytest.raises(SelectionError):
            parse_numbers(bad)
    wide = parse_numbers("0-1000000000")
    present = set(range(0, 2000, 2))

    def count(lo: int, hi: int | None) -> int:
        return sum(1 for n in present if n >= lo and (hi is None or n <= hi))

    assert wide.missing(count, limit=3) == [1, 3, 5]


def test_overlap_serialization_removed(none_capture: Path, queue_capture: Path) -> None:
    with open_capture(queue_capture) as q, open_capture(none_capture) as n:
        none, serialized, mode = order_captures(q, n)  # given in either order
        assert (none.path, serialized.path, mode) == (none_capture, queue_capture, "queue")
        totals = OverlapTotals()
        frames = list(compare(none, serialized, Selection.parse(frames="0-3")))
        pairs = {}
        for frame in frames:
            totals.add_frame(frame)
            for p in frame.workloads:
                totals.add(p)
                pairs[(frame.key.frame, p.queue, p.type, p.label_path, p.occurrence)] = p
        q0 = frames[0].queues[0]
        assert (q0.none.sum_ns, q0.serialized.sum_ns) == (860, 700)
        assert (q0.none.span_ns, q0.serialized.span_ns, q0.removed_ns) == (760, 800, 40)
        assert (q0.none.busy_ns, q0.none.overlap_ns) == (760, 100)
        rp = pairs[(2, 0, "renderpass", "frame/shadows", 0)]
        assert (rp.none_ns, rp.serialized_ns, rp.delta_ns) == (450, 400, 50)
        copy = pairs[(2, 0, "buffer_transfer", "frame", 0)]
        assert (copy.none_ns, copy.serialized_ns, copy.delta_ns) == (110, 100, 10)
        blit = pairs[(0, 1, "image_transfer", "", 0)]
        assert (blit.in_none, blit.in_serialized, blit.delta_ns) == (True, True, None)
        assert len(pairs) == 20
        assert (totals.frames, totals.matched, totals.only_one) == (4, 16, 0)
        assert (totals.sum_none_ns, totals.sum_serialized_ns) == (4 * 1160, 4 * 1000)
        assert (totals.span_none_ns, totals.span_serialized_ns) == (4 * 1060, 4 * 1100)
        assert totals.overlap_none_ns == 400


def test_overlap_matches_by_identity_not_by_ids(tmp_path: Path) -> None:
    # The `none` run has one render pass more in frame 1 (and different tag and submit IDs).
    extra = Stream()
    extra.hello(process="scene", pid=43)
    extra.device(1, "Scene GPU", queues=2, clock="clock_monotonic")
    extra.labels(7, ["frame", "shadows"])
    extra.workload(70, "renderpass", width=8, height=8, draws=1, attachments=[])
    for f, passes in ((0, 1), (1, 2)):
        for k in range(passes):
            sid = extra.submit([(70, 7)], frame=f, queue=0, submit_id=100 + 10 * f + k)
            extra.timing(sid, 70, 10 + 1000 * f, 20 + 1000 * f + k, serialization="none")
    extra.goodbye()
    none = capture_from(tmp_path, extra, name="none.vkscope")
    serialized = capture_from(tmp_path, scene("queue", frames=2), name="queue.vkscope")
    with open_capture(none) as a, open_capture(serialized) as b:
        got = [
            (f.key.frame, p.type, p.occurrence, p.none_ns, p.serialized_ns)
            for f in compare(a, b, Selection.parse(types="renderpass"))
            for p in f.workloads
        ]
    # Frame 2 (not captured in the serialized run) is not in the `none` capture: left out.
    assert got == [(0, "renderpass", 0, 10, 400), (1, "renderpass", 0, 10, 400),
                   (1, "renderpass", 1, 11, None)]  # fmt: skip


def test_overlap_needs_one_capture_of_each_kind(queue_capture: Path, tmp_path: Path) -> None:
    untimed = Stream()
    untimed.hello()
    untimed.device(1)
    untimed.workload(1, "dispatch")
    untimed.submit([(1, 0)])
    untimed.goodbye()
    plain = capture_from(tmp_path, untimed)
    with open_capture(queue_capture) as q, open_capture(plain) as p:
        with pytest.raises(OverlapError, match="both captures were timed with serialization"):
            order_captures(q, q)
        with pytest.raises(OverlapError, match="no GPU timing in this capture"):
            order_captures(q, p)


intervals = st.lists(
    st.tuples(st.integers(0, 200), st.integers(0, 60)).map(lambda t: (t[0], t[0] + t[1])),
    max_size=30,
)


@given(intervals)
def test_span_of_agrees_with_counting_nanoseconds(spans: list[tuple[int, int]]) -> None:
    s = span_of(spans, len(spans) + 2)
    covered = {t for begin, end in spans for t in range(begin, end)}
    assert (s.workloads, s.timed, s.untimed) == (len(spans) + 2, len(spans), 2)
    assert s.sum_ns == sum(end - begin for begin, end in spans)
    assert s.busy_ns == len(covered)
    if spans:
        assert (s.begin_ns, s.end_ns) == (min(b for b, _ in spans), max(e for _, e in spans))
        assert s.busy_ns + s.idle_ns == s.span_ns
        idle = [t for t in range(s.begin_ns, s.end_ns) if t not in covered]  # type: ignore[arg-type]
        assert s.idle_ns == len(idle)
        assert s.largest_gap_ns <= s.idle_ns and (s.gaps == 0) == (s.idle_ns == 0)
    else:
        assert (s.span_ns, s.busy_ns, s.idle_ns, s.gaps) == (None, 0, 0, 0)
    assert s.overlap_ns == s.sum_ns - s.busy_ns >= 0
