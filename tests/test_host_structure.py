"""The host's modules depend on each other one way, as the layer's folders do
(test_layer_structure.py): the bottom <- capture <- counters <- the readers <- the command line.

Reads every import of src/vkscope and checks:

- no arrow up: a module imports only modules of its own rank or below (RANKS);
- no cycle between areas (a top-level module or subpackage; capture counts as four: its shared
  file format, capture/write, capture/read, and the names the package exports);
- the capture package's two directions: the write side imports nothing of the read side, and the
  read side nothing of the write side but its journal build (to present a capture never
  finalized);
- no module imports another's private name (`_name`);
- the capture's schema has one owner: no SQL outside capture/ names a capture table.
"""

from __future__ import annotations

import ast
import functools
import re
from collections.abc import Iterable, Mapping
from pathlib import Path

import pytest
from support.structure import find_cycle

PACKAGE = Path(__file__).resolve().parent.parent / "src" / "vkscope"

# Rank of each area: an area imports only areas of its rank or below.
RANKS: Mapping[str, int] = {
    # The bottom: what everything may use.
    "vkscope": 0, "protocol": 0, "protocol_gen": 0, "pipeline_statistics": 0, "paths": 0,
    "settings": 0, "frame_selection": 0, "supervisor": 0, "launch": 0, "devices": 0, "tags": 0,
    "outputs": 0, "shown_text": 0,
    # The host's GPU sampler: what the capture server stores and the readers name.
    "gpu_state": 0,
    # Captures: the file format, writing them, reading them.
    "capture": 1, "capture.write": 1, "capture.read": 1, "capture.api": 1,
    # What the capture is read for, and what checks settings against devices.
    "counters": 2, "capture_summary": 2, "recording": 2, "device_report": 2, "guard": 2,
    "analysis": 3, "export": 3, "diff": 3, "html": 3, "fleet": 3,
    # The command line.
    "cli": 4, "__main__": 4,
}  # fmt: skip
# Tables and views of a capture that SQL may name (schema.py, and what readers present).
CAPTURE_TABLES = (
    "meta", "processes", "devices", "queues", "frames", "label_stacks", "workloads", "submits",
    "workload_instances", "annexes", "device_counters", "command_buffer_counters", "logs",
    "journal", "diagnostics", "instances_view", "instance_counters", "instance_counters_missing",
    "command_buffer_counter_values", "khr_joined", "gpus", "device_gpus", "gpu_samples",
)  # fmt: skip
_SQL_TABLE = re.compile(  # SQL keywords as this code base writes them: in capitals
    r"\b(?:FROM|JOIN|INTO|UPDATE|TABLE)\s+(?:temp\.|main\.)?(" + "|".join(CAPTURE_TABLES) + r")\b"
)


def module_name(path: Path, root: Path) -> str:
    parts = list(path.relative_to(root).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join([root.name, *parts])


def area_of(module: str) -> str:
    """`vkscope.capture.read.reader` -> `capture.read`; `vkscope.cli.report` -> `cli`. The
    capture package's own names (`vkscope.capture`: what both directions export) are
    `capture.api`; its shared file format (errors, schema) is `capture`."""
    parts = module.split(".")[1:]
    if not parts:
        return "vkscope"
    if parts == ["capture"]:
        return "capture.api"
    if parts[0] == "capture" and len(parts) > 1 and parts[1] in ("read", "write"):
        return f"capture.{parts[1]}"
    return parts[0]


def imports(path: Path, root: Path) -> Iterable[tuple[str, list[str], int]]:
    """(module imported, names imported from it, line) for each import of a vkscope module."""
    here = module_name(path, root)
    package = here if path.name == "__init__.py" else here.rpartition(".")[0]
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.split(".")[0] == root.name:
                    yield alias.name, [], node.lineno
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[: len(base) - (node.level - 1)]
                target = ".".join([*base, *([node.module] if node.module else [])])
            else:
                target = node.module or ""
            if target.split(".")[0] != root.name:
                continue
            names = [a.name for a in node.names]
            # `from . import x`: x may be a module of its own.
            modules = [f"{target}.{n}" for n in names if (root.parent / f"{target}.{n}".replace(
                ".", "/")).with_suffix(".py").exists() or (root.parent / f"{target}.{n}".replace(
                ".", "/")).is_dir()]  # fmt: skip
            if modules:
                for m in modules:
                    yield m, [], node.lineno
                rest = [n for n in names if f"{target}.{n}" not in modules]
                if rest:
                    yield target, rest, node.lineno
            else:
                yield target, names, node.lineno


@functools.cache
def edges(root: Path) -> list[tuple[str, str, str]]:
    """(importing module, imported module, `file:line`) for every import within the package."""
    out = []
    for path in sorted(root.rglob("*.py")):
        if path.name.endswith("_gen.py"):
            continue
        source = module_name(path, root)
        for target, _, line in imports(path, root):
            out.append((source, target, f"{path.relative_to(root.parent)}:{line}"))
    return out


def arrows_up(root: Path) -> list[str]:
    bad = []
    for source, target, where in edges(root):
        a, b = area_of(source), area_of(target)
        if RANKS[b] > RANKS[a]:
            bad.append(
                f"{where}: {source} ({a}, rank {RANKS[a]}) imports {target} (rank {RANKS[b]})"
            )
    return bad


def direction_of_capture(root: Path) -> list[str]:
    bad = []
    for source, target, where in edges(root):
        a, b = area_of(source), area_of(target)
        if a == "capture.write" and b == "capture.read":
            bad.append(f"{where}: the write side imports the read side ({target})")
        if a == "capture.read" and b == "capture.write" and target != "vkscope.capture.write.build":
            bad.append(f"{where}: the read side imports {target}, not only the journal build")
    return bad


def private_imports(root: Path) -> list[str]:
    bad = []
    for path in sorted(root.rglob("*.py")):
        for target, names, line in imports(path, root):
            for name in names:
                if name.startswith("_") and not name.startswith("__"):
                    bad.append(f"{path.relative_to(root.parent)}:{line}: {name} of {target}")
    return bad


def sql_outside_capture(root: Path) -> list[str]:
    bad = []
    for path in sorted(root.rglob("*.py")):
        if "capture" in path.relative_to(root).parts:
            continue
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Constant) and isinstance(node.value, str):
                found = _SQL_TABLE.search(node.value)
                if found:
                    bad.append(f"{path.relative_to(root.parent)}:{node.lineno}: {found.group(0)}")
    return bad


