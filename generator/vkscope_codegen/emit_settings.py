"""Emits the layer's typed settings table from src/vkscope/layer_settings.toml."""

from __future__ import annotations

import tomllib
from dataclasses import dataclass
from pathlib import Path

from .registry import RegistryError

TYPES = {"bool", "int", "enum", "string", "percent"}


@dataclass(frozen=True)
class Setting:
    name: str
    type: str
    default: object
    values: tuple[str, ...]
    minimum: int | None
    maximum: int | None


def load(path: Path) -> list[Setting]:
    data = tomllib.loads(path.read_text())
    out = []
    for name, spec in data.items():
        kind = spec.get("type")
        if kind not in TYPES:
            raise RegistryError(f"{path}: setting {name} has unknown type {kind!r}")
        values = tuple(spec.get("values", ()))
        if kind == "enum" and spec["default"] not in values:
            raise RegistryError(f"{path}: default of {name} is not one of its values")
        if kind == "percent" and spec["default"] != "":
            raise RegistryError(f'{path}: a percent setting ({name}) is off ("") by default')
        out.append(Setting(name, kind, spec["default"], values, spec.get("min"), spec.get("max")))
    return out


def _camel(name: str) -> str:
    return "".join(part.capitalize() for part in name.split("_"))


def _cxx_string(s: str) -> str:
    return '"' + s.replace("\\", "\\\\").replace('"', '\\"') + '"'


def header(settings: list[Setting], source: str) -> str:
    out = [f"// Generated from {source}. Do not edit.\n#pragma once\n"]
    out.append(
        '#include "core/settings_parse.hpp"\n\n#include <cstdint>\n#include <optional>\n'
        "#include <string>\n\n"
    )
    out.append("namespace vkscope {\n\n")
    for s in settings:
        if s.type == "enum":
            members = ", ".join(s.values)
            out.append(f"enum class {_camel(s.name)} : uint8_t {{ {members} }};\n")
            names = ", ".join(_cxx_string(v) for v in s.values)
            out.append(f"inline constexpr const char* k{_camel(s.name)}Names[] = {{{names}}};\n")
    out.append("\n// Every layer setting with its default value.\nstruct SettingValues {\n")
    for s in settings:
        if s.type == "enum":
            out.append(f"    {_camel(s.name)} {s.name} = {_camel(s.name)}::{s.default};\n")
        elif s.type == "bool":
            out.append(f"    bool {s.name} = {'true' if s.default else 'false'};\n")
        elif s.type == "int":
            out.append(f"    int64_t {s.name} = {int(s.default)};\n")  # type: ignore[call-overload]
        elif s.type == "percent":
            # Empty: the setting is off; the default of every percent setting.
            out.append(f"    std::optional<double> {s.name};\n")
        else:
            out.append(f"    std::string {s.name} = {_cxx_string(str(s.default))};\n")
    out.append("};\n\n")
    names = ", ".join(_cxx_string(s.name) for s in settings)
    out.append(f"inline constexpr const char* kSettingNames[] = {{{names}}};\n\n")
    out.append(
        "// Parses `text` into the setting `name`. Returns kUnknown for a name that is not a\n"
        "// setting, kBadValue (with `why` filled) for a value it cannot take, kOk otherwise.\n"
        "inline AssignResult assign_setting(SettingValues& v, std::string_view name,\n"
        "                                   std::string_view text, std::string& why) {\n"
    )
    for s in settings:
        out.append(f"    if (name == {_cxx_string(s.name)}) {{\n")
        if s.type == "enum":
            out.append(
                f"        return parse_enum(text, k{_camel(s.name)}Names, v.{s.name}, why);\n"
            )
        elif s.type == "bool":
            out.append(f"        return parse_bool(text, v.{s.name}, why);\n")
        elif s.type == "int":
            lo = s.minimum if s.minimum is not None else -(2**63)
            hi = s.maximum if s.maximum is not None else 2**63 - 1
            out.append(f"        return parse_int(text, {lo}LL, {hi}LL, v.{s.name}, why);\n")
        elif s.type == "percent":
            lo = s.minimum if s.minimum is not None else 0
            hi = s.maximum if s.maximum is not None else 100
            out.append(f"        return parse_percent(text, {lo}, {hi}, v.{s.name}, why);\n")
        else:
            out.append(
                f"        v.{s.name} = std::string(text);\n        return AssignResult::kOk;\n"
            )
        out.append("    }\n")
    out.append("    return AssignResult::kUnknown;\n}\n\n} // namespace vkscope\n")
    return "".join(out)
