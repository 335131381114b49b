"""One protocol definition: the layer's header, the host's module and docs/protocol.md agree.

The layer side is checked by compiling a small program against the generated header and reading
back what it prints (codes, name tables), the host side from the installed package, the document
by regenerating its tables. Bad definitions are refused with a message naming the entry.
"""

from __future__ import annotations

import importlib.util
import os
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path
from typing import Any

import msgspec
import pytest

from harness import protocol as oracle
from vkscope import protocol as messages
from vkscope import settings
from vkscope.capture.write import timing_fields

ROOT = Path(__file__).resolve().parents[1]
DEFINITION = ROOT / "src/vkscope/protocol.toml"
sys.path.insert(0, str(ROOT / "generator"))

from vkscope_codegen import emit_protocol_cpp, emit_protocol_doc, emit_protocol_py  # noqa: E402
from vkscope_codegen.protocol import Protocol, ProtocolError, camel, load  # noqa: E402


@pytest.fixture(scope="module")
def proto() -> Protocol:
    return load(DEFINITION)


def _layer_view(proto: Protocol, tmp: Path) -> list[str]:
    """What a program built against the generated header prints about every code and name."""
    (tmp / "protocol.gen.hpp").write_text(emit_protocol_cpp.header(proto, DEFINITION.name))
    lines = [
        '#include "protocol.gen.hpp"',
        "#include <cstdio>",
        "using namespace vkscope::protocol;",
        "int main() {",
        '    std::printf("version %u\\n", kVersion);',
        '    std::printf("limits %zu %u %u\\n", kMaxPayloadBytes, kMaxCommandPayloadBytes,'
        " unsigned{kSequenceBit});",
        "    for (int c = 0; c < 256; ++c) {",
        "        if (const char* n = name(static_cast<MessageType>(c)); n[0] != '?') std::printf(\"layer %s %d\\n\", n, c);",  # noqa: E501
        "        if (const char* n = name(static_cast<HostCommand>(c)); n[0] != '?') std::printf(\"host %s %d\\n\", n, c);",  # noqa: E501
        "    }",
        '    for (const FlagName& f : kQueueFlagNames) std::printf("bits queue_flag %s %u\\n", f.name, f.bit);',  # noqa: E501
    ]
    for e in proto.enums.values():
        if e.bits:
            continue
        for v in e.values:
            if e.text:
                value = f"{e.name}::k{camel(v.ident)}"
            else:
                value = f"name({camel(e.name)}::{v.cxx_name})"
            lines.append(f'    std::printf("enum {e.name} %s\\n", {value});')
    lines.append("}")
    (tmp / "probe.cpp").write_text("\n".join(lines) + "\n")
    compiler = shutil.which("c++") or shutil.which("g++")
    assert compiler, "a C++ compiler is needed to build the layer"
    build = [compiler, "-std=c++20", "-Wall", "-Wextra", "-Werror", "-I", str(tmp)]
    subprocess.run([*build, "-o", str(tmp / "probe"), str(tmp / "probe.cpp")], check=True)
    out = subprocess.run([str(tmp / "probe")], check=True, capture_output=True, text=True)
    return out.stdout.splitlines()


def _host_view() -> list[str]:
    """The same lines, from the host's generated module as installed."""
    m = messages
    out = [f"version {m.PROTOCOL_VERSION}"]
    out.append(f"limits {m.MAX_PAYLOAD} {m.MAX_COMMAND_PAYLOAD} {m.SEQUENCE_BIT}")
    names = dict(m.NAMES) | {m.CAPTURE: "CAPTURE"}
    for code in range(256):
        if code in names:
            side = "host" if code == m.CAPTURE else "layer"
            out.append(f"{side} {names[code]} {code}")
            assert getattr(m, names[code]) == code
    out += [f"bits queue_flag {name} {bit}" for bit, name in m.QUEUE_FLAG]
    for e in load(DEFINITION).enums.values():
        if not e.bits:
            values = getattr(m, e.name.upper())
            wire = values.values() if isinstance(values, dict) else values
            out += [f"enum {e.name} {w}" for w in wire]
    return out


def _oracle_view() -> list[str]:
    """The codes as the tests' own reading of the TOML has them."""
    data = tomllib.loads(DEFINITION.read_text())
    return [
        f"{spec.get('direction', 'layer')} {name} {spec['code']}"
        for name, spec in sorted(data["messages"].items(), key=lambda kv: kv[1]["code"])
    ]


