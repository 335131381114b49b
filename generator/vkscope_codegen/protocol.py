"""The wire protocol definition (src/vkscope/protocol.toml), read and checked.

Everything generated from the definition (the layer's header, the host's payload structs, the
tables of docs/protocol.md) goes through `load`, which rejects what the emitters could not turn
into consistent code: unknown keys, duplicate codes, a sequence meaning on a type without the
sequence bit, references to enumerations or objects that do not exist, and one field with two
different types in two workload types.
"""

from __future__ import annotations

import re
import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

SCALARS = ("int", "uint", "float", "str", "bool")
LAYER, HOST = "layer", "host"

# Enumerators and constants become C++ identifiers; these would not compile.
_CXX_KEYWORD_TEXT = (
    "alignas alignof and asm auto bool break case catch char class const consteval constexpr "
    "constinit const_cast continue decltype default delete do double dynamic_cast else enum "
    "explicit export extern false float for friend goto if inline int long mutable namespace "
    "new noexcept not nullptr operator or private protected public register reinterpret_cast "
    "requires return short signed sizeof static static_assert static_cast struct switch "
    "template this thread_local throw true try typedef typeid typename union unsigned using "
    "virtual void volatile wchar_t while xor"
)
_CXX_KEYWORDS = frozenset(_CXX_KEYWORD_TEXT.split())
_IDENT = re.compile(r"[a-z][a-z0-9_]*\Z")
_MESSAGE_NAME = re.compile(r"[A-Z][A-Z0-9_]*\Z")
_OBJECT_NAME = re.compile(r"[A-Z][A-Za-z0-9]*\Z")


class ProtocolError(ValueError):
    """The definition is inconsistent; the message names the file and the entry."""


@dataclass(frozen=True)
class FieldType:
    kind: str  # a scalar, "enum", "object", "list", "tuple" or "map"
    ref: str = ""  # enum or object name
    items: tuple[FieldType, ...] = ()

    def __str__(self) -> str:
        if self.kind in ("enum", "object"):
            return f"{self.kind}:{self.ref}"
        if self.kind in ("list", "tuple", "map"):
            return f"{self.kind}[{', '.join(map(str, self.items))}]"
        return self.kind


@dataclass(frozen=True)
class Field:
    name: str
    type: FieldType
    doc: str
    required: bool = False
    nullable: bool = False
    has_default: bool = False
    default: Any = None
    decoded: bool = True
    feature: str = ""
    py_name: str = ""

    @property
    def attribute(self) -> str:
        return self.py_name or self.name


@dataclass(frozen=True)
class Variant:
    name: str
    cxx_name: str
    fields: tuple[Field, ...]


@dataclass(frozen=True)
class Message:
    name: str
    code: int
    direction: str
    tag: str
    summary: str
    sequence: str = ""
    feature: str = ""
    fields: tuple[Field, ...] = ()
    variant_field: str = ""
    variants: tuple[Variant, ...] = ()
    open: bool = False
    flags: str = ""  # an enumeration whose values are bool fields of the payload
    absent_sentinel: bool = False

    @property
    def camel(self) -> str:
        """HELLO -> Hello, SUBMIT_DONE -> SubmitDone: the C++ enumerator and the host's Struct."""
        return camel(self.name.lower())


@dataclass(frozen=True)
class EnumValue:
    ident: str  # identifier in code
    wire: str  # the string on the wire
    cxx_name: str
    bit: int = 0


@dataclass(frozen=True)
class Enum:
    name: str
    doc: str
    values: tuple[EnumValue, ...]
    text: bool = False  # wire strings are sentences, identifiers name them
    bits: bool = False  # each value is a bit of a flags word

    @property
    def wire_values(self) -> tuple[str, ...]:
        return tuple(v.wire for v in self.values)


@dataclass(frozen=True)
class Protocol:
    version: int
    sequence_bit: int
    max_payload_bytes: int
    max_command_payload_bytes: int
    absent_int: int
    absent_str: str
    messages: tuple[Message, ...]
    objects: dict[str, tuple[Field, ...]]
    enums: dict[str, Enum]

    def message(self, name: str) -> Message:
        return next(m for m in self.messages if m.name == name)

    @property
    def layer_messages(self) -> tuple[Message, ...]:
        return tuple(m for m in self.messages if m.direction == LAYER)

    @property
    def host_commands(self) -> tuple[Message, ...]:
        return tuple(m for m in self.messages if m.direction == HOST)


