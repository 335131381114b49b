"""The tables of docs/protocol.md, generated from the protocol definition.

The document's prose is written by hand; each table sits between two markers,

    <!-- generated from protocol.toml: NAME -->
    ...
    <!-- end of generated NAME -->

and `update` replaces what is between them. Every section must be there exactly once, so a
table cannot silently go missing from the document.
"""

from __future__ import annotations

import re

from .protocol import Field, FieldType, Message, Protocol


class DocError(ValueError):
    """The document's markers are missing, repeated or unknown."""


_BEGIN = re.compile(r"<!-- generated from protocol\.toml: ([a-z_]+) -->\n")


def _type(t: FieldType) -> str:
    if t.kind in ("enum", "object"):
        return t.ref
    if t.kind == "list":
        return f"[{_type(t.items[0])}, ...]"
    if t.kind == "map":
        return f"{{str: {_type(t.items[0])}, ...}}"
    if t.kind == "tuple":
        return f"[{', '.join(_type(i) for i in t.items)}]"
    return t.kind


def _cell(text: str) -> str:
    return text.replace("|", "\\|")


def _fields_table(fields: tuple[Field, ...] | list[Field]) -> str:
    out = ["| field | type | required | meaning |\n| --- | --- | --- | --- |\n"]
    for f in fields:
        t = _type(f.type) + (" or null" if f.nullable else "")
        notes = []
        if f.feature:
            notes.append(f"with {f.feature} only")
        if f.has_default:
            notes.append(f"absent means {f.default!r}".replace("'", "`"))
        doc = f.doc + (f" ({'; '.join(notes)})" if notes else "")
        req = "yes" if f.required else ""
        out.append(f"| `{f.name}` | {_cell(t)} | {req} | {_cell(doc)} |\n")
    return "".join(out)


def _frame(p: Protocol) -> str:
    mib = p.max_payload_bytes // (1 << 20)
    return (
        "| field | type | present |\n| --- | --- | --- |\n"
        "| message type | u8 | always |\n"
        f"| sequence | u64 | only when the type has bit {p.sequence_bit:#04x} set |\n"
        "| tag | u64 | always |\n"
        f"| payload length | u32 | always; at most {p.max_payload_bytes} bytes ({mib} MiB) from "
        f"the layer, {p.max_command_payload_bytes} in host commands |\n"
        "| payload | JSON object, UTF-8 | `length` bytes |\n"
    )


def _messages(p: Protocol) -> str:
    out = ["| type | name | sequence | tag | what |\n| --- | --- | --- | --- | --- |\n"]
    for m in p.layer_messages:
        what = m.summary + (f" (with {m.feature} only)" if m.feature else "")
        seq = m.sequence or "-"
        out.append(f"| {m.code:#04x} | {m.name} | {seq} | {m.tag} | {_cell(what)} |\n")
    return "".join(out)


def _host_commands(p: Protocol) -> str:
    out = ["| type | name | tag | what |\n| --- | --- | --- | --- |\n"]
    for m in p.host_commands:
        out.append(f"| {m.code:#04x} | {m.name} | {m.tag} | {_cell(m.summary)} |\n")
    return "".join(out)


def _payload(p: Protocol, m: Message) -> str:
    out = [f"### {m.name} ({m.code:#04x})\n\n"]
    if m.variants:
        names = ", ".join(f"`{v.name}`" for v in m.variants)
        out.append(
            f"Common fields; `{m.variant_field}` is one of {names}, whose fields follow.\n\n"
        )
    if m.open:
        out.append(
            "Any JSON object: besides the fields below, any field of the instance's workload "
            "type, which it replaces.\n\n"
        )
    if m.fields:
        out.append(_fields_table(m.fields) + "\n")
    if m.flags:
        flags = ", ".join(f"`{v.wire}`" for v in p.enums[m.flags].values)
        out.append(f"Flags: {flags}: {p.enums[m.flags].doc}.\n\n")
    for v in m.variants:
        out.append(f"#### `{v.name}`\n\n{_fields_table(v.fields)}\n")
    return "".join(out)


def _payloads(p: Protocol) -> str:
    out = [_payload(p, m) for m in p.layer_messages]
    for name, fields in p.objects.items():
        out.append(f"### {name} (inside payloads)\n\n{_fields_table(fields)}\n")
    return "".join(out).rstrip("\n") + "\n"


def _enums(p: Protocol) -> str:
    out = ["| enumeration | values | meaning |\n| --- | --- | --- |\n"]
    for e in p.enums.values():
        if e.bits:
            values = ", ".join(f"`{v.wire}` ({v.bit:#x})" for v in e.values)
        else:
            values = ", ".join(f"`{v.wire}`" for v in e.values)
        out.append(f"| `{e.name}` | {_cell(values)} | {_cell(e.doc)} |\n")
    return "".join(out)


SECTIONS = {
    "frame": _frame,
    "messages": _messages,
    "host_commands": _host_commands,
    "payloads": _payloads,
    "enums": _enums,
}


def update(doc: str, proto: Protocol) -> str:
    """`doc` with every generated section rewritten from `proto`."""
    out: list[str] = []
    seen: list[str] = []
    pos = 0
    for begin in _BEGIN.finditer(doc):
        name = begin.group(1)
        if name not in SECTIONS:
            raise DocError(
                f"unknown generated section {name!r}; sections are {', '.join(SECTIONS)}"
            )
        if name in seen:
            raise DocError(f"generated section {name!r} appears twice")
        if begin.start() < pos:
            raise DocError(f"generated section {name!r} begins inside {seen[-1]!r}")
        seen.append(name)
        end_marker = f"<!-- end of generated {name} -->"
        end = doc.find(end_marker, begin.end())
        if end < 0:
            raise DocError(f"generated section {name!r} has no {end_marker!r}")
        # Blank lines around the table, so that Markdown sees it as one.
        out += [doc[pos : begin.end()], "\n", SECTIONS[name](proto), "\n"]
        pos = end
    missing = [name for name in SECTIONS if name not in seen]
    if missing:
        raise DocError(f"no generated section {missing[0]!r} (<!-- generated from protocol.toml: "
                       f"{missing[0]} --> ... <!-- end of generated {missing[0]} -->)")  # fmt: skip
    out.append(doc[pos:])
    return "".join(out)
