"""The HTML timeline in headless Chromium: it renders offline, and every control does its job.

Needs Debian's `chromium` (/usr/bin/chromium) and the `playwright` package; Playwright drives the
system browser, as its own browser download is not available everywhere.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from support.browser import SCREENSHOTS, Loaded
from support.captures import capture_from
from support.html_scenes import BIG, timeline_stream

from harness.env import base_env, run, vkscope_cli
from vkscope.capture import WorkloadInstance, open_capture
from vkscope.capture.write.client import Stream
from vkscope.html import write_html


@pytest.fixture
def timed_page(tmp_path: Path, load: Any) -> tuple[Loaded, Path]:
    cap = capture_from(tmp_path, timeline_stream(), name="timed.vkscope")
    out = tmp_path / "report.html"
    write_html(cap, out)
    return load(out), cap


def instances(cap: Path) -> list[WorkloadInstance]:
    with open_capture(cap) as c:
        return list(c.workloads())


def gpu_time(w: WorkloadInstance) -> int | None:
    return w.gpu_ns


def fmt_ns(ns: float) -> str:
    """The page's way of writing a time (its fmtNs)."""
    a = abs(ns)
    for scale, unit in ((1e9, " s"), (1e6, " ms"), (1e3, " µs")):
        if a >= scale:
            v = ns / scale
            return f"{v:.{1 if abs(v) >= 100 else 2 if abs(v) >= 10 else 3}f}{unit}"
    return f"{round(ns)} ns"


def painted_pixels(loaded: Loaded, rgb: tuple[int, int, int]) -> int:
    """How many canvas pixels have exactly this colour."""
    return int(loaded.js("""(rgb) => {
        const c = document.getElementById('timeline');
        const d = c.getContext('2d').getImageData(0, 0, c.width, c.height).data;
        let n = 0;
        for (let k = 0; k < d.length; k += 4) {
            const same = d[k] === rgb[0] && d[k + 1] === rgb[1] && d[k + 2] === rgb[2];
            if (same && d[k + 3] === 255) n++;
        }
        return n;
    }""", list(rgb)))  # fmt: skip


def click_workload(loaded: Loaded, workload_id: int) -> None:
    loaded.js("(id) => vkscope.reveal(id)", workload_id)
    pos = loaded.js("(id) => vkscope.positionOf(id)", workload_id)
    assert pos is not None, f"workload {workload_id} is not on screen after reveal()"
    loaded.page.mouse.click(pos["x"], pos["y"])


def view_span(loaded: Loaded) -> float:
    view = loaded.js("vkscope.view()")
    return float(view["end"] - view["start"])


def keep_screenshot(loaded: Loaded, path: Path, copy_as: str) -> None:
    """A test artefact in the test's directory, and a copy under build/ to look at."""
    loaded.page.screenshot(path=str(path), full_page=True)
    assert path.stat().st_size > 10_000
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(path, SCREENSHOTS / copy_as)


RENDERPASS_RGB = (0x4E, 0x79, 0xA7)
DISPATCH_RGB = (0xF2, 0x8E, 0x2B)


def test_renders_offline_without_errors(timed_page: tuple[Loaded, Path], tmp_path: Path) -> None:
    loaded, cap = timed_page
    assert loaded.errors == []
    assert loaded.requests == []
    assert loaded.js("vkscope.count") == 33 and loaded.js("vkscope.timed") is True
    assert painted_pixels(loaded, RENDERPASS_RGB) > 500
    assert painted_pixels(loaded, DISPATCH_RGB) > 100
    page = loaded.page
    assert page.inner_text("#cap-file") == cap.name
    assert page.inner_text("#cap-status") == "complete"
    notes = page.inner_text("#notes")
    assert "1 of 33 workloads has no GPU time and is not on the timeline" in notes
    assert "recorded outside a captured frame" in notes
    assert "GPU clock clock_monotonic (±1.500 µs)" in page.inner_text("#cap-facts")
    legend = page.inner_text("#legend")
    for kind in ("renderpass", "dispatch", "trace_rays", "buffer_transfer", "image_transfer",
                 "acceleration_structure", "mesh_magic"):  # fmt: skip
        assert kind in legend
    # A workload selected and one hovered, so the picture shows the details and the tooltip.
    some = next(w for w in instances(cap) if w.type == "trace_rays" and w.frame == 0)
    click_workload(loaded, some.id)
    pos = loaded.js("(id) => vkscope.positionOf(id)", some.id - 1)
    loaded.page.mouse.move(pos["x"], pos["y"])
    assert loaded.page.is_visible("#tooltip")
    keep_screenshot(loaded, tmp_path / "timeline.png", "html-screenshot.png")
    assert loaded.errors == [] and loaded.requests == []


