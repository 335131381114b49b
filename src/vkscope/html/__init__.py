"""The offline HTML timeline: one self-contained page (`vkscope html CAPTURE -o report.html`).

`write_html` reads a capture and writes a single HTML file that needs nothing but a browser: the
page's script, its style sheet and the capture's data are all inside it (docs/html.md).
"""

from __future__ import annotations

from .page import build_page, page_data, write_html

__all__ = ["build_page", "page_data", "write_html"]
