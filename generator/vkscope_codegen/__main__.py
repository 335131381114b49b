"""python -m vkscope_codegen --registry vk.xml --hooks hooks.toml --settings s.toml --out DIR"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from . import emit_dispatch, emit_settings, hooks, registry


def _write(path: Path, text: str) -> None:
    # Keep timestamps of unchanged outputs so the build does not recompile them.
    if not path.exists() or path.read_text() != text:
        path.write_text(text)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="vkscope_codegen", description=__doc__)
    ap.add_argument("--registry", help="path of vk.xml (found next to the headers if omitted)")
    ap.add_argument("--include-dir", action="append", default=[], help="Vulkan include directory")
    ap.add_argument("--hooks", required=True, type=Path)
    ap.add_argument("--settings", required=True, type=Path)
    ap.add_argument("--out", required=True, type=Path)
    args = ap.parse_args(argv)
    try:
        xml = registry.find_registry(args.registry, args.include_dir)
        reg = registry.load(xml)
        for inc in args.include_dir:
            hv = registry.header_version_of(Path(inc))
            if hv is not None and hv != reg.header_version:
                raise registry.RegistryError(
                    f"{xml} is for header version {reg.header_version} but the headers in {inc}"
                    f" are version {hv}; point VKSCOPE_VK_XML at the matching vk.xml"
                )
        features, hook_list = hooks.load(args.hooks, reg)
        settings = emit_settings.load(args.settings)
    except registry.RegistryError as exc:
        print(f"vkscope_codegen: error: {exc}", file=sys.stderr)
        return 1
    args.out.mkdir(parents=True, exist_ok=True)
    src = xml.name
    _write(args.out / "dispatch_tables.gen.hpp", emit_dispatch.dispatch_header(reg, src))
    _write(
        args.out / "hooks.gen.hpp",
        emit_dispatch.hooks_header(reg, features, hook_list, "hooks.toml"),
    )
    _write(args.out / "command_tables.gen.cpp", emit_dispatch.lookup_source(reg, hook_list, src))
    _write(args.out / "settings.gen.hpp", emit_settings.header(settings, args.settings.name))
    print(
        f"vkscope_codegen: {len(reg.commands)} commands (header {reg.header_version}), "
        f"{len(hook_list)} hooks, {len(settings)} settings from {xml}"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