def test_click_shows_every_field_of_the_clicked_workload(
    timed_page: tuple[Loaded, Path],
) -> None:
    loaded, cap = timed_page
    for w in instances(cap):
        if w.type not in ("dispatch", "renderpass", "mesh_magic") or w.frame != 2:
            continue
        click_workload(loaded, w.id)
        assert loaded.js("vkscope.selected()") == w.id
        details = loaded.page.inner_text("#details")
        assert f"#{w.id}" in details and f"instance {w.submit_id}.{w.tag_id}" in details
        assert " / ".join(w.labels) in details
        shown = loaded.page.inner_text("#details-metadata")
        for key in w.metadata:
            assert key in shown, f"{key} of workload {w.id} is not shown"
        raw = json.loads(loaded.page.text_content("#details pre.raw") or "")
        assert raw == {k: (str(v) if v == BIG else v) for k, v in w.metadata.items()}
        if w.type == "mesh_magic":
            assert str(BIG) in shown  # every digit, not a rounded double
        if w.type == "renderpass":
            assert "R8G8B8A8_UNORM" in shown or "D32_SFLOAT" in shown
        gpu = gpu_time(w)
        assert (fmt_ns(gpu) if gpu is not None else "recorded outside a captured frame") in details
        assert f"timing\t{w.timing}" in details
        assert f"serialization\t{w.serialization}" in details
        assert "completed (CPU)\t" in details
    # Clicking where nothing is drawn clears the selection.
    box = loaded.page.locator("#timeline").bounding_box()
    loaded.page.mouse.click(box["x"] + 155, box["y"] + box["height"] - 3)
    assert loaded.js("vkscope.selected()") is None
    assert loaded.errors == []


def test_table_row_selects_and_reveals(timed_page: tuple[Loaded, Path]) -> None:
    loaded, cap = timed_page
    work = instances(cap)
    index, target = next((k, w) for k, w in enumerate(work)
                         if w.type == "image_transfer" and w.frame == 2)  # fmt: skip
    row = f"#wl-body tr[data-i='{index}']"  # rows name workloads by submission order
    # The table renders only the rows in sight, again after each scroll: bring the row into
    # view and let the page draw twice before clicking, so the click finds the row it aimed at.
    loaded.page.locator(row).scroll_into_view_if_needed()
    loaded.page.evaluate(
        "() => new Promise(r => requestAnimationFrame(() => requestAnimationFrame(r)))"
    )
    loaded.page.click(row)
    assert loaded.js("vkscope.selected()") == target.id
    assert loaded.js("(id) => vkscope.positionOf(id)", target.id) is not None
    assert "sel" in (loaded.page.get_attribute(row, "class") or "").split()


