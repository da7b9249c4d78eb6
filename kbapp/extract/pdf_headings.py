"""A PDF's headings: outline entries found where the page prints them as a heading (not
inside a sentence), else blocks set in a larger font."""

from __future__ import annotations

import bisect
import re
from collections import Counter

import pymupdf

from ..words import fold
from .base import Heading, Page
from .pdf_layout import Block

# A heading's block may open with its number or label: "5", "6.2", "Appendix A", "Chapter 3.".
_HEAD_PREFIX = (
    r"(?:(?:chapter|appendix|part|section|annex)\s+)?"
    r"(?:(?:\d{1,3}|[A-Z]|[ivxlc]{1,6})(?:\.\d{1,3})*\.?\s+)?"
)


def _find_title(text: str, title: str, start: int, end: int,
                blocks: list[tuple[int, int]]) -> tuple[int, int] | None:  # fmt: skip
    """The heading where it stands as a heading: a block of its own, holding the title and
    at most its number; never the same words inside a sentence or a running head. Compared
    folded ("Conﬁguring" is "Configuring"; "staﬀappears", whose ligature swallowed the
    space, is "staff appears")."""
    words = _quotes(fold(title)).split()
    if not words:
        return None
    pattern = re.compile(_HEAD_PREFIX + r"[.:]?\s*".join(re.escape(w) for w in words) + r"[.:]?",
                         re.I)  # fmt: skip
    i = bisect.bisect_left(blocks, (start, -1))
    while i < len(blocks) and blocks[i][0] < end:
        a, b = blocks[i][:2]
        if b - a <= 4 * len(title) + 40 and pattern.fullmatch(_quotes(fold(text[a:b]))):
            return a, b
        i += 1
    return None


# Outlines write quotes as TeX does (`gcc', ``Any''), pages print them curly (‘gcc’, “Any”).
_QUOTE_MARKS = str.maketrans({"`": "'", "‘": "'", "’": "'", "´": "'", '"': "''", "“": "''",
                              "”": "''"})  # fmt: skip


def _quotes(text: str) -> str:
    return text.translate(_QUOTE_MARKS)


def toc_headings(doc: pymupdf.Document, text: str, pages: list[Page],
                  blocks: list[tuple[int, int, float]]) -> list[Heading]:  # fmt: skip
    """The outline's entries where they stand. A title printed as a heading is found;
    one the page does not print (an outline worded otherwise) starts where the entry
    points on its page, the first block below its destination: not at the page's top,
    where it took the end of the section before."""
    heads = []
    for level, title, pno, dest in doc.get_toc(simple=False):
        if not (1 <= pno <= len(pages)) or not title.strip():
            continue
        p = pages[pno - 1]
        # The outline's page can be one early or late (a heading at a page's foot).
        lo = pages[max(0, pno - 2)].char_from
        span = _find_title(text, title, p.char_from, p.char_to, blocks) or _find_title(
            text, title, lo, pages[min(len(pages), pno + 1) - 1].char_to, blocks)
        if span is None:
            at = _below(_point_from_top(doc, pno - 1, dest), p, blocks)
            span = (at, at)
        heads.append(Heading(*span, level, title.strip()))
    heads.sort(key=lambda h: (h.at, h.level))
    return heads


def _point_from_top(doc: pymupdf.Document, pno: int, dest: dict) -> float | None:
    """How far below the page's top an outline entry's destination shows, or None when it
    names only the page. PyMuPDF turns a direct destination's point to the page's top-down
    coordinates but gives a named one (what LaTeX and Texinfo write) as the PDF has it,
    from the page's foot."""
    to = dest.get("to") if isinstance(dest, dict) else None
    if to is None or to.y <= 0:
        return None
    if dest.get("kind") == pymupdf.LINK_NAMED:
        return doc[pno].rect.height - to.y
    return to.y


def _below(y: float | None, page: Page, blocks: list[tuple[int, int, float]]) -> int:
    """Where an outline entry's destination falls in the page's text: the first block
    that reaches below the point the entry shows at the window's top; the page's start
    when the entry names only the page."""
    if y is None:
        return page.char_from
    i = bisect.bisect_left(blocks, (page.char_from, -1))
    while i < len(blocks) and blocks[i][0] < page.char_to:
        a, _, bottom = blocks[i]
        if bottom > y + 1:
            return a
        i += 1
    return page.char_to


def font_headings(blocks: list[tuple[int, Block]]) -> list[Heading]:
    """Headings from font size when the document has no outline."""
    sizes: Counter[float] = Counter()
    for _, b in blocks:
        sizes[round(b.size, 1)] += len(b.text)
    if not sizes:
        return []
    body = sizes.most_common(1)[0][0]
    cands = [
        (off, b)
        for off, b in blocks
        if b.size >= body * 1.2 and 2 <= len(b.text) <= 150 and not b.text.strip().isdigit()
    ]
    levels = sorted({round(b.size, 1) for _, b in cands}, reverse=True)[:3]
    return [
        Heading(off + b.start, off + b.end, levels.index(round(b.size, 1)) + 1, b.text.strip())
        for off, b in cands
        if round(b.size, 1) in levels
    ]
