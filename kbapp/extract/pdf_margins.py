"""What stands in a PDF's margins across pages (running heads and feet, page numbers) and
which pages are contents or index pages: kept in the text, never in passages."""

from __future__ import annotations

import re
from collections import Counter

from .base import PAGE_NUMBER, RUNNING_HEAD
from .pdf_layout import PageLayout


def _norm_key(text: str) -> str:
    return re.sub(r"\d+", "#", " ".join(text.lower().split()))


_PAGE_NUMBER = re.compile(r"(?:page\s+)?(?:\d{1,5}|[ivxlcdm]{1,8})(?:\s*(?:/|of)\s*\d{1,5})?", re.I)
# A contents or index entry: a title, a run of dot leaders, a page number ("Lists . . . 26").
_LEADER = re.compile(r"(?:\.\s{0,3}){4,}\s*(?:\d{1,5}|[ivxlcdm]{1,8})\b", re.I)
_EDGE_NUMBER = re.compile(r"^(\d{1,5})\b|\b(\d{1,5})$")
RUNNING_MIN_PAGES = 3  # a chapter's running head repeats on a few pages, not on most
MARGIN = 0.09  # of the page height: where running heads, feet and page numbers stand


def margin_blocks(layouts: list[tuple[PageLayout, float]]) -> list[dict[int, str]]:
    """Per page, what each block in the top or bottom margin is, when it is not text: a page
    number, or a running head or foot (the same words, numbers aside, on several pages)."""
    per_page: list[list[tuple[int, str]]] = []
    counts: Counter[str] = Counter()
    for layout, height in layouts:
        cands = []
        last = len(layout.blocks) - 1
        for i, b in enumerate(layout.blocks):
            # Inside the top or bottom margin, among the first or last two blocks, short.
            near_edge = b.bbox[3] <= height * MARGIN or b.bbox[1] >= height * (1 - MARGIN)
            outer = i <= 1 or i >= last - 1
            if near_edge and outer and len(b.text) <= 120:
                cands.append((i, _norm_key(b.text)))
        per_page.append(cands)
        counts.update({k for _, k in cands})
    need = RUNNING_MIN_PAGES if len(layouts) >= RUNNING_MIN_PAGES else len(layouts) + 1
    # A head that carries the page number ("Chapter 13: Packages 84") is one even when its
    # words are on a single page: its number runs with the page's (printed = index + offset).
    offsets: Counter[int] = Counter()
    numbered: list[dict[int, int]] = []
    for pno, ((layout, _), cands) in enumerate(zip(layouts, per_page, strict=True)):
        nums = {}
        for i, _k in cands:
            m = _EDGE_NUMBER.search(layout.blocks[i].text)
            if m:
                nums[i] = int(m.group(1) or m.group(2)) - pno
        numbered.append(nums)
        offsets.update(set(nums.values()))
    page_offsets = {o for o, c in offsets.items() if c >= need}
    out: list[dict[int, str]] = []
    for layout, cands, nums in zip((lay for lay, _ in layouts), per_page, numbered, strict=True):
        kinds: dict[int, str] = {}
        for i, k in cands:
            if _PAGE_NUMBER.fullmatch(layout.blocks[i].text.strip()):
                kinds[i] = PAGE_NUMBER
            elif counts[k] >= need or nums.get(i) in page_offsets:
                kinds[i] = RUNNING_HEAD
        out.append(kinds)
    return out


_REF = re.compile(r"(\d{1,4})(?:[–-]\d{1,4})?(,?)")  # a page reference: "12", "45–47,"
_FILL = re.compile(r"[.·…_]+")  # leader dots standing as words of their own


def _entry(line: str, last_page: int) -> tuple[int, str] | None:
    """A contents or index line: words, then page references ("Ableitung 12, 45–47",
    "2.1 Grundlagen . . . 7"): (its last page, its first letter). A line with two bare
    numbers at its end is a table row ("Staff 45 48"), not an entry."""
    words = [w for w in line.split() if not _FILL.fullmatch(w)]
    refs = []
    while words and (m := _REF.fullmatch(words[-1].rstrip(".…·"))):
        if refs and not m.group(2):  # only a list of references is comma-separated
            return None
        refs.append(int(m.group(1)))
        words.pop()
    if not refs or refs[0] > last_page or not words:
        return None
    letters = [ch for ch in " ".join(words) if ch.isalpha()]
    return (refs[0], letters[0].casefold()) if letters else None


def _ordered(values: list) -> float:
    return sum(b >= a for a, b in zip(values, values[1:], strict=False)) / max(1, len(values) - 1)


def contents_page(layout: PageLayout, margin: dict[int, str], last_page: int) -> bool:
    """A table of contents or an index page: most of its text is entries with dot leaders,
    or most of its lines are entries whose page numbers rise (contents) or whose words
    run in alphabetical order (an index), with or without leaders."""
    body = [b for i, b in enumerate(layout.blocks) if i not in margin]
    total = sum(len(b.text) for b in body)
    listed = sum(len(b.text) for b in body if _LEADER.search(b.text))
    if total > 0 and listed >= total * 0.5:
        return True
    lines = [line for b in body for line in b.lines if any(ch.isalpha() for ch in line)]
    entries = [e for e in (_entry(line, last_page) for line in lines) if e]
    if len(entries) < 6 or len(entries) < 0.5 * len(lines):
        return False
    return max(_ordered([p for p, _ in entries]), _ordered([a for _, a in entries])) >= 0.75
