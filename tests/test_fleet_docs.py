"""docs/fleet.md says what the code does: every column of the dataset is documented, and the
CI walkthrough's output is what its commands print today."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from vkscope.cli import main
from vkscope.fleet.schema import DATASET_VERSION, SCHEMAS

DOC = Path(__file__).resolve().parent.parent / "docs" / "fleet.md"


def test_every_column_is_documented() -> None:
    text = DOC.read_text()
    assert f"currently **{DATASET_VERSION}**" in text
    for table, schema in SCHEMAS.items():
        section = text.split(f"### `{table}`", 1)[1].split("\n### ", 1)[0]
        documented = set(re.findall(r"`([a-z_]+)`", section.split("| --- |", 1)[1]))
        missing = [f.name for f in schema if f.name not in documented]
        assert not missing, f"{table}: {missing}"


def test_the_walkthrough_prints_what_it_says(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    text = DOC.read_text()
    walkthrough = text.split("## 6. A CI history", 1)[1]
    commands = re.findall(
        r"^vkscope (fleet generate history .+|trend history .+)$", walkthrough, re.M
    )
    assert len(commands) == 2
    expected = walkthrough.split("```text\n", 1)[1].split("```", 1)[0]
    codes = []
    for command in commands:
        args = command.replace("history", str(tmp_path / "history"), 1).split()
        codes.append(main(args))
    assert codes == [0, 1]
    assert capsys.readouterr().out == expected
