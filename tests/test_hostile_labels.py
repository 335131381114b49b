"""Debug labels are the application's data (src/vkscope/shown_text.py): a C application
(support/apps/fault_app.c, `labels` mode) records its fills inside labels holding terminal escape
sequences, C1 and bidirectional controls, bytes that are not UTF-8, HTML that runs script, markdown
syntax and 100 KB, under `vkscope run` on lavapipe. Then:

- terminal tables (report, query, diff) carry no control character: each is shown escaped, and a
  long label is shortened, so that 30 workloads make a report of kilobytes, not megabytes;
- Markdown, rendered as HTML with raw HTML allowed and loaded in headless Chromium, runs nothing
  and shows each label's characters as text;
- CSV carries every label whole, its controls escaped;
- JSON and the capture keep every label exactly.
"""

from __future__ import annotations

import csv
import io
import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from markdown_it import MarkdownIt

from harness.env import base_env, run, vkscope_cli
from vkscope.capture import open_capture
from vkscope.shown_text import terminal_text

pytestmark = pytest.mark.vulkan

FRAMES = 30
LONG = "A" * 100_000
# Outermost first. Each frame's one fill is recorded inside all of them.
LABELS: list[bytes] = [
    b"Frame\x1b]0;pwned\x07",  # OSC: would retitle the terminal
    "\x1b[2J\u009b31m\u202eevil\r\x08\x7f".encode(),  # clear screen, C1 CSI, right-to-left
    b"<script>window.pwned=1</script><img src=x onerror=window.pwned=2>",
    b"*b* _e_ [a](javascript:window.pwned=3)|`c`",
    b"bad\xff\xfeutf8",  # not UTF-8: the layer sends bytes, the host replaces them
    LONG.encode(),
]
# C0 controls but the line feed, DEL, C1 controls, bidirectional controls.
RAW_CONTROL = re.compile(
    "[\x00-\x09\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]"
)


def captured(fault_app: Path, cap: Path, timing: str) -> Path:
    cmd: list[Any] = [vkscope_cli(), "run", "-o", cap, "--timing", timing, "--no-report",
                      "--no-trace", "--no-html", "-s", "frame_submits=1", "--", fault_app,
                      "labels", str(FRAMES)]  # fmt: skip
    res = subprocess.run([*map(str, cmd), *LABELS], env=base_env(), capture_output=True,
                         text=True, timeout=300)  # fmt: skip
    assert res.returncode == 0, res.stderr
    return cap