def test_the_package_has_the_areas_the_ranks_name() -> None:
    areas = {area_of(module_name(p, PACKAGE)) for p in PACKAGE.rglob("*.py")}
    assert areas <= set(RANKS), f"areas without a rank: {sorted(areas - set(RANKS))}"
    assert {"capture", "capture.read", "capture.write", "analysis", "cli"} <= areas


def test_no_import_runs_up() -> None:
    assert arrows_up(PACKAGE) == []


def test_no_cycle_between_areas() -> None:
    pairs = {(area_of(a), area_of(b)) for a, b, _ in edges(PACKAGE)}
    cycle = find_cycle({p for p in pairs if p[0] != p[1]})
    assert cycle is None, "import cycle between areas: " + " -> ".join(cycle or [])


def test_capture_writes_and_reads_one_way() -> None:
    assert direction_of_capture(PACKAGE) == []


def test_no_private_name_is_imported_across_modules() -> None:
    assert private_imports(PACKAGE) == []


def test_only_capture_has_sql_over_capture_tables() -> None:
    assert sql_outside_capture(PACKAGE) == []


@pytest.mark.parametrize(
    ("files", "up", "direction", "private", "sql"),
    [
        # The shape the host must keep: accepted.
        (
            {
                "protocol.py": "",
                "capture/__init__.py": "from .read.reader import x",
                "capture/write/build.py": "from ... import protocol",
                "capture/read/reader.py": 'from ..write.build import y\nQ = "SELECT * FROM meta"',
                "analysis/report.py": "from ..capture import x\nfrom ..capture.read import reader",
                "cli/report.py": "from ..analysis import report",
            },
            [], [], [], [],
        ),
        # Each rule broken once.
        (
            {
                "capture/__init__.py": "",
                "capture/write/store.py": "from ..read import reader",
                "capture/read/reader.py": "from ..write.server import s\nfrom ...cli import main",
                "analysis/report.py": 'from ..capture.read.reader import _x\nQ = "FROM meta m"',
                "cli/__init__.py": "",
            },
            ["vkscope/capture/read/reader.py:2"],
            ["vkscope/capture/write/store.py:1", "vkscope/capture/read/reader.py:1"],
            ["vkscope/analysis/report.py:1"],
            ["vkscope/analysis/report.py:2"],
        ),
    ],
)  # fmt: skip
def test_the_checks_find_what_they_are_for(
    tmp_path: Path,
    files: dict[str, str],
    up: list[str],
    direction: list[str],
    private: list[str],
    sql: list[str],
) -> None:
    root = tmp_path / "vkscope"
    for name, text in {"__init__.py": "", **files}.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text + "\n")
    for folder in [p for p in root.rglob("*") if p.is_dir()]:
        (folder / "__init__.py").touch()

    def where(found: list[str]) -> list[str]:
        return sorted(line.split(": ")[0] for line in found)

    assert where(arrows_up(root)) == sorted(up)
    assert where(direction_of_capture(root)) == sorted(direction)
    assert where(private_imports(root)) == sorted(private)
    assert where(sql_outside_capture(root)) == sorted(sql)