def camel(name: str) -> str:
    return "".join(part.capitalize() for part in name.split("_"))


def parse_type(text: str) -> FieldType:
    """`list[tuple[uint, uint]]` and the like into a FieldType; ProtocolError if malformed."""
    pos, out = _parse_type(text.replace(" ", ""), 0)
    if pos != len(text.replace(" ", "")):
        raise ProtocolError(f"type {text!r}: unexpected text at {text.replace(' ', '')[pos:]!r}")
    return out


def _parse_type(s: str, pos: int) -> tuple[int, FieldType]:
    m = re.compile(r"[a-z]+(:[A-Za-z0-9_]+)?").match(s, pos)
    if not m:
        raise ProtocolError(f"type {s!r}: expected a type at {s[pos:]!r}")
    word, end = m.group(0), m.end()
    if word in SCALARS:
        return end, FieldType(word)
    kind, _, ref = word.partition(":")
    if kind in ("enum", "object") and ref:
        return end, FieldType(kind, ref)
    if kind in ("list", "tuple", "map") and not ref and s[end : end + 1] == "[":
        items = []
        pos = end + 1
        while True:
            pos, item = _parse_type(s, pos)
            items.append(item)
            if s[pos : pos + 1] == ",":
                pos += 1
                continue
            if s[pos : pos + 1] == "]":
                break
            raise ProtocolError(f"type {s!r}: expected ',' or ']' at {s[pos:]!r}")
        if kind in ("list", "map") and len(items) != 1:
            raise ProtocolError(f"type {s!r}: a {kind} has one item type")
        return pos + 1, FieldType(kind, items=tuple(items))
    raise ProtocolError(f"type {s!r}: unknown type {word!r}")


