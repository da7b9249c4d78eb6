"""HTML: visible text with block structure kept as paragraphs and h1-h6 as headings.

The canonical text is the rendered text (not the markup), so offsets address what a
reader sees; the viewer shows this text with the cited range highlighted.
"""

from __future__ import annotations

import html
import re
from html.parser import HTMLParser
from pathlib import Path

from .base import Extracted, Heading
from .sheet import CELL_SEP  # cells apart: "alpha" and "beta" never read "alphabeta"
from .text import decode, title_from_name

_BLOCK = {
    "p", "div", "section", "article", "main", "header", "footer", "aside", "nav", "li",
    "ul", "ol", "table", "tr", "blockquote", "pre", "dd", "dt", "dl", "figure",
    "figcaption", "form", "hr", "br", "address", "details", "summary",
}  # fmt: skip
_HEAD = {"h1": 1, "h2": 2, "h3": 3, "h4": 4, "h5": 5, "h6": 6}
# Not "head": a page that never closes it (common) would lose its whole body. What the head
# holds is skipped by itself: scripts and styles here, the title kept apart, the rest void.
_SKIP = {"script", "style", "noscript", "template", "svg"}
_CELL = {"td", "th"}
_SPACE = re.compile(r"\s+")


class _Renderer(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.out: list[str] = []
        self.size = 0
        self.line: list[str] = []
        self.headings: list[Heading] = []
        self.skip_depth = 0
        self.pre_depth = 0
        self.head_level = 0
        self.title = ""
        self.in_title = False

    def _flush(self) -> None:
        raw = "".join(self.line)
        self.line = []
        text = raw.strip("\n") if self.pre_depth else _SPACE.sub(" ", raw).strip()
        if not text:
            return
        if self.out:
            self.out.append("\n\n")
            self.size += 2
        at = self.size
        self.out.append(text)
        self.size += len(text)
        if self.head_level:
            self.headings.append(Heading(at, self.size, self.head_level, text))

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "title":
            self.in_title = True
        if tag in _SKIP:
            self.skip_depth += 1
            return
        if tag in _BLOCK or tag in _HEAD:
            self._flush()
        elif tag in _CELL and "".join(self.line).strip():
            self.line.append(CELL_SEP)
        if tag in _HEAD:
            self.head_level = _HEAD[tag]
        if tag == "pre":
            self.pre_depth += 1

    def handle_endtag(self, tag: str) -> None:
        if tag == "title":
            self.in_title = False
        if tag in _SKIP:
            self.skip_depth = max(0, self.skip_depth - 1)
            return
        if tag in _BLOCK or tag in _HEAD:
            self._flush()
        if tag in _HEAD:
            self.head_level = 0
        if tag == "pre":
            self.pre_depth = max(0, self.pre_depth - 1)

    def handle_data(self, data: str) -> None:
        if self.in_title:
            self.title += data
            return
        if self.skip_depth:
            return
        self.line.append(data)

    def close(self) -> None:
        super().close()
        self._flush()


def render_html(raw: str) -> tuple[str, list[Heading], str]:
    """Markup to (visible text, its h1-h6 headings, the <title>)."""
    r = _Renderer()
    r.feed(raw)
    r.close()
    return "".join(r.out), r.headings, html.unescape(_SPACE.sub(" ", r.title).strip())


def extract_html(path: Path) -> Extracted:
    raw, warnings = decode(path.read_bytes(), path.name)
    text, headings, title = render_html(raw)
    if not title:
        title = next((h.title for h in headings if h.level == 1), "") or title_from_name(path)
    return Extracted(text=text, title=title, kind="html", headings=headings, warnings=warnings)
