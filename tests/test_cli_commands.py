"""Every `vkscope` command is wired the same way: a module of vkscope.cli with a COMMAND that the
registry lists, and `python -m vkscope` runs the same commands as the `vkscope` script."""

from __future__ import annotations

import importlib
import pkgutil
import subprocess
import sys

import pytest

import vkscope.cli
from vkscope.cli import COMMANDS, main
from vkscope.cli.command import Command


def test_every_command_module_is_registered_once() -> None:
    modules = {
        info.name: importlib.import_module(f"vkscope.cli.{info.name}")
        for info in pkgutil.iter_modules(vkscope.cli.__path__)
    }
    commands = {name: m.COMMAND for name, m in modules.items() if hasattr(m, "COMMAND")}
    assert all(isinstance(c, Command) for c in commands.values())
    assert {name: c.name for name, c in commands.items()} == {n: n for n in commands}
    assert [c.name for c in COMMANDS] == [
        "run", "demo", "report", "query", "overlap", "perfetto", "html", "diff", "export",
        "trend", "fleet", "devices", "counters", "settings",
    ]  # fmt: skip
    assert set(commands) == {c.name for c in COMMANDS}


@pytest.mark.parametrize("name", [c.name for c in COMMANDS])
def test_each_command_has_its_help(name: str, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exited:
        main([name, "--help"])
    assert exited.value.code == 0
    out = capsys.readouterr().out
    assert out.startswith("usage: vkscope ") and name in out.splitlines()[0]


def test_python_dash_m_runs_the_same_commands() -> None:
    res = subprocess.run(
        [sys.executable, "-m", "vkscope", "--help"], capture_output=True, text=True, timeout=60
    )
    assert res.returncode == 0
    for command in COMMANDS:
        assert command.name in res.stdout and command.help[:30] in res.stdout
