"""The sentence on a capture's frames that `vkscope run`, `report` and the HTML header share."""

from __future__ import annotations

import pytest

from vkscope.capture_summary import FrameCounts


@pytest.mark.parametrize(
    ("with_work", "ended", "sentence", "hinted"),
    [
        (5, 5, "5 frames with work, 5 ended", False),
        (1, 0, "1 frame with work, none ended", True),
        (0, 0, "0 frames with work, none ended", False),
        (1, 100, "1 frame with work, 100 ended", False),  # frames selected: the rest sent no work
        (1_200, 1_199, "1,200 frames with work, 1,199 ended", False),
    ],
)
def test_sentence_and_hint(with_work: int, ended: int, sentence: str, hinted: bool) -> None:
    counts = FrameCounts(with_work, ended)
    assert counts.sentence() == sentence
    hint = counts.hint()
    assert (hint is not None) == hinted
    if hint:
        assert "-s frame_submits=N" in hint
