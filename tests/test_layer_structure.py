"""The layer's folders depend on each other one way: core <- timeline <- instruments <- the top.

Reads every `#include "..."` under layer/src and checks the folders they connect: no cycle
between folders, core includes only core, the timeline only core and itself, an instrument only
core, the timeline and its own folder (never another instrument's), and nothing includes the
top-level files (the loader's entry points and the wiring of features and instruments) but
themselves.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from pathlib import Path

import pytest
from support.structure import find_cycle

SRC = Path(__file__).resolve().parent.parent / "layer" / "src"
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.MULTILINE)
TOP = "."


def folder_of(path: Path, root: Path) -> str:
    parent = path.parent.relative_to(root).as_posix()
    return parent if parent != "." else TOP


def sources(root: Path) -> list[Path]:
    return sorted(p for p in root.rglob("*") if p.suffix in (".cpp", ".hpp"))


def folder_edges(root: Path) -> dict[tuple[str, str], list[str]]:
    """(from folder, to folder) -> the includes that make the edge, for includes of layer/src.

    Includes that do not name a file of layer/src (generated headers, the Vulkan headers) are
    not the layer's folders and are left out.
    """
    edges: dict[tuple[str, str], list[str]] = {}
    for path in sources(root):
        for name in INCLUDE.findall(path.read_text()):
            target = root / name
            if not target.is_file():
                continue
            edge = (folder_of(path, root), folder_of(target, root))
            if edge[0] != edge[1]:
                edges.setdefault(edge, []).append(f"{path.relative_to(root)} -> {name}")
    return edges


def allowed(source: str, target: str) -> bool:
    """Whether files of folder `source` may include files of folder `target`."""
    if target == "core":
        return True
    if target == "timeline":
        return source != "core"
    if target.startswith("instruments/"):
        return source == TOP
    return False  # the top: only itself


def violations(edges: Mapping[tuple[str, str], list[str]]) -> list[str]:
    return [line for (a, b), lines in sorted(edges.items()) if not allowed(a, b) for line in lines]


def test_the_layer_has_the_folders_the_rules_name() -> None:
    folders = {folder_of(p, SRC) for p in sources(SRC)}
    assert {TOP, "core", "timeline", "instruments/timing"} <= folders


def test_no_include_cycle_between_folders() -> None:
    cycle = find_cycle(folder_edges(SRC))
    assert cycle is None, "include cycle between folders: " + " -> ".join(cycle or [])


def test_includes_run_core_timeline_instruments_top() -> None:
    assert violations(folder_edges(SRC)) == []


@pytest.mark.parametrize(
    ("files", "cycle", "bad"),
    [
        # The shape the layer must keep: accepted.
        (
            {
                "core/a.hpp": "",
                "timeline/b.hpp": '#include "core/a.hpp"',
                "instruments/x/c.hpp": '#include "timeline/b.hpp"\n#include "core/a.hpp"',
                "top.cpp": '#include "instruments/x/c.hpp"',
            },
            None,
            [],
        ),
        # core reaching up into the timeline closes a cycle.
        (
            {
                "core/a.hpp": '#include "timeline/b.hpp"',
                "timeline/b.hpp": '#include "core/a.hpp"',
            },
            ["core", "timeline", "core"],
            ["core/a.hpp -> timeline/b.hpp"],
        ),
        # One instrument reaching into another's files, and the timeline into an instrument's.
        (
            {
                "timeline/b.hpp": '#include "instruments/y/d.hpp"',
                "instruments/x/c.hpp": '#include "instruments/y/d.hpp"',
                "instruments/y/d.hpp": "",
            },
            None,
            [
                "instruments/x/c.hpp -> instruments/y/d.hpp",
                "timeline/b.hpp -> instruments/y/d.hpp",
            ],
        ),
    ],
)
def test_the_check_finds_what_it_is_for(
    tmp_path: Path, files: dict[str, str], cycle: list[str] | None, bad: list[str]
) -> None:
    for name, text in files.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text + '\n#include "generated.gen.hpp"\n')
    edges = folder_edges(tmp_path)
    assert find_cycle(edges) == cycle
    assert violations(edges) == bad