class _Reader:
    """Reads one file's tables, naming the entry in every error."""

    def __init__(self, path: Path) -> None:
        self.path = path

    def fail(self, where: str, what: str) -> ProtocolError:
        return ProtocolError(f"{self.path}: {where}: {what}")

    def keys(
        self,
        where: str,
        table: Any,
        allowed: set[str],
        needed: frozenset[str] | set[str] = frozenset(),
    ) -> None:
        if not isinstance(table, dict):
            raise self.fail(where, "expected a table")
        unknown = sorted(set(table) - allowed)
        if unknown:
            raise self.fail(
                where, f"unknown key {unknown[0]!r}; keys: {', '.join(sorted(allowed))}"
            )
        missing = sorted(needed - set(table))
        if missing:
            raise self.fail(where, f"missing key {missing[0]!r}")

    def fields(self, where: str, table: Any) -> tuple[Field, ...]:
        if not isinstance(table, dict):
            raise self.fail(where, "fields must be a table")
        out = []
        for name, spec in table.items():
            at = f"{where}.{name}"
            if not _IDENT.match(name):
                raise self.fail(at, "a field name is lower_case")
            self.keys(
                at,
                spec,
                {"type", "doc", "required", "nullable", "default", "decoded", "feature", "py_name"},
                {"type", "doc"},
            )
            try:
                ftype = parse_type(spec["type"])
            except ProtocolError as exc:
                raise self.fail(at, str(exc)) from None
            if spec.get("required") and "default" in spec:
                raise self.fail(at, "a required field has no default")
            out.append(
                Field(
                    name,
                    ftype,
                    " ".join(str(spec["doc"]).split()),
                    required=bool(spec.get("required", False)),
                    nullable=bool(spec.get("nullable", False)),
                    has_default="default" in spec,
                    default=spec.get("default"),
                    decoded=bool(spec.get("decoded", True)),
                    feature=str(spec.get("feature", "")),
                    py_name=str(spec.get("py_name", "")),
                )
            )
        return tuple(out)

    def enum(self, name: str, spec: Any) -> Enum:
        at = f"enums.{name}"
        self.keys(at, spec, {"doc", "values", "text", "bits", "cxx_names"}, {"doc"})
        cxx = spec.get("cxx_names", {})
        text = bool(spec.get("text", False))
        if ("values" in spec) == ("bits" in spec):
            raise self.fail(at, "give either values or bits")
        values: list[EnumValue] = []
        if "bits" in spec:
            for ident, bit in spec["bits"].items():
                if not isinstance(bit, int) or bit <= 0 or bit & (bit - 1):
                    raise self.fail(f"{at}.{ident}", "a bit is a power of two")
                values.append(EnumValue(ident, ident, cxx.get(ident, ident), bit))
        elif text:
            if not isinstance(spec["values"], dict):
                raise self.fail(at, 'a text enumeration\'s values are identifier = "text"')
            values = [EnumValue(i, str(w), cxx.get(i, i)) for i, w in spec["values"].items()]
        else:
            if not isinstance(spec["values"], list):
                raise self.fail(at, "values is a list of strings (or text = true and a table)")
            values = [EnumValue(str(v), str(v), cxx.get(v, v)) for v in spec["values"]]
        return Enum(name, " ".join(spec["doc"].split()), tuple(values), text, "bits" in spec)

    def message(self, name: str, spec: Any) -> Message:
        at = f"messages.{name}"
        if not _MESSAGE_NAME.match(name):
            raise self.fail(at, "a message name is UPPER_CASE")
        self.keys(
            at,
            spec,
            {
                "code", "direction", "tag", "summary", "sequence", "feature", "fields",
                "variant_field", "variants", "open", "flags", "absent",
            },
            {"code", "tag", "summary"},
        )  # fmt: skip
        direction = spec.get("direction", LAYER)
        if direction not in (LAYER, HOST):
            raise self.fail(at, f"direction is {LAYER!r} or {HOST!r}")
        variants = []
        for vname, vspec in spec.get("variants", {}).items():
            vat = f"{at}.variants.{vname}"
            self.keys(vat, vspec, {"cxx_name", "fields"})
            fields = self.fields(f"{vat}.fields", vspec.get("fields", {}))
            variants.append(Variant(vname, str(vspec.get("cxx_name", vname)), fields))
        absent = spec.get("absent", "null")
        if absent not in ("null", "sentinel"):
            raise self.fail(at, "absent is 'null' or 'sentinel'")
        return Message(
            name,
            int(spec["code"]),
            direction,
            str(spec["tag"]),
            " ".join(str(spec["summary"]).split()),
            sequence=str(spec.get("sequence", "")),
            feature=str(spec.get("feature", "")),
            fields=self.fields(f"{at}.fields", spec.get("fields", {})),
            variant_field=str(spec.get("variant_field", "")),
            variants=tuple(variants),
            open=bool(spec.get("open", False)),
            flags=str(spec.get("flags", "")),
            absent_sentinel=absent == "sentinel",
        )


def load(path: Path) -> Protocol:
    try:
        data = tomllib.loads(path.read_text())
    except (OSError, tomllib.TOMLDecodeError) as exc:
        raise ProtocolError(f"{path}: {exc}") from None
    r = _Reader(path)
    r.keys("top level", data, {"version", "frame", "host", "messages", "objects", "enums"},
           {"version", "frame", "host", "messages"})  # fmt: skip
    frame, host = data["frame"], data["host"]
    r.keys("frame", frame, {"sequence_bit", "max_payload_bytes", "max_command_payload_bytes"},
           {"sequence_bit", "max_payload_bytes", "max_command_payload_bytes"})  # fmt: skip
    r.keys("host", host, {"absent_int", "absent_str"}, {"absent_int", "absent_str"})
    messages = tuple(r.message(n, s) for n, s in data["messages"].items())
    objects = {}
    for name, spec in data.get("objects", {}).items():
        if not _OBJECT_NAME.match(name):
            raise r.fail(f"objects.{name}", "an object name is CamelCase")
        r.keys(f"objects.{name}", spec, {"fields"}, {"fields"})
        objects[name] = r.fields(f"objects.{name}.fields", spec["fields"])
    enums = {n: r.enum(n, s) for n, s in data.get("enums", {}).items()}
    for m in messages:
        if m.variants:
            # The variant field's enumeration is made from the variants.
            field = next((f for f in m.fields if f.name == m.variant_field), None)
            if field is None or field.type.kind != "enum":
                raise r.fail(f"messages.{m.name}", "variant_field must name a field of enum type")
            if field.type.ref in enums:
                raise r.fail(f"enums.{field.type.ref}", f"made from messages.{m.name}.variants")
            values = tuple(EnumValue(v.name, v.name, v.cxx_name) for v in m.variants)
            enums[field.type.ref] = Enum(field.type.ref, f"Types of {m.name}", values)
    proto = Protocol(
        version=int(data["version"]),
        sequence_bit=int(frame["sequence_bit"]),
        max_payload_bytes=int(frame["max_payload_bytes"]),
        max_command_payload_bytes=int(frame["max_command_payload_bytes"]),
        absent_int=int(host["absent_int"]),
        absent_str=str(host["absent_str"]),
        messages=messages,
        objects=objects,
        enums=enums,
    )
    _check(r, proto)
    return proto


