"""The layer's settings as the Python side knows them, from the one definition the layer is
built from.

`layer_settings.toml` (next to this file) lists every setting; the build generates the layer's C++
table from the same file. This module validates values before a launch, so a typo is reported
before the application starts, and turns settings into the layer's environment variables.
"""

from __future__ import annotations

import re
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass
from functools import cache
from importlib import resources

from .frame_selection import FrameSelectionError, parse_frame_selection

LAYER_NAME = "VK_LAYER_VKSCOPE_profiler"
ENV_PREFIX = "VK_VKSCOPE_"
SETTINGS_FILE_KEY = "vkscope_profiler"

_TRUE = ("1", "true", "on", "yes")
_FALSE = ("0", "false", "off", "no")
_INTEGER = re.compile(r"-?[0-9]+")  # what the layer's std::from_chars reads, no more
# A percentage as the layer's parse_percent reads it: a decimal number, an optional %.
_PERCENT = re.compile(r" *([0-9]+\.?[0-9]*|\.[0-9]+) *%? *")


class SettingError(ValueError):
    """An unknown setting or a value the setting cannot take."""


@dataclass(frozen=True)
class Setting:
    name: str
    type: str
    default: str
    summary: str
    values: tuple[str, ...] = ()
    minimum: int | None = None
    maximum: int | None = None

    @property
    def env_var(self) -> str:
        return ENV_PREFIX + self.name.upper()

    def check(self, value: str) -> None:
        """Raises SettingError unless the layer accepts `value` (same rules as the layer)."""
        if self.type == "enum" and value not in self.values:
            raise SettingError(
                f"setting {self.name}={value!r}: expected one of {'|'.join(self.values)}"
            )
        if self.type == "bool" and value not in _TRUE + _FALSE:
            raise SettingError(f"setting {self.name}={value!r}: expected true or false")
        if self.type == "int":
            if not _INTEGER.fullmatch(value):
                raise SettingError(f"setting {self.name}={value!r}: expected an integer")
            number = int(value, 10)
            lo = self.minimum if self.minimum is not None else -(2**63)
            hi = self.maximum if self.maximum is not None else 2**63 - 1
            if not lo <= number <= hi:
                raise SettingError(
                    f"setting {self.name}={value!r}: expected an integer from {lo} to {hi}"
                )
        if self.type == "percent" and value.strip(" "):
            found = _PERCENT.fullmatch(value)
            lo = self.minimum if self.minimum is not None else 0
            hi = self.maximum if self.maximum is not None else 100
            if found is None:
                raise SettingError(
                    f"setting {self.name}={value!r}: expected a percentage such as 5% or 2.5"
                )
            if not lo <= float(found.group(1)) <= hi:
                raise SettingError(
                    f"setting {self.name}={value!r}: expected a percentage from {lo}% to {hi}%"
                )
        if self.name == "frames":
            try:
                parse_frame_selection(value)
            except FrameSelectionError as exc:
                raise SettingError(f"setting frames={value!r}: {exc}") from None


def _as_text(value: object) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


@cache
def all_settings() -> dict[str, Setting]:
    text = resources.files("vkscope").joinpath("layer_settings.toml").read_text()
    out: dict[str, Setting] = {}
    for name, spec in tomllib.loads(text).items():
        out[name] = Setting(
            name=name,
            type=spec["type"],
            default=_as_text(spec["default"]),
            summary=" ".join(spec.get("summary", "").split()),
            values=tuple(spec.get("values", ())),
            minimum=spec.get("min"),
            maximum=spec.get("max"),
        )
    return out


def parse_assignment(text: str) -> tuple[str, str]:
    """Parses and checks one `name=value` from the command line."""
    name, sep, value = text.partition("=")
    name = name.strip()
    if not sep:
        raise SettingError(f"expected NAME=VALUE, got {text!r}")
    known = all_settings()
    if name not in known:
        raise SettingError(f"unknown setting {name!r}; settings are: {', '.join(known)}")
    known[name].check(value.strip())
    return name, value.strip()


def from_environment(environ: Mapping[str, str]) -> dict[str, str]:
    """The settings given by VK_VKSCOPE_* variables, checked as the layer would check them;
    SettingError naming the variable for an unknown setting or a value the layer would
    ignore."""
    known = all_settings()
    found: dict[str, str] = {}
    for var, value in sorted(environ.items()):
        if not var.startswith(ENV_PREFIX):
            continue
        name = var[len(ENV_PREFIX) :].lower()
        if name not in known:
            raise SettingError(
                f"{var} (from the environment): unknown setting {name!r}; settings are: "
                f"{', '.join(known)}"
            )
        try:
            known[name].check(value)
        except SettingError as exc:
            raise SettingError(f"{var} (from the environment): {exc}") from None
        found[name] = value
    return found


def environment(assignments: dict[str, str]) -> dict[str, str]:
    """The VK_VKSCOPE_* variables that give the layer these settings."""
    known = all_settings()
    return {known[name].env_var: value for name, value in assignments.items()}
