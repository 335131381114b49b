"""Emits the layer's protocol.gen.hpp: message codes, limits and enumerations.

Everything is constexpr and every name is a string literal, so the layer's hot paths use them
without allocating. Payload fields stay with the code that writes them (the JSON writer calls);
the tests check what the layer sends against the definition.
"""

from __future__ import annotations

from .protocol import Enum, Protocol, camel


def _cxx_string(s: str) -> str:
    return '"' + s.replace("\\", "\\\\").replace('"', '\\"') + '"'


def _comment(text: str, indent: str = "") -> str:
    out, line = [], f"{indent}//"
    for word in text.split():
        if len(line) + 1 + len(word) > 99:
            out.append(line)
            line = f"{indent}//"
        line += " " + word
    out.append(line)
    return "\n".join(out) + "\n"


def _enum(e: Enum) -> str:
    out = [_comment(e.doc + ".")]
    if e.bits:
        out.append(f"inline constexpr FlagName k{camel(e.name)}Names[] = {{\n")
        out += [f"    {{{v.bit:#x}, {_cxx_string(v.wire)}}},\n" for v in e.values]
        out.append("};\n\n")
        return "".join(out)
    if e.text:
        # One array per text, so that each has a single address the layer can compare.
        out.append(f"namespace {e.name} {{\n")
        for v in e.values:
            out.append(f"inline constexpr char k{camel(v.ident)}[] = {_cxx_string(v.wire)};\n")
        names = ", ".join(f"k{camel(v.ident)}" for v in e.values)
        out.append(f"inline constexpr const char* kAll[] = {{{names}}};\n")
        out.append(f"}} // namespace {e.name}\n\n")
        return "".join(out)
    t = camel(e.name)
    members = ", ".join(v.cxx_name for v in e.values)
    names = ", ".join(_cxx_string(v.wire) for v in e.values)
    out.append(f"enum class {t} : uint8_t {{ {members} }};\n")
    out.append(f"inline constexpr const char* k{t}Names[] = {{{names}}};\n")
    out.append(
        f"constexpr const char* name({t} v) noexcept {{\n"
        f"    return k{t}Names[static_cast<size_t>(v)];\n}}\n\n"
    )
    return "".join(out)


def header(proto: Protocol, source: str) -> str:
    out = [f"// Generated from {source}. Do not edit.\n#pragma once\n\n"]
    out.append("#include <cstddef>\n#include <cstdint>\n\nnamespace vkscope::protocol {\n\n")
    out.append(f"inline constexpr uint32_t kVersion = {proto.version};\n")
    out.append("// Types with this bit set carry a sequence number.\n")
    out.append(f"inline constexpr uint8_t kSequenceBit = {proto.sequence_bit:#x};\n")
    out.append("// The host stops reading a connection at a longer payload (out of step).\n")
    out.append(f"inline constexpr size_t kMaxPayloadBytes = {proto.max_payload_bytes};\n")
    out.append("// The layer stops reading host commands at a longer payload.\n")
    limit = proto.max_command_payload_bytes
    out.append(f"inline constexpr uint32_t kMaxCommandPayloadBytes = {limit};\n\n")
    for enum_name, messages in (
        ("MessageType", proto.layer_messages),
        ("HostCommand", proto.host_commands),
    ):
        what = "layer to the host" if enum_name == "MessageType" else "host to the layer"
        out.append(f"// Messages from the {what}.\nenum class {enum_name} : uint8_t {{\n")
        for m in messages:
            out.append(_comment(m.summary, "    "))
            out.append(f"    {m.camel} = {m.code:#04x},\n")
        out.append("};\n\n")
        out.append(f"constexpr const char* name({enum_name} type) noexcept {{\n")
        out.append("    switch (type) {\n")
        for m in messages:
            out.append(f"    case {enum_name}::{m.camel}:\n        return {_cxx_string(m.name)};\n")
        out.append('    }\n    return "?";\n}\n\n')
    out.append("// A bit of a flags word and its name on the wire.\n")
    out.append("struct FlagName {\n    uint32_t bit;\n    const char* name;\n};\n\n")
    out += [_enum(e) for e in proto.enums.values()]
    out.append("} // namespace vkscope::protocol\n")
    return "".join(out)
