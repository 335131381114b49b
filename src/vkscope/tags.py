"""Tags: what a user says of a capture (`vkscope run --tag KEY=VALUE`: build, commit, branch,
scene, device pool), stored in it and carried into a fleet dataset.

A tag's name is what fleet analyses group and order by, so it is kept to letters, digits and
`_ . : -`, starting with a letter or `_`; a value may be any text."""

from __future__ import annotations

import re
from typing import Final

NAME: Final = re.compile(r"[A-Za-z_][A-Za-z0-9_.:-]{0,127}")


class TagError(ValueError):
    """A tag that cannot be used, saying why."""


def check_name(name: str) -> str:
    if not NAME.fullmatch(name):
        raise TagError(
            f"tag name {name!r}: use letters, digits and _ . : - (starting with a letter or _)"
        )
    return name


def parse_tags(assignments: list[str]) -> dict[str, str]:
    """KEY=VALUE texts as a mapping; a key given twice is an error."""
    tags: dict[str, str] = {}
    for text in assignments:
        key, sep, value = text.partition("=")
        if not sep:
            raise TagError(f"--tag {text!r}: expected KEY=VALUE (build=1234)")
        check_name(key)
        if key in tags:
            raise TagError(f"--tag {key} given twice ({tags[key]!r} and {value!r})")
        tags[key] = value
    return tags