def all_fields(proto: Protocol) -> list[tuple[str, Field]]:
    """Every field with where it is defined, for the checks."""
    out = []
    for m in proto.messages:
        out += [(f"messages.{m.name}.fields.{f.name}", f) for f in m.fields]
        for v in m.variants:
            out += [(f"messages.{m.name}.variants.{v.name}.fields.{f.name}", f) for f in v.fields]
    for name, fields in proto.objects.items():
        out += [(f"objects.{name}.fields.{f.name}", f) for f in fields]
    return out


def _refs(t: FieldType) -> list[FieldType]:
    return [t, *(r for item in t.items for r in _refs(item))]


def _check(r: _Reader, proto: Protocol) -> None:
    seen: dict[int, str] = {}
    for m in proto.messages:
        at = f"messages.{m.name}"
        if not 0 < m.code <= 0xFF:
            raise r.fail(at, f"code {m.code:#x} is not a byte")
        if m.code in seen:
            raise r.fail(at, f"code {m.code:#04x} is also {seen[m.code]}'s")
        seen[m.code] = m.name
        sequenced = bool(m.code & proto.sequence_bit)
        if m.direction == HOST and sequenced:
            raise r.fail(at, "a host command carries no sequence number: its code is below 0x80")
        if sequenced != bool(m.sequence):
            what = "needs `sequence` (what its" if sequenced else "has no sequence bit, so no"
            raise r.fail(at, f"code {m.code:#04x} {what} sequence number holds)")
        if m.direction == HOST and (m.fields or m.variants):
            raise r.fail(at, "host commands carry their argument in the tag, no payload fields")
        if m.flags and m.flags not in proto.enums:
            raise r.fail(at, f"flags names no enumeration {m.flags!r}")
        names = [f.name for f in m.fields]
        for v in m.variants:
            clash = sorted(set(names) & {f.name for f in v.fields})
            if clash:
                raise r.fail(f"{at}.variants.{v.name}", f"field {clash[0]!r} is a common field")
        # A field of several variants is one attribute of the host's struct.
        by_name: dict[str, Field] = {}
        for v in m.variants:
            for f in v.fields:
                other = by_name.setdefault(f.name, f)
                if f.decoded and other.decoded and _python_kind(f.type) != _python_kind(other.type):
                    raise r.fail(
                        f"{at}.variants.{v.name}.fields.{f.name}",
                        f"type {f.type} differs from {other.type} in another variant",
                    )
    for where, f in all_fields(proto):
        for t in _refs(f.type):
            if t.kind == "enum" and t.ref not in proto.enums:
                raise r.fail(where, f"no enumeration {t.ref!r}")
            if t.kind == "object" and t.ref not in proto.objects:
                raise r.fail(where, f"no object {t.ref!r}")
    for e in proto.enums.values():
        idents = [v.ident for v in e.values]
        if len(set(idents)) != len(idents) or len(set(e.wire_values)) != len(idents):
            raise r.fail(f"enums.{e.name}", "values repeat")
        for value in e.values:
            keyword = not (e.bits or e.text) and value.cxx_name in _CXX_KEYWORDS
            if not _IDENT.match(value.ident) or keyword:
                raise r.fail(
                    f"enums.{e.name}.{value.ident}",
                    "not usable as a C++ enumerator: use a lower_case identifier (cxx_names)",
                )


def _python_kind(t: FieldType) -> str:
    """The host-side type of a field: enumerations are strings, uint and int are int."""
    if t.kind in ("enum", "str"):
        return "str"
    if t.kind == "uint":
        return "int"
    return f"{t.kind}:{t.ref}[{','.join(_python_kind(i) for i in t.items)}]"