def test_table_sorts_by_each_column(timed_page: tuple[Loaded, Path]) -> None:
    loaded, cap = timed_page
    work = instances(cap)
    page = loaded.page
    assert loaded.js("vkscope.tableIds()") == [w.id for w in work]
    timed = sorted((w for w in work if gpu_time(w) is not None), key=lambda w: (gpu_time(w), w.id))
    untimed = [w.id for w in work if gpu_time(w) is None]
    page.click("#wl-head th[data-col='gpu']")
    assert loaded.js("vkscope.tableIds()") == [w.id for w in timed] + untimed
    assert page.get_attribute("#wl-head th[data-col='gpu']", "aria-sort") == "ascending"
    first = page.inner_text("#wl-body tr.row >> nth=0")
    assert fmt_ns(gpu_time(timed[0]) or 0) in first
    page.click("#wl-head th[data-col='gpu']")
    longest_first = sorted(timed, key=lambda w: (-(gpu_time(w) or 0), w.id))
    assert loaded.js("vkscope.tableIds()") == [w.id for w in longest_first] + untimed
    assert page.get_attribute("#wl-head th[data-col='gpu']", "aria-sort") == "descending"
    page.click("#wl-head th[data-col='type']")
    by_type = sorted(work, key=lambda w: (w.type or "unknown", w.id))
    assert loaded.js("vkscope.tableIds()") == [w.id for w in by_type]
    page.click("#wl-head th[data-col='labels']")
    page.click("#wl-head th[data-col='labels']")
    by_labels = sorted(work, key=lambda w: w.label_path, reverse=True)
    ids = loaded.js("vkscope.tableIds()")
    assert [w.label_path for w in by_labels] == [work[i - 1].label_path for i in ids]
    assert loaded.errors == []


def test_frame_picker_switches_frames(timed_page: tuple[Loaded, Path]) -> None:
    loaded, cap = timed_page
    work = instances(cap)
    page = loaded.page
    names = [f["name"] for f in loaded.js("vkscope.frames()")]
    assert names == ["frame 0 (warm-up)", "frame 1", "frame 2"]
    whole = view_span(loaded)
    page.select_option("#frame-pick", "1")
    assert loaded.js("vkscope.frame()") == 1
    assert loaded.js("vkscope.tableIds()") == [w.id for w in work if w.frame == 1]
    assert "frame 1" in page.inner_text("#tree-note")
    assert view_span(loaded) < whole / 2  # zoomed to the frame
    frame_total = sum(gpu_time(w) or 0 for w in work if w.frame == 1)
    assert loaded.js("vkscope.labelTree()")[0]["inclusive"] == frame_total
    page.click("#frame-next")
    assert loaded.js("vkscope.frame()") == 2
    assert loaded.js("vkscope.tableIds()") == [w.id for w in work if w.frame == 2]
    # Only frame 2's workloads can be found on the timeline now.
    other = next(w for w in work if w.frame == 0)
    assert loaded.js("(id) => vkscope.positionOf(id)", other.id) is None
    page.click("#frame-prev")
    page.click("#frame-prev")
    page.click("#frame-prev")
    assert loaded.js("vkscope.frame()") == -1
    assert len(loaded.js("vkscope.tableIds()")) == len(work)
    assert loaded.errors == []


def test_label_tree_shows_self_and_inclusive_time(timed_page: tuple[Loaded, Path]) -> None:
    loaded, cap = timed_page
    work = instances(cap)
    page = loaded.page

    def inclusive(prefix: tuple[str, ...]) -> int:
        return sum(gpu_time(w) or 0 for w in work if w.labels[: len(prefix)] == prefix)

    def self_time(path: tuple[str, ...]) -> int:
        return sum(gpu_time(w) or 0 for w in work if w.labels == path)

    tree = {n["path"]: n for n in loaded.js("vkscope.labelTree()")}
    paths = {w.labels[:k] for w in work for k in range(1, len(w.labels) + 1)}
    for path in paths:
        node = tree["/".join(path)]
        assert node["inclusive"] == inclusive(path), path
        assert node["self"] == self_time(path), path
    assert tree[""]["inclusive"] == sum(gpu_time(w) or 0 for w in work)
    assert tree["frame/shadows"]["self"] > 0  # its indirect dispatch sits right in it
    assert tree["frame/shadows"]["inclusive"] > tree["frame/shadows"]["self"]

    def row_text(path: str) -> str:
        node = list(tree).index(path)
        return str(page.inner_text(f"#tree-body tr[data-node='{node}']"))

    shadows = row_text("frame/shadows")
    assert fmt_ns(inclusive(("frame", "shadows"))) in shadows
    assert fmt_ns(self_time(("frame", "shadows"))) in shadows
    assert page.locator(f"#tree-body tr[data-node='{list(tree).index('frame/shadows/cascade 0')}']"
                        ).count() == 0  # fmt: skip
    page.click(f"#tree-body [data-toggle='{list(tree).index('frame/shadows')}']")
    cascade = row_text("frame/shadows/cascade 0")
    assert fmt_ns(inclusive(("frame", "shadows", "cascade 0"))) in cascade
    # Picking a label narrows the table to its subtree.
    page.click(f"#tree-body [data-pick='{list(tree).index('frame/shadows')}']")
    under = [w.id for w in work if w.labels[:2] == ("frame", "shadows")]
    assert loaded.js("vkscope.tableIds()") == under
    assert "frame/shadows" in page.inner_text("#table-filter")
    page.click("#clear-label")
    assert len(loaded.js("vkscope.tableIds()")) == len(work)
    assert loaded.errors == []