@pytest.fixture(scope="module")
def cap(fault_app: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    return captured(fault_app, tmp_path_factory.mktemp("hostile") / "labels.vkscope", "queue")


@pytest.fixture(scope="module")
def none(fault_app: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The same run timed without serialization, for `vkscope overlap`."""
    return captured(fault_app, tmp_path_factory.mktemp("hostile") / "none.vkscope", "none")


def path_of(depth: int = len(LABELS)) -> str:
    """The label path as the capture holds it: each label decoded, bad bytes replaced."""
    return "/".join(label.decode("utf-8", "replace") for label in LABELS[:depth])


def vkscope(*args: str | Path, columns: int = 1000) -> str:
    env = base_env() | {"COLUMNS": str(columns)}
    res = run([sys.executable, "-m", "vkscope", *args], env)
    assert res.returncode == 0, res.stderr
    assert "Traceback" not in res.stderr
    return res.stdout


def test_json_and_the_capture_keep_every_label_exactly(cap: Path) -> None:
    report = json.loads(vkscope("report", cap, "--format", "json"))
    assert [w["label_path"] for w in report["workloads"]] == [path_of()] * FRAMES
    with open_capture(cap) as capture:
        assert {w.label_path for w in capture.workloads()} == {path_of()}
    rows = json.loads(vkscope("query", cap, "SELECT label_path FROM instances_view", "--format",
                              "json"))  # fmt: skip
    assert [r["label_path"] for r in rows] == [path_of()] * FRAMES


@pytest.mark.parametrize(
    "args",
    [
        ["report", "{cap}"],
        ["report", "{cap}", "--format", "markdown"],
        ["report", "{cap}", "--format", "csv"],
        ["report", "{cap}", "--format", "csv", "--table", "labels"],
        ["report", "{cap}", "--format", "csv", "--table", "costliest"],
        ["query", "{cap}", "SELECT * FROM instances_view"],
        ["query", "{cap}", "SELECT * FROM instances_view", "--format", "csv"],
        ["diff", "{cap}", "{cap}"],
        ["overlap", "{none}", "{cap}"],
        ["overlap", "{none}", "{cap}", "--format", "markdown"],
        ["overlap", "{none}", "{cap}", "--format", "csv", "--table", "workloads"],
    ],
    ids=["report", "markdown", "csv", "csv-labels", "csv-costliest", "query", "query-csv", "diff",
         "overlap", "overlap-markdown", "overlap-csv"],
)  # fmt: skip
def test_no_output_for_people_carries_a_control_character(
    cap: Path, none: Path, args: list[str]
) -> None:
    out = vkscope(*(a.format(cap=cap, none=none) for a in args))
    found = RAW_CONTROL.search(out)
    assert found is None, f"{found.group()!r} at {found.start()}"  # type: ignore[union-attr]
    assert "pwned" in out  # the labels are there, shown
    if "csv" not in args and "markdown" not in args:  # markdown: rendered below
        assert "\\x1b]0;pwned\\x07" in out  # the OSC shown as its escape
        assert "\\x1b[2J\\x9b31m\\u202eevil\\x0d\\x08\\x7f" in out


def test_terminal_tables_shorten_a_long_label(cap: Path) -> None:
    out = vkscope("report", cap, "--all", columns=200)  # --all: each workload listed too
    assert LONG[:200] not in out  # never whole; its start and end around a marker
    assert f"[{len(path_of()) - 200:,} characters cut]" in out
    # Without the label, a row of this report is about 200 characters wide (a fold of its
    # label cell over a few lines); 30 workloads in several tables, well under 1,000 each.
    assert len(out) < FRAMES * 3_000, len(out)
    assert len(vkscope("report", cap, "--format", "markdown", "--all")) < FRAMES * 3_000


def test_csv_carries_each_label_whole_its_controls_escaped(cap: Path) -> None:
    rows = list(csv.DictReader(io.StringIO(vkscope("report", cap, "--format", "csv"))))
    assert len(rows) == FRAMES
    escaped = (
        path_of()
        .replace("\x1b", "\\x1b")
        .replace("\x07", "\\x07")
        .replace("\x9b", "\\x9b")
        .replace("\u202e", "\\u202e")
        .replace("\r", "\\x0d")
        .replace("\x08", "\\x08")
        .replace("\x7f", "\\x7f")
    )
    assert {r["label_path"] for r in rows} == {escaped}
    assert LONG in escaped


def rendered(browser: Any, markdown: str) -> Any:
    """The markdown as a renderer that lets raw HTML through makes it, in a Chromium page."""
    html = MarkdownIt("commonmark", {"html": True}).enable(["table", "strikethrough"])
    page = browser.new_page()
    page.set_content(html.render(markdown))
    page.wait_for_timeout(200)  # an img's onerror fires after the load
    return page


def test_the_test_would_see_a_label_run(browser: Any) -> None:
    """The check below can fail: the same labels, not escaped, run their script."""
    page = rendered(browser, "| labels |\n| --- |\n| " + LABELS[2].decode() + " |\n")
    assert page.evaluate("window.pwned") in (1, 2)
    page.close()


def test_markdown_runs_nothing_and_shows_the_labels_as_text(cap: Path, browser: Any) -> None:
    page = rendered(browser, vkscope("report", cap, "--format", "markdown", "--all"))
    assert page.evaluate("window.pwned") is None
    assert page.evaluate("document.querySelectorAll('script, img, a').length") == 0
    assert page.evaluate("document.querySelectorAll('td *').length") == 0  # text alone
    cells: list[str] = page.evaluate(
        "[...document.querySelectorAll('td')].map(td => td.textContent)"
    )
    # Each workload's label cell shows what a terminal shows of its path, character for
    # character: the markdown escaping of it reads back as the text itself.
    # With --all: the workloads (30), the costliest (10), the one identity's distribution (1)
    # and the deepest label subtree (1); the subtrees above it show their own paths.
    assert cells.count(terminal_text(path_of())) == FRAMES + 10 + 1 + 1
    subtrees = {terminal_text(path_of(depth)) for depth in range(1, len(LABELS))}
    assert subtrees <= set(cells)
    page.close()
