"""`vkscope demo`: frames of a game-like workload, labelled and timed, captured quietly, with the
outputs and the next commands said at the end."""

from __future__ import annotations

import re
from collections import Counter
from pathlib import Path

import pytest
from support.demo import FRAMES, PASS_TYPES

from harness.env import base_env, run, vkscope_cli
from vkscope.capture import open_capture
from vkscope.capture_summary import FrameCounts

pytestmark = pytest.mark.vulkan

LOADER_NOTE = re.compile(r"note: loader|Loader Message|VK_INSTANCE_LAYERS")


@pytest.fixture(scope="module")
def demo(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str, str]:
    folder = tmp_path_factory.mktemp("demo")
    res = run([vkscope_cli(), "demo", "--frames", str(FRAMES)], base_env(), cwd=folder)
    assert res.returncode == 0, res.stdout + res.stderr
    return folder, res.stdout, res.stderr


def test_the_loader_says_nothing(demo: tuple[Path, str, str]) -> None:
    _, out, err = demo
    assert not LOADER_NOTE.search(out), out
    assert not LOADER_NOTE.search(err), err


def test_every_frame_ended_and_holds_every_labelled_pass(demo: tuple[Path, str, str]) -> None:
    folder, _, _ = demo
    with open_capture(folder / "vkscope-demo.vkscope") as capture:
        assert capture.meta.status == "complete"
        assert FrameCounts.of(capture) == FrameCounts(FRAMES, FRAMES)
        assert {f.reason for f in capture.frames()} <= {"submit_count", "frame_boundary"}
        instances = list(capture.workloads())
    by_frame: dict[int | None, list[str]] = {}
    for w in instances:
        by_frame.setdefault(w.frame, []).append(w.label_path)
    assert sorted(by_frame) == list(range(FRAMES))
    for frame, paths in by_frame.items():
        # Each frame the layer counted holds one frame's passes: the two agree on where frames
        # end. The frame's label has no number, so each pass is one identity across frames.
        assert {p.split("/")[0] for p in paths} == {"Frame"}, paths
        got = Counter(p.split("/", 1)[1] for p in paths)
        assert got == Counter({name: len(types) for name, types in PASS_TYPES.items()})
        for name, types in PASS_TYPES.items():
            path = f"Frame/{name}"
            kinds = sorted(
                w.type or "?" for w in instances if w.frame == frame and w.label_path == path
            )
            assert kinds == sorted(types), name


def test_every_workload_is_timed(demo: tuple[Path, str, str]) -> None:
    folder, _, _ = demo
    with open_capture(folder / "vkscope-demo.vkscope") as capture:
        instances = list(capture.workloads())
    assert len(instances) == FRAMES * sum(map(len, PASS_TYPES.values()))
    untimed = [(w.label_path, w.timing_reason) for w in instances if w.gpu_ns is None]
    assert not untimed
    assert {w.serialization for w in instances} == {"queue"}
    # The split render pass is one workload, its draws counted over both command buffers (the
    # game draws 4 rectangles per pass for each of the workload program's default 8 --draws).
    gbuffers = [w for w in instances if w.label_path.endswith("/GBuffer")]
    assert all(w.metadata.get("draws") == 4 * 8 for w in gbuffers), gbuffers[0].metadata


def test_outputs_and_next_commands_close_the_output(demo: tuple[Path, str, str]) -> None:
    folder, out, _ = demo
    for suffix in (".vkscope", ".pftrace", ".html"):
        path = folder / f"vkscope-demo{suffix}"
        assert path.stat().st_size > 0
        assert str(path.resolve()) in out
    tail = out.rstrip().splitlines()[-8:]
    assert any("html vkscope-demo.vkscope" in line for line in tail), tail
    assert any("run -- ./your_app" in line for line in tail), tail
    assert "5 frames with work, 5 ended" in out  # the report's summary, as run and page say it


def test_the_sentence_on_frames_is_the_same_everywhere(demo: tuple[Path, str, str]) -> None:
    folder, out, err = demo
    sentence = f"{FRAMES} frames with work, {FRAMES} ended"
    assert f"(complete): {sentence};" in out + err  # vkscope run's line
    report = run([vkscope_cli(), "report", "vkscope-demo.vkscope"], base_env(), cwd=folder)
    assert re.search(rf"frames\s+{sentence}", report.stdout), report.stdout
    page = (folder / "vkscope-demo.html").read_text()
    assert f'"frames_text":"{sentence}"' in page


def test_a_run_that_never_ends_a_frame_says_how_to(tmp_path: Path, workload: Path) -> None:
    res = run(
        [
            vkscope_cli(),
            "run",
            "--no-trace",
            "-o",
            "c.vkscope",
            "--",
            workload,
            "--scenario",
            "compute",
        ],
        base_env(),
        cwd=tmp_path,
    )
    assert res.returncode == 0, res.stderr
    said = res.stdout + res.stderr
    assert "1 frame with work, none ended" in said
    assert "-s frame_submits=N" in said
    page = (tmp_path / "c.html").read_text()
    assert '"frames_text":"1 frame with work, none ended","frames_hint":"nothing ended' in page
    assert not LOADER_NOTE.search(said), said


def test_the_readme_excerpt_is_what_the_demo_prints(demo: tuple[Path, str, str]) -> None:
    readme = (Path(__file__).resolve().parents[1] / "README.md").read_text()
    excerpt = readme.split("```text\n", 1)[1].split("```", 1)[0]
    printed = {" ".join(line.replace("│", " ").split()) for line in demo[1].splitlines()}
    for line in excerpt.splitlines():
        assert " ".join(line.split()) in printed, line