def test_zoom_and_pan(timed_page: tuple[Loaded, Path]) -> None:
    loaded, _ = timed_page
    page = loaded.page
    box = page.locator("#timeline").bounding_box()
    x, y = box["x"] + box["width"] * 0.6, box["y"] + 60
    start = view_span(loaded)
    page.mouse.move(x, y)
    page.mouse.wheel(0, -400)
    page.wait_for_function(f"vkscope.view().end - vkscope.view().start < {start * 0.9}")
    zoomed = loaded.js("vkscope.view()")
    # Dragging to the left moves the view to later times.
    page.mouse.move(x, y)
    page.mouse.down()
    page.mouse.move(x - 200, y, steps=5)
    page.mouse.up()
    dragged = loaded.js("vkscope.view()")
    assert dragged["start"] > zoomed["start"]
    assert dragged["end"] - dragged["start"] == pytest.approx(zoomed["end"] - zoomed["start"])
    assert loaded.js("vkscope.selected()") is None  # a drag is not a click
    page.click("#zoom-out")
    assert view_span(loaded) > dragged["end"] - dragged["start"]
    page.click("#zoom-in")
    page.click("#zoom-in")
    narrow = view_span(loaded)
    page.keyboard.down("Control")  # a trackpad pinch arrives as ctrl+wheel
    page.mouse.move(x, y)
    page.mouse.wheel(0, 100)
    page.keyboard.up("Control")
    page.wait_for_function(f"vkscope.view().end - vkscope.view().start > {narrow * 1.5}")
    page.click("#zoom-fit")
    assert view_span(loaded) == pytest.approx(start)
    assert loaded.errors == []


def test_untimed_capture_is_laid_out_in_submission_order(tmp_path: Path, load: Any) -> None:
    cap = capture_from(tmp_path, timeline_stream(timed=False), name="untimed.vkscope")
    out = tmp_path / "report.html"
    write_html(cap, out)
    loaded = load(out)
    assert loaded.errors == [] and loaded.requests == []
    assert loaded.js("vkscope.timed") is False
    assert "No GPU times in this capture" in loaded.page.inner_text("#notes")
    assert "submission order" in loaded.page.inner_text("#notes")
    # Later submissions sit further right, whatever their queue.
    work = instances(cap)
    xs = [loaded.js("(id) => vkscope.positionOf(id)", w.id)["x"] for w in work[:11]]
    assert xs == sorted(xs) and len(set(xs)) == len(xs)
    click_workload(loaded, work[3].id)
    assert loaded.js("vkscope.selected()") == work[3].id
    assert "timing was off" in loaded.page.inner_text("#details")
    assert painted_pixels(loaded, RENDERPASS_RGB) > 500
    keep_screenshot(loaded, tmp_path / "untimed.png", "html-screenshot-untimed.png")


