"""The protocol definition (src/vkscope/protocol.toml) as the tests read it, on their own.

Message codes for the tests' frame decoder, and `problems`: what is wrong with a message a real
layer sent, judged against the definition. Independent of the host's decoder and of the code
generator: this reads the TOML with tomllib and walks the payload itself, so a layer that sends a
field, a type or an enumeration value the definition does not declare fails the test that ran it.
"""

from __future__ import annotations

import re
import tomllib
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
DEFINITION: dict[str, Any] = tomllib.loads((ROOT / "src/vkscope/protocol.toml").read_text())
MESSAGES: dict[str, dict[str, Any]] = DEFINITION["messages"]
CODES: dict[str, int] = {name: spec["code"] for name, spec in MESSAGES.items()}
NAMES: dict[int, str] = {code: name for name, code in CODES.items()}
_VARIANTS: dict[str, Any] = MESSAGES["WORKLOAD"]["variants"]


def enum_values(name: str) -> set[str]:
    if name == MESSAGES["WORKLOAD"]["fields"]["type"]["type"].removeprefix("enum:"):
        return set(_VARIANTS)
    spec = DEFINITION["enums"][name]
    if "bits" in spec:
        return set(spec["bits"])
    values = spec["values"]
    return set(values.values()) if isinstance(values, dict) else set(values)


def _split_items(inner: str) -> list[str]:
    items, depth, start = [], 0, 0
    for i, c in enumerate(inner):
        depth += {"[": 1, "]": -1}.get(c, 0)
        if c == "," and depth == 0:
            items.append(inner[start:i].strip())
            start = i + 1
    return [*items, inner[start:].strip()]


def type_problem(declared: str, value: Any) -> str | None:
    """Why `value` is not of the declared type, or None."""
    declared = declared.strip()
    if m := re.fullmatch(r"map\[(.*)\]", declared):
        if not isinstance(value, dict):
            return f"expected a JSON object ({declared}), got {value!r}"
        problem = next((p for v in value.values() if (p := type_problem(m.group(1), v))), None)
        return problem
    if m := re.fullmatch(r"(list|tuple)\[(.*)\]", declared):
        if not isinstance(value, list):
            return f"expected a JSON array ({declared}), got {value!r}"
        items = _split_items(m.group(2))
        if m.group(1) == "tuple" and len(value) != len(items):
            return f"expected {len(items)} items ({declared}), got {value!r}"
        for i, v in enumerate(value):
            if problem := type_problem(items[0] if m.group(1) == "list" else items[i], v):
                return f"[{i}]: {problem}"
        return None
    kind, _, ref = declared.partition(":")
    if kind == "object":
        if not isinstance(value, dict):
            return f"expected an object ({ref}), got {value!r}"
        return next(iter(fields_problems(DEFINITION["objects"][ref]["fields"], value)), None)
    if kind == "enum":
        ok = isinstance(value, str) and value in enum_values(ref)
        return None if ok else f"{value!r} is no value of enumeration {ref}"
    checks = {
        "int": lambda v: type(v) is int,
        "uint": lambda v: type(v) is int and v >= 0,
        "float": lambda v: type(v) in (int, float),
        "str": lambda v: type(v) is str,
        "bool": lambda v: type(v) is bool,
    }
    return None if checks[kind](value) else f"expected {kind}, got {value!r}"


def fields_problems(fields: dict[str, Any], payload: dict[str, Any]) -> list[str]:
    """Problems of `payload` against `fields` (name: its spec, or a list of specs any of which
    may fit, for an annex field that several workload types declare)."""
    out = []
    for name, value in payload.items():
        specs = fields.get(name)
        if specs is None:
            out.append(f"field {name!r} is not in the definition")
            continue
        found = [_value_problem(name, spec, value) for spec in _alternatives(specs)]
        if None not in found:  # no declaration fits
            out.append(str(found[0]))
    for name, specs in fields.items():
        if any(spec.get("required") for spec in _alternatives(specs)) and name not in payload:
            out.append(f"required field {name!r} missing")
    return out


def _alternatives(specs: dict[str, Any] | list[dict[str, Any]]) -> list[dict[str, Any]]:
    return specs if isinstance(specs, list) else [specs]


def _value_problem(name: str, spec: dict[str, Any], value: Any) -> str | None:
    if value is None:
        ok = spec.get("nullable", False)
        return None if ok else f"field {name!r} is null, and the definition says it never is"
    problem = type_problem(spec["type"], value)
    return f"field {name!r}: {problem}" if problem else None


def problems(message_type: int, payload: Any) -> list[str]:
    """What the definition says is wrong with one message from the layer (empty: nothing)."""
    name = NAMES.get(message_type)
    if name is None or MESSAGES[name].get("direction", "layer") != "layer":
        return [f"message type {message_type:#04x} is no layer message of the definition"]
    spec = MESSAGES[name]
    if not isinstance(payload, dict):
        return [f"{name}: payload is not an object"]
    fields: dict[str, Any] = dict(spec.get("fields", {}))
    if name == "WORKLOAD":
        variant = _VARIANTS.get(payload.get("type"), {})
        fields |= variant.get("fields", {})
    if spec.get("open"):
        # Any field of a workload type (as one of the types declaring it has it), and the flags.
        for variant in _VARIANTS.values():
            for field, fspec in variant.get("fields", {}).items():
                if not isinstance(fields.setdefault(field, []), dict):
                    fields[field].append(fspec)
        for flag in enum_values(spec["flags"]):
            fields[flag] = {"type": "bool"}
    return [f"{name}: {p}" for p in fields_problems(fields, payload)]
