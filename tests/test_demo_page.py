"""The demo's HTML timeline in headless Chromium: its frames, passes and GPU times are on the page,
and the picture the README shows (docs/demo-timeline.png) is taken from it.

The screenshot goes to build/demo-timeline.png on every run; VKSCOPE_UPDATE_SCREENSHOTS=1
also writes it over docs/demo-timeline.png, the README's copy, which must stay small.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest
from support.browser import REPO, SCREENSHOTS, Loaded
from support.demo import FRAMES, PASSES

from harness.env import base_env, run, vkscope_cli
from vkscope.capture import open_capture

pytestmark = pytest.mark.vulkan

README_PICTURE = REPO / "docs" / "demo-timeline.png"
MAX_PICTURE_BYTES = 150_000


@pytest.fixture(scope="module")
def demo_page(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("demo-page")
    res = run([vkscope_cli(), "demo", "--frames", str(FRAMES)], base_env(), cwd=folder)
    assert res.returncode == 0, res.stdout + res.stderr
    return folder / "vkscope-demo.html"


def test_the_demo_page_shows_frames_of_labelled_timed_passes(
    demo_page: Path, request: pytest.FixtureRequest
) -> None:
    loaded: Loaded = request.getfixturevalue("load")(demo_page)
    assert loaded.errors == [] and loaded.requests == []
    assert loaded.js("vkscope.timed") is True
    facts = loaded.page.inner_text("#cap-facts")
    assert f"{FRAMES} frames with work, {FRAMES} ended" in facts
    assert "no GPU time" not in loaded.page.inner_text("#notes")
    labels = loaded.page.inner_text("body")
    for name in PASSES:
        assert name in labels, name
    # One frame after the first (whose shaders the driver compiles as it goes): every pass of a
    # steady frame on the timeline, with the selected GBuffer pass in the details.
    with open_capture(demo_page.with_suffix(".vkscope")) as capture:
        gbuffer = next(
            w.id for w in capture.workloads() if w.label_path == "Frame/GBuffer" and w.frame == 2
        )
    loaded.js("vkscope.setFrame(2)")
    loaded.js("(id) => vkscope.select(id)", gbuffer)
    loaded.page.wait_for_timeout(100)
    picture = SCREENSHOTS / "demo-timeline.png"
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    loaded.page.screenshot(path=str(picture), clip={"x": 0, "y": 0, "width": 1400, "height": 430})
    assert 10_000 < picture.stat().st_size <= MAX_PICTURE_BYTES
    if os.environ.get("VKSCOPE_UPDATE_SCREENSHOTS") == "1":
        shutil.copyfile(picture, README_PICTURE)


def test_the_readme_picture_is_small_and_shown() -> None:
    assert README_PICTURE.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert README_PICTURE.stat().st_size <= MAX_PICTURE_BYTES
    first_screen = "\n".join((REPO / "README.md").read_text().splitlines()[:40])
    assert "docs/demo-timeline.png" in first_screen