@pytest.mark.vulkan
def test_capture_from_the_real_layer(workload: Path, tmp_path: Path, load: Any) -> None:
    cap = tmp_path / "compute.vkscope"
    res = run([vkscope_cli(), "run", "-o", cap, "--", workload, "--scenario", "compute"],
              base_env(), cwd=tmp_path)  # fmt: skip
    assert res.returncode == 0, res.stderr
    out = tmp_path / "report.html"
    write_html(cap, out)
    loaded = load(out)
    assert loaded.errors == [] and loaded.requests == []
    work = instances(cap)
    dispatches = [w for w in work if w.type == "dispatch"]
    assert len(dispatches) == 5
    assert loaded.js("vkscope.count") == len(work)
    timed = any(gpu_time(w) is not None for w in work)
    assert loaded.js("vkscope.timed") is timed
    assert ("No GPU times in this capture" in loaded.page.inner_text("#notes")) is not timed
    assert painted_pixels(loaded, DISPATCH_RGB) > 50
    target = dispatches[-1]
    click_workload(loaded, target.id)
    assert loaded.js("vkscope.selected()") == target.id
    shown = loaded.page.inner_text("#details-metadata")
    for key in target.metadata:
        assert key in shown
    groups = "\N{MULTIPLICATION SIGN}".join(str(n) for n in target.metadata["groups"])
    assert f"{groups} groups" in loaded.page.inner_text("#details")
    keep_screenshot(loaded, tmp_path / "layer.png", "html-screenshot-layer.png")


def test_capture_without_workloads(tmp_path: Path, load: Any) -> None:
    s = Stream()
    s.hello()
    s.device(1)
    s.goodbye()
    out = tmp_path / "report.html"
    write_html(capture_from(tmp_path, s, name="empty.vkscope"), out)
    loaded = load(out)
    assert loaded.errors == [] and loaded.requests == []
    assert "This capture holds no workloads" in loaded.page.inner_text("#notes")
    assert loaded.js("vkscope.tableIds()") == []
    loaded.page.click("#zoom-in")
    loaded.page.click("#frame-next")
    assert loaded.errors == []


def test_counters_column_and_per_frame_chart(tmp_path: Path, load: Any) -> None:
    from vkscope import protocol as m

    # The same stream without counters first: which instances there are.
    work = instances(capture_from(tmp_path, timeline_stream(), name="plain.vkscope"))
    s = timeline_stream()
    goodbye = s.frames.pop()  # the counters go before it
    names = ["fragment_shader_invocations", "compute_shader_invocations"]
    s.add(m.COUNTERS, 1, {"family": 0, "source": "pipeline_statistics",
                          "counters": [{"name": n} for n in names]})  # fmt: skip
    # Each instance gets values of its own, except one that says why it has none.
    values: dict[int, int] = {}
    for k, w in enumerate(work):
        if k == 3:
            s.annex(w.submit_id, w.tag_id, counters=None, counters_reason="split_render_pass")
            continue
        values[w.id] = 100 + 7 * k
        s.annex(w.submit_id, w.tag_id, counters={names[0]: values[w.id], names[1]: 1})
    s.frames.append(goodbye)
    cap = capture_from(tmp_path, s, name="counted.vkscope")
    out = tmp_path / "counted.html"
    write_html(cap, out)
    loaded = load(out)
    assert loaded.errors == []
    assert loaded.js("vkscope.counters()") == names
    page = loaded.page
    assert page.inner_text("#wl-head th[data-col='counter']").startswith(names[0])
    page.click("#wl-head th[data-col='counter']")
    ordered = sorted(values, key=lambda i: (values[i], i))
    no_value = [w.id for w in work if w.id not in values]
    assert loaded.js("vkscope.tableIds()") == ordered + no_value
    assert "split_render_pass" in page.inner_text("#wl-body")
    # The chart: per frame, the sum of the chosen counter.
    per_frame: dict[int | None, int] = {}
    for w in work:
        if w.id in values:
            per_frame[w.frame] = per_frame.get(w.frame, 0) + values[w.id]
    chart = loaded.js("vkscope.counterChart()")
    assert {c["frame"]: c["value"] for c in chart} == per_frame
    page.select_option("#counter-pick", names[1])
    chart = loaded.js("vkscope.counterChart()")
    counted = {w.frame for w in work if w.id in values}
    assert {c["frame"]: c["value"] for c in chart} == {
        f: sum(1 for w in work if w.frame == f and w.id in values) for f in counted
    }
    assert page.inner_text("#wl-head th[data-col='counter']").startswith(names[1])
    page.click("#counter-chart .cbar >> nth=1")
    assert loaded.js("vkscope.frame()") == 1
    assert loaded.errors == []


