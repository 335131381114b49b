"""`vkscope html CAPTURE`: an offline HTML timeline of a capture (html/page.py)."""

from __future__ import annotations

import argparse
from pathlib import Path

from ..guard import guarded
from .command import Command


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("capture", type=Path)
    parser.add_argument("-o", "--output", type=Path, default=None, help="default: CAPTURE.html")


def run(args: argparse.Namespace) -> int:
    from ..html import write_html

    output: Path = args.output or args.capture.with_suffix(".html")

    def body() -> None:
        write_html(args.capture, output)
        print(f"vkscope: wrote {output}")

    return guarded(body, reading=[args.capture])


COMMAND = Command(
    name="html",
    help="write an offline HTML timeline of a capture",
    description="Writes one self-contained HTML file (no network needed): a zoomable "
    "timeline per queue, workload details, a frame picker, a sortable workload table and a "
    "label-tree breakdown of GPU time.",
    configure=configure,
    run=run,
)
