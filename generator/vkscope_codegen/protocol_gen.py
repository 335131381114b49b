"""python -m vkscope_codegen.protocol_gen --protocol protocol.toml [--header H] [--python P]
[--doc docs/protocol.md [--check]]

Generates what the layer and the host need from the wire protocol definition, and rewrites (or,
with --check, compares) the generated tables of docs/protocol.md.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from . import emit_protocol_cpp, emit_protocol_doc, emit_protocol_py
from .protocol import ProtocolError, load


def _write(path: Path, text: str) -> None:
    # Keep timestamps of unchanged outputs so the build does not recompile them.
    if not path.exists() or path.read_text() != text:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="vkscope_codegen.protocol_gen", description=__doc__)
    ap.add_argument("--protocol", required=True, type=Path, help="the definition (TOML)")
    ap.add_argument("--header", type=Path, help="write the layer's C++ header here")
    ap.add_argument("--python", type=Path, help="write the host's Python module here")
    ap.add_argument("--doc", type=Path, help="rewrite the generated tables of this Markdown file")
    ap.add_argument("--check", action="store_true", help="with --doc: only say if it is stale")
    args = ap.parse_args(argv)
    try:
        proto = load(args.protocol)
        doc = args.doc.read_text() if args.doc else ""
        updated = emit_protocol_doc.update(doc, proto) if args.doc else ""
    except (ProtocolError, emit_protocol_doc.DocError, OSError) as exc:
        print(f"vkscope_codegen: error: {exc}", file=sys.stderr)
        return 1
    source = args.protocol.name
    if args.header:
        _write(args.header, emit_protocol_cpp.header(proto, source))
    if args.python:
        _write(args.python, emit_protocol_py.module(proto, source))
    if args.doc and updated != doc:
        if args.check:
            print(
                f"vkscope_codegen: {args.doc} differs from {args.protocol}: run python -m "
                f"vkscope_codegen.protocol_gen --protocol {args.protocol} --doc {args.doc}",
                file=sys.stderr,
            )
            return 1
        args.doc.write_text(updated)
    return 0


if __name__ == "__main__":
    sys.exit(main())