def test_khr_counters_say_which_passes_a_workload_lacks(
    tmp_path: Path, load: Any, layer_dir: Path, workload: Path
) -> None:
    # Two passes over frames 2-4 (on the performance query test fixture): frame 4's cycle is
    # cut short, so its dispatches lack the second pass's counter and the page says why.
    env = base_env()
    env["VK_ADD_LAYER_PATH"] = str(layer_dir / "testing")
    env["VK_INSTANCE_LAYERS"] = "VK_LAYER_VKSCOPE_test_performance_query"
    res = run(
        [vkscope_cli(), "run", "--no-report", "--no-trace", "--no-html", "-o", "app.vkscope",
         "--counters", "khr:compute_invocations,elapsed_ns", "--frames", "2-4",
         "-s", "frame_submits=1", "--", workload, "--scenario", "compute", "--frames", "5"],
        env, cwd=tmp_path,
    )  # fmt: skip
    assert res.returncode == 0, res.stdout + res.stderr
    cap = tmp_path / "app.vkscope"
    lacking = [w for w in instances(cap) if w.type == "dispatch" and w.frame == 4]
    assert lacking
    out = tmp_path / "khr.html"
    write_html(cap, out)
    loaded = load(out)
    assert loaded.errors == []
    click_workload(loaded, lacking[0].id)
    details = loaded.page.inner_text("#details")
    assert "counters missing" in details
    assert "elapsed_ns: frame 5 (pass 1) was not captured" in details
    loaded.page.select_option("#counter-pick", "elapsed_ns")
    assert "frame 5 (pass 1) was not captured" in loaded.page.inner_text("#wl-body")
    assert loaded.errors == []


def test_details_give_the_workloads_distribution_over_frames(
    timed_page: tuple[Loaded, Path],
) -> None:
    loaded, cap = timed_page
    shadows = [w for w in instances(cap) if w.label_path == "frame/shadows"]
    steady = sorted(w.gpu_ns for w in shadows if w.frame != 0 and w.gpu_ns is not None)
    first = next(w for w in shadows if w.frame == 0)
    click_workload(loaded, first.id)
    details = loaded.page.inner_text("#details")
    assert f"min {fmt_ns(steady[0])}" in details and f"max {fmt_ns(steady[-1])}" in details
    assert "this frame is a warm-up frame (first frame), left out" in details
    assert loaded.js("(id) => vkscope.identityOf(id).frames", first.id) == 2
    assert "(warm-up)" in loaded.js("vkscope.frames()[0].name")
    assert "Warm-up frames (1 frame left out (0: first frame))" in loaded.page.inner_text("#notes")
    assert loaded.errors == []


def test_times_near_the_timer_s_floor_are_marked(tmp_path: Path, load: Any) -> None:
    from support.floor_scenes import TINY_NS, floor_stream

    cap = capture_from(tmp_path, floor_stream(frames=3), name="floor.vkscope")
    out = tmp_path / "floor.html"
    write_html(cap, out)
    loaded = load(out)
    work = instances(cap)
    tiny = next(w for w in work if w.gpu_ns == TINY_NS)
    big = next(w for w in work if w.gpu_ns != TINY_NS)
    assert loaded.js("(id) => vkscope.nearFloor(id)", tiny.id) is True
    assert loaded.js("(id) => vkscope.nearFloor(id)", big.id) is False
    notes = loaded.page.inner_text("#notes")
    assert "The timer's floor" in notes and "3 workloads within 4\u00d7 it are marked near" in notes
    click_workload(loaded, tiny.id)
    details = loaded.page.inner_text("#details")
    assert "near the timer's floor" in details and "its own cost: down to 0 ns" in details
    click_workload(loaded, big.id)
    assert "near the timer's floor" not in loaded.page.inner_text("#details")
    assert loaded.errors == []