def test_layer_header_and_host_module_agree(proto: Protocol, tmp_path: Path) -> None:
    layer = _layer_view(proto, tmp_path)
    assert layer == _host_view()
    assert [line for line in layer if line.startswith(("layer ", "host "))] == _oracle_view()
    assert {m.name: m.code for m in proto.messages} == oracle.CODES


def test_installed_module_is_generated_from_this_definition(proto: Protocol) -> None:
    installed = Path(messages.__file__).with_name("protocol_gen.py")
    assert installed.read_text() == emit_protocol_py.module(proto, DEFINITION.name), (
        "the installed vkscope was built from another protocol.toml: reinstall it "
        "(pip install --no-build-isolation --no-deps . or scripts/setup.sh)"
    )


def test_docs_tables_are_the_definitions(proto: Protocol) -> None:
    doc = (ROOT / "docs/protocol.md").read_text()
    assert emit_protocol_doc.update(doc, proto) == doc, (
        "docs/protocol.md differs from protocol.toml: run PYTHONPATH=generator python -m "
        "vkscope_codegen.protocol_gen --protocol src/vkscope/protocol.toml --doc docs/protocol.md"
    )
    env = dict(os.environ, PYTHONPATH=str(ROOT / "generator"))
    check = [sys.executable, "-m", "vkscope_codegen.protocol_gen", "--protocol", str(DEFINITION)]
    stale = "# vkscope wire protocol\n\n" + doc.split("\n", 1)[1].replace("| 0x01 |", "| 0x11 |")
    (ROOT / "build").mkdir(exist_ok=True)
    target = ROOT / "build" / f"protocol-doc-{os.getpid()}.md"
    try:
        target.write_text(stale)
        res = subprocess.run(
            [*check, "--doc", str(target), "--check"], env=env, capture_output=True, text=True
        )
        assert res.returncode == 1 and "differs from" in res.stderr
        assert target.read_text() == stale  # --check never writes
        res = subprocess.run([*check, "--doc", str(target)], env=env, capture_output=True)
        assert res.returncode == 0 and "| 0x01 | HELLO |" in target.read_text()
    finally:
        target.unlink(missing_ok=True)


def test_doc_markers_are_required(proto: Protocol) -> None:
    doc = (ROOT / "docs/protocol.md").read_text()
    without = doc.replace("<!-- end of generated enums -->", "")
    with pytest.raises(emit_protocol_doc.DocError, match="'enums' has no"):
        emit_protocol_doc.update(without, proto)
    renamed = doc.replace("protocol.toml: frame", "protocol.toml: framing")
    with pytest.raises(emit_protocol_doc.DocError, match="unknown generated section 'framing'"):
        emit_protocol_doc.update(renamed, proto)
    start = doc.index("<!-- generated from protocol.toml: frame -->")
    end = doc.index("<!-- end of generated frame -->")
    with pytest.raises(emit_protocol_doc.DocError, match="no generated section 'frame'"):
        emit_protocol_doc.update(doc[:start] + doc[end:], proto)


def test_host_uses_the_definition(proto: Protocol) -> None:
    annex = proto.message("ANNEX")
    timing = {f.name for f in annex.fields if f.feature == "timing"}
    assert set(timing_fields.TIMING_FIELDS) == timing
    assert settings.all_settings()["timing"].values == ("off", *messages.SERIALIZATION)
    cli = Path(sys.executable).with_name("vkscope")
    res = subprocess.run([cli, "run", "--help"], capture_output=True, text=True, check=True)
    assert "--timing {" + ",".join(messages.SERIALIZATION) + "}" in res.stdout


def test_payload_structs_follow_required_and_defaults() -> None:
    decode = msgspec.json.decode
    with pytest.raises(msgspec.ValidationError, match="missing required field `pid`"):
        decode(b'{"protocol": 1, "process": "a"}', type=messages.Hello)
    payload = b'{"device": 1, "type": "x", "api": "vkCmdX", "bytes": null}'
    w = decode(payload, type=messages.Workload)
    assert (w.nbytes, w.draws, w.kind, w.groups) == (None, messages.ABSENT, "", None)
    goodbye = decode(b"{}", type=messages.Goodbye)
    assert goodbye.dropped == 0
    assert messages.PAYLOAD_TYPES[messages.ANNEX] == dict[str, Any]


