"""`vkscope settings`: the layer's settings, their values, defaults and variables."""

from __future__ import annotations

import argparse

from ..settings import all_settings
from .command import Command


def configure(parser: argparse.ArgumentParser) -> None:
    pass


def run(args: argparse.Namespace) -> int:
    for s in all_settings().values():
        allowed = "|".join(s.values) if s.values else s.type
        print(f"{s.name}  ({allowed}, default {s.default!r}, env {s.env_var})")
        print(f"    {s.summary}")
    return 0


COMMAND = Command(
    name="settings",
    help="list the layer's settings",
    description="Lists every layer setting with its values, default and environment variable.",
    configure=configure,
    run=run,
)
