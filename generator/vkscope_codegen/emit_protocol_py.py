"""Emits the host's protocol_gen.py: message codes, msgspec payload structs and enumerations.

Each payload Struct holds the fields the host decodes (`decoded`, the default). A required field
has no default, so a message lacking it is rejected with msgspec's path to the problem; the others
default to None (or the definition's default, or the store's absent sentinel), so a layer that
cannot fill one still gets its message through. Unknown fields are ignored, which lets the layer
add fields before the host learns them.
"""

from __future__ import annotations

import json

from .protocol import Field, FieldType, Message, Protocol

_INTS = ("int", "uint")


def _py_type(t: FieldType) -> str:
    if t.kind in _INTS:
        return "int"
    if t.kind in ("str", "enum"):
        return "str"
    if t.kind in ("float", "bool"):
        return t.kind
    if t.kind == "object":
        return t.ref
    if t.kind == "map":
        return f"dict[str, {_py_type(t.items[0])}]"
    return f"{t.kind}[{', '.join(_py_type(i) for i in t.items)}]"


def _literal(value: object) -> str:
    return json.dumps(value) if isinstance(value, str) else repr(value)


def _field(f: Field, proto: Protocol, sentinel: bool) -> tuple[bool, str]:
    """(has a default, the struct line) for one field."""
    t = _py_type(f.type)
    if f.required:
        line = f"{t} | None" if f.nullable else t
        return False, f"    {f.attribute}: {line}\n"
    if f.has_default and not f.nullable:
        annotation, default = t, _literal(f.default)
    elif sentinel and f.type.kind in _INTS:
        annotation, default = f"{t} | None", "ABSENT"
    elif sentinel and f.type.kind in ("str", "enum"):
        annotation, default = f"{t} | None", _literal(proto.absent_str)
    else:
        annotation, default = f"{t} | None", _literal(f.default) if f.has_default else "None"
    if f.py_name:
        default = f"msgspec.field(name={json.dumps(f.name)}, default={default})"
    return True, f"    {f.attribute}: {annotation} = {default}\n"


def _struct(name: str, doc: str, fields: list[Field], proto: Protocol, sentinel: bool) -> str:
    lines = [_field(f, proto, sentinel) for f in fields]
    # Fields without a default come first, as Python requires; decoding goes by name.
    body = [line for has_default, line in lines if not has_default]
    body += [line for has_default, line in lines if has_default]
    return f'class {name}(msgspec.Struct, gc=False):\n    """{doc}"""\n\n{"".join(body)}\n\n'


def _decoded_fields(m: Message) -> list[Field]:
    """The message's decoded fields, those of all its variants merged (first definition wins,
    nullable when any variant's is)."""
    out = {f.name: f for f in m.fields if f.decoded}
    for v in m.variants:
        for f in v.fields:
            if not f.decoded:
                continue
            if f.name in out:
                if f.nullable and not out[f.name].nullable:
                    out[f.name] = f
            else:
                out[f.name] = f
    return list(out.values())


def _objects_used(proto: Protocol) -> list[str]:
    """Objects the decoded fields reach, each after the objects it holds."""
    order: list[str] = []

    def visit(t: FieldType) -> None:
        for item in t.items:
            visit(item)
        if t.kind == "object" and t.ref not in order:
            for f in proto.objects[t.ref]:
                if f.decoded:
                    visit(f.type)
            order.append(t.ref)

    for m in proto.layer_messages:
        for f in _decoded_fields(m):
            visit(f.type)
    return order


def module(proto: Protocol, source: str) -> str:
    out = [
        f'"""The wire protocol\'s message codes, payload structs and enumerations.\n\n'
        f"Generated from {source} at build time. Do not edit: change the definition.\n"
        '"""\n\n'
        "from __future__ import annotations\n\n"
        "from typing import Any, Final\n\n"
        "import msgspec\n\n"
        f"PROTOCOL_VERSION: Final = {proto.version}\n"
        f"SEQUENCE_BIT: Final = {proto.sequence_bit:#x}\n"
        f"MAX_PAYLOAD: Final = {proto.max_payload_bytes}\n"
        f"MAX_COMMAND_PAYLOAD: Final = {proto.max_command_payload_bytes}\n"
        "# What an absent field of a message with absent = 'sentinel' decodes to.\n"
        f"ABSENT: Final = {proto.absent_int}\n"
        f"ABSENT_STR: Final = {_literal(proto.absent_str)}\n\n"
        "# Messages from the layer.\n"
    ]
    out += [f"{m.name}: Final = {m.code:#04x}\n" for m in proto.layer_messages]
    out.append("# Commands from the host to the layer.\n")
    out += [f"{m.name}: Final = {m.code:#04x}\n" for m in proto.host_commands]
    out.append("\nNAMES: Final[dict[int, str]] = {\n")
    out += [f"    {m.name}: {json.dumps(m.name)},\n" for m in proto.layer_messages]
    out.append("}\n\n# Enumerations.\n")
    for e in proto.enums.values():
        const = e.name.upper()
        if e.bits:
            items = "".join(f"    ({v.bit:#05x}, {json.dumps(v.wire)}),\n" for v in e.values)
            out.append(f"{const}: Final[tuple[tuple[int, str], ...]] = (\n{items})\n")
        elif e.text:
            items = "".join(f"    {json.dumps(v.ident)}: {json.dumps(v.wire)},\n" for v in e.values)
            out.append(f"{const}: Final[dict[str, str]] = {{\n{items}}}\n")
        else:
            items = "".join(f"    {json.dumps(v.wire)},\n" for v in e.values)
            out.append(f"{const}: Final[tuple[str, ...]] = (\n{items})\n")
    out.append("\n\n")
    for name in _objects_used(proto):
        fields = [f for f in proto.objects[name] if f.decoded]
        out.append(_struct(name, f"{name} (an object inside payloads).", fields, proto, False))
    payloads = []
    for m in proto.layer_messages:
        if m.open:
            out.append(f"# {m.name} payloads are any object.\n{m.camel} = dict[str, Any]\n\n\n")
        else:
            doc = f"{m.name}: {m.summary}."
            out.append(_struct(m.camel, doc, _decoded_fields(m), proto, m.absent_sentinel))
        payloads.append(f"    {m.name}: {m.camel},\n")
    out.append(f"PAYLOAD_TYPES: Final[dict[int, Any]] = {{\n{''.join(payloads)}}}\n")
    return "".join(out)