BAD_DEFINITIONS = [
    ("code = 0x02", "code = 0x01", "messages.DEVICE: code 0x01 is also HELLO's"),
    ('code = 0x81\nsequence = "submitID"', "code = 0x81", "code 0x81 needs `sequence`"),
    ("[messages.HELLO]\n", '[messages.HELLO]\nsequence = "x"\n', "has no sequence bit"),
    ('fields.pid = { type = "int"', 'fields.pid = { typ = "int"', "unknown key 'typ'"),
    ('type = "enum:frame_reason"', 'type = "enum:frame_reasons"', "no enumeration 'frame_reasons'"),
    ('type = "list[object:QueueInfo]"', 'type = "list[object:Queue]"', "no object 'Queue'"),
    ('type = "list[str]"', 'type = "list[str"', "expected ',' or ']'"),
    ('fields.pixels = { type = "uint"', 'fields.width = { type = "str"', "differs from uint"),
    ('values = ["build", "copy"]', 'values = ["build", "delete"]', "not usable as a C++"),
    ("code = 0x40\n", "code = 0xc0\n", "a host command carries no sequence number"),
]


@pytest.mark.parametrize(("old", "new", "error"), BAD_DEFINITIONS)
def test_bad_definition_is_refused(tmp_path: Path, old: str, new: str, error: str) -> None:
    text = DEFINITION.read_text()
    assert old in text
    bad = tmp_path / "protocol.toml"
    bad.write_text(text.replace(old, new, 1))
    with pytest.raises(ProtocolError, match=error.replace("(", r"\(").replace("[", r"\[")):
        load(bad)
    env = dict(os.environ, PYTHONPATH=str(ROOT / "generator"))
    cmd = [sys.executable, "-m", "vkscope_codegen.protocol_gen", "--protocol", str(bad)]
    res = subprocess.run([*cmd, "--header", str(tmp_path / "h.hpp")], env=env, capture_output=True,
                         text=True)  # fmt: skip
    assert res.returncode == 1 and "Traceback" not in res.stderr
    assert res.stderr.startswith(f"vkscope_codegen: error: {bad}: ")
    assert not (tmp_path / "h.hpp").exists()


SAMPLES = """
[messages.SAMPLES]
code = 0x0A
tag = "device id"
feature = "samplers"
summary = "the samplers a device offers"
fields.device = { type = "uint", required = true, doc = "device id" }
fields.units = { type = "map[str]", required = true, doc = "sampler name to its unit" }
"""


def test_a_new_message_is_one_entry(tmp_path: Path) -> None:
    """A message and an annex field added to the definition alone reach every generated part."""
    text = DEFINITION.read_text().replace(
        "fields.timing_reason =",
        'fields.samples = { type = "map[float]", feature = "samplers", doc = "values" }\n'
        "fields.timing_reason =",
    )
    path = tmp_path / "protocol.toml"
    path.write_text(text + SAMPLES)
    proto = load(path)
    source = tmp_path / "samples_protocol_gen.py"
    source.write_text(emit_protocol_py.module(proto, path.name))
    spec = importlib.util.spec_from_file_location("samples_protocol_gen", source)
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    decoded = msgspec.json.decode(
        b'{"device": 2, "units": {"cycles": "count"}}', type=module.PAYLOAD_TYPES[0x0A]
    )
    assert (module.SAMPLES, module.NAMES[0x0A], decoded.units) == (
        10,
        "SAMPLES",
        {"cycles": "count"},
    )
    with pytest.raises(msgspec.ValidationError, match="Expected `str`, got `int`"):
        msgspec.json.decode(b'{"device": 2, "units": {"a": 1}}', type=module.Samples)
    assert "Samples = 0x0a" in emit_protocol_cpp.header(proto, path.name)
    doc = emit_protocol_doc.update((ROOT / "docs/protocol.md").read_text(), proto)
    assert (
        "| 0x0a | SAMPLES | - | device id | the samplers a device offers (with samplers only) |"
        in doc
    )
    assert "| `units` | {str: str, ...} | yes | sampler name to its unit |" in doc
    assert "| `samples` | {str: float, ...} |  | values (with samplers only) |" in doc
    assert oracle.type_problem("map[float]", {"a": 1.5}) is None
    assert oracle.type_problem("map[float]", {"a": "x"}) == "expected float, got 'x'"
