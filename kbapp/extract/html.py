"""HTML: visible text with block structure kept as paragraphs and h1-h6 as headings.

The canonical text is the rendered text (not the markup), so offsets address what a
reader sees; the viewer shows this text with the cited range highlighted.
"""

from __future__ import annotations

import re
from pathlib import Path

from lxml import etree
from lxml import html as lxml_html

from .base import Extracted, Heading
from .sheet import CELL_SEP  # cells apart: "alpha" and "beta" never read "alphabeta"
from .text import decode, title_from_name

_BLOCK = {
    "p", "div", "section", "article", "main", "header", "footer", "aside", "nav", "li",
    "ul", "ol", "table", "tr", "blockquote", "pre", "dd", "dt", "dl", "figure",
    "figcaption", "form", "hr", "br", "address", "details", "summary",
}  # fmt: skip
_HEAD = {"h1": 1, "h2": 2, "h3": 3, "h4": 4, "h5": 5, "h6": 6}
# Not "head": what it holds is skipped by itself (scripts and styles here, the title kept
# apart, the rest void), and a page whose head is never closed keeps its body.
_SKIP = {"script", "style", "noscript", "template", "svg", "title"}
_CELL = {"td", "th"}
_SPACE = re.compile(r"\s+")


# libxml2's HTML parser builds the tree a browser would from real-world markup (unclosed
# paragraphs and heads, stray end tags); bytes in, so a page that declares its encoding
# in an XML prolog is read too. huge_tree: a long page is no attack on a desktop.
_PARSER = lxml_html.HTMLParser(
    encoding="utf-8", remove_comments=True, remove_pis=True, huge_tree=True
)


class _Renderer:
    """Visible text from the tree's start and end events, a paragraph per block."""

    def __init__(self) -> None:
        self.out: list[str] = []
        self.size = 0
        self.line: list[str] = []
        self.headings: list[Heading] = []
        self.skip_depth = 0
        self.pre_depth = 0
        self.head_level = 0

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

    def start(self, tag: str) -> None:
        if tag in _SKIP:
            self.skip_depth += 1
            return
        if self.skip_depth:
            return
        if tag in _BLOCK or tag in _HEAD:
            self._flush()
        elif tag in _CELL and "".join(self.line).strip():
            self.line.append(CELL_SEP)
        if tag in _HEAD:
            self.head_level = _HEAD[tag]
        if tag == "pre":
            self.pre_depth += 1

    def end(self, tag: str) -> None:
        if tag in _SKIP:
            self.skip_depth = max(0, self.skip_depth - 1)
            return
        if self.skip_depth:
            return
        if tag in _BLOCK or tag in _HEAD:
            self._flush()
        if tag in _HEAD:
            self.head_level = 0
        if tag == "pre":
            self.pre_depth = max(0, self.pre_depth - 1)

    def data(self, text: str | None) -> None:
        if text and not self.skip_depth:
            self.line.append(text)


def render_html(raw: str) -> tuple[str, list[Heading], str]:
    """Markup to (visible text, its h1-h6 headings, the <title>)."""
    try:
        root = lxml_html.document_fromstring(raw.encode("utf-8", "replace"), parser=_PARSER)
    except etree.ParserError:  # nothing but whitespace or comments: an empty page
        return "", [], ""
    r = _Renderer()
    for event, el in etree.iterwalk(root, events=("start", "end")):
        tag = el.tag if isinstance(el.tag, str) else ""
        if event == "start":
            r.start(tag)
            r.data(el.text)
        else:
            r.end(tag)
            r.data(el.tail)  # the text after an element belongs to its parent
    r._flush()
    title = root.find(".//title")
    return (
        "".join(r.out),
        r.headings,
        _SPACE.sub(" ", title.text_content()).strip() if title is not None else "",
    )


def extract_html(path: Path) -> Extracted:
    raw, warnings = decode(path.read_bytes(), path.name)
    text, headings, title = render_html(raw)
    if not title:
        title = next((h.title for h in headings if h.level == 1), "") or title_from_name(path)
    return Extracted(text=text, title=title, kind="html", headings=headings, warnings=warnings)
