"""Chunk: strategy E of the seed chapter, with offsets found in the canonical text.

Sections by heading; whole paragraphs packed up to the target; a paragraph longer than the
target is cut only at sentence boundaries. Each chunk has `content` (its own words, what is
quoted; always `canonical[char_from:char_to]`) and `text` (`[Title > Section]` + content,
what is embedded). A chunk whose `text` is longer than the encoder window is split again
and counted, never silently truncated.
"""

from __future__ import annotations

import bisect
import math
import re
from collections.abc import Callable
from dataclasses import dataclass, field

from .config import ChunkOptions
from .extract.base import Extracted, Heading, Page

_PARA_SEP = re.compile(r"\n[ \t\r\f\v]*\n")
# Linear on any input: a run of terminal marks is matched once from its first mark
# (lookbehind) and never re-tried shorter (possessive), so "....." of any length is O(n).
_TERMINAL = re.compile(
    r"(?<![.!?…])(?:[.!?…]++[\"'”’»)\]]*+|[。！？]++)(?=\s|$)|(?<![。！？])[。！？]++|\n"
)
_SPACE_RUN = re.compile(r"\s+")
_LIST_ITEM = re.compile(r"[ \t]*(?:[-*+•|>]|\d{1,3}[.)])\s")
_OPENERS = "\"'“‘«([¿¡"
# Words after which a period is not the end of a sentence.
_ABBREV = {
    "mr", "mrs", "ms", "dr", "prof", "sr", "jr", "st", "vs", "e.g", "i.e", "cf", "fig", "figs",
    "no", "nos", "vol", "pp", "p", "ch", "sec", "inc", "ltd", "co", "corp", "gen", "col", "lt",
    "sgt", "capt", "rev", "hon", "approx", "est", "dept", "univ", "al", "ed", "eds", "mt", "ft",
    "jan", "feb", "mar", "apr", "jun", "jul", "aug", "sep", "sept", "oct", "nov", "dec", "u.s",
    "u.k", "a.m", "p.m", "ca", "c", "op", "viz", "resp", "eq", "eqs", "ref", "refs",
}  # fmt: skip

TokenCounter = Callable[[str], int]
DEFAULT_OPTIONS = ChunkOptions()


@dataclass(frozen=True)
class Chunk:
    seq: int
    section: str
    char_from: int
    char_to: int
    content: str
    text: str
    page_from: int | None = None
    page_to: int | None = None
    tokens: int | None = None


@dataclass
class Chunked:
    chunks: list[Chunk] = field(default_factory=list)
    split_for_window: int = 0
    header_tokens: int = 0
    total_tokens: int = 0


def _is_boundary(text: str, punct_start: int, cut: int) -> bool:
    """Is the terminal punctuation at punct_start really the end of a sentence?"""
    if text[punct_start] == "\n":
        # A line break inside a paragraph ends a sentence only where a list or table row
        # starts; elsewhere it is wrapping ("O\n2" in a formula must stay whole).
        return _LIST_ITEM.match(text, cut) is not None
    if text[punct_start] in "。！？":
        return True
    j = cut
    while j < len(text) and text[j].isspace():
        j += 1
    if j >= len(text):
        return True
    nxt = text[j]
    if nxt in _OPENERS and j + 1 < len(text):
        nxt = text[j + 1]
    if not (nxt.isupper() or nxt.isdigit()):
        return False
    if text[punct_start] == ".":
        k = punct_start
        while k > 0 and not text[k - 1].isspace() and text[k - 1] not in _OPENERS:
            k -= 1
        word = text[k:punct_start].lower()
        if word in _ABBREV or (len(word) == 1 and word.isalpha()):
            return False
    return True


def sentence_spans(text: str, start: int, end: int) -> list[tuple[int, int]]:
    """Contiguous pieces covering [start, end); each ends after a sentence's trailing space."""
    spans = []
    pos = start
    for m in _TERMINAL.finditer(text, start, end):
        cut = m.end()
        while cut < end and text[cut].isspace():
            cut += 1
        if cut >= end or cut <= pos:
            continue
        if _is_boundary(text, m.start(), m.end()):
            spans.append((pos, cut))
            pos = cut
    if pos < end:
        spans.append((pos, end))
    return spans


def _trim(text: str, a: int, b: int) -> tuple[int, int]:
    while a < b and text[a].isspace():
        a += 1
    while b > a and text[b - 1].isspace():
        b -= 1
    return a, b


class _Excluded:
    """Sorted, merged ranges that are never chunked (heading lines, running headers)."""

    def __init__(self, ranges: list[tuple[int, int]]) -> None:
        merged: list[list[int]] = []
        for a, b in sorted(r for r in ranges if r[1] > r[0]):
            if merged and a <= merged[-1][1]:
                merged[-1][1] = max(merged[-1][1], b)
            else:
                merged.append([a, b])
        self.starts = [a for a, _ in merged]
        self.ranges = merged

    def touches(self, a: int, b: int) -> bool:
        """Does any excluded range lie inside [a, b)? Packing never spans one."""
        i = bisect.bisect_left(self.starts, a)
        return i < len(self.starts) and self.starts[i] < b

    def cut(self, a: int, b: int) -> list[tuple[int, int]]:
        out = []
        i = max(0, bisect.bisect_right(self.starts, a) - 1)
        pos = a
        while i < len(self.ranges) and self.ranges[i][0] < b:
            x, y = self.ranges[i]
            if y > pos:
                if x > pos:
                    out.append((pos, x))
                pos = max(pos, y)
            i += 1
        if pos < b:
            out.append((pos, b))
        return out


def paragraph_spans(text: str, start: int, end: int, excluded: _Excluded) -> list[tuple[int, int]]:
    raw = []
    pos = start
    for m in _PARA_SEP.finditer(text, start, end):
        raw.append((pos, m.start()))
        pos = m.end()
    raw.append((pos, end))
    out = []
    for a, b in raw:
        for x, y in excluded.cut(a, b):
            x, y = _trim(text, x, y)
            if y > x:
                out.append((x, y))
    return out


@dataclass(frozen=True)
class _Section:
    start: int
    end: int
    path: str


def _sections(ex: Extracted) -> list[_Section]:
    heads = sorted(ex.headings, key=lambda h: h.at)
    out: list[_Section] = []
    stack: list[Heading] = []
    first = heads[0].at if heads else len(ex.text)
    if first > 0:
        out.append(_Section(0, first, ""))
    for i, h in enumerate(heads):
        while stack and stack[-1].level >= h.level:
            stack.pop()
        stack.append(h)
        titles = [s.title for s in stack]
        if titles and titles[0].casefold() == ex.title.casefold():
            titles = titles[1:]
        end = heads[i + 1].at if i + 1 < len(heads) else len(ex.text)
        out.append(_Section(h.end, max(h.end, end), " > ".join(titles)))
    return out


def _header(title: str, section: str) -> str:
    return f"[{title} > {section}]\n" if section else f"[{title}]\n"


class _PageMap:
    def __init__(self, pages: list[Page]) -> None:
        self.pages = sorted(pages, key=lambda p: p.char_from)
        self.starts = [p.char_from for p in self.pages]

    def page_at(self, offset: int) -> int | None:
        if not self.pages:
            return None
        i = max(0, bisect.bisect_right(self.starts, offset) - 1)
        return self.pages[i].number


def _bounded(text: str, spans: list[tuple[int, int]], target: int) -> list[tuple[int, int]]:
    """Sentences longer than the target (a run-on line, a table dumped as one line) are
    cut at the last space before each target-sized step, or hard at the target where
    there is none, so no later stage ever handles more than about a target's worth."""
    out: list[tuple[int, int]] = []
    for a, b in spans:
        while b - a > target:
            cut = None
            for m in _SPACE_RUN.finditer(text, a + target // 2, a + target):
                cut = m.end()
            cut = cut if cut is not None and a < cut < b else a + target
            out.append((a, cut))
            a = cut
        out.append((a, b))
    return out


def _split_middle(text: str, a: int, b: int) -> int:
    """Where to cut [a, b) in two: the sentence boundary, else the space, nearest the middle."""
    mid = (a + b) // 2
    cuts = [s for s, _ in sentence_spans(text, a, b)[1:]]
    if not cuts:
        cuts = [m.end() for m in re.finditer(r"\s+", text[a:b])]
        cuts = [a + c for c in cuts if a < a + c < b]
    if not cuts:
        return mid
    return min(cuts, key=lambda c: abs(c - mid))


def chunk_document(
    ex: Extracted,
    opts: ChunkOptions = DEFAULT_OPTIONS,
    count_tokens: TokenCounter | None = None,
    window: int | None = None,
) -> Chunked:
    text = ex.text
    result = Chunked()
    pages = _PageMap(ex.pages)
    excluded = _Excluded([(h.at, h.end) for h in ex.headings] + list(ex.skip))
    header_tokens_cache: dict[str, int] = {}

    def emit(a: int, b: int, section: str) -> None:
        a, b = _trim(text, a, b)
        if b <= a:
            return
        content = text[a:b]
        head = _header(ex.title, section) if opts.header else ""
        full = head + content
        tokens = None
        if count_tokens is not None:
            tokens = count_tokens(full)
            if window is not None and tokens > window and b - a > 1:
                cut = _split_middle(text, a, b)
                if a < cut < b:
                    result.split_for_window += 1
                    emit(a, cut, section)
                    emit(cut, b, section)
                    return
            if head:
                if head not in header_tokens_cache:
                    header_tokens_cache[head] = count_tokens(head) - 2  # minus [CLS]/[SEP]
                result.header_tokens += header_tokens_cache[head]
            result.total_tokens += min(tokens, window or tokens)
        p_to = b - 1 if b > a else a
        result.chunks.append(
            Chunk(
                len(result.chunks),
                section,
                a,
                b,
                content,
                full,
                pages.page_at(a),
                pages.page_at(p_to),
                tokens,
            )  # fmt: skip
        )

    if opts.blind:
        sections = _sections(ex)
        starts = [s.start for s in sections]
        for a in range(0, len(text), opts.target):
            i = max(0, bisect.bisect_right(starts, a) - 1)
            emit(a, min(len(text), a + opts.target), sections[i].path if sections else "")
        return result

    for sec in _sections(ex):
        first = len(result.chunks)
        open_: tuple[int, int] | None = None
        for pf, pt in paragraph_spans(text, sec.start, sec.end, excluded):
            if pt - pf > opts.target:
                if open_:
                    emit(*open_, sec.path)
                    open_ = None
                cur: tuple[int, int] | None = None
                # balanced: n pieces of about equal size rather than full pieces + a runt
                goal = (pt - pf) / math.ceil((pt - pf) / opts.target) if opts.balanced else 1e18
                for sf, st in _bounded(text, sentence_spans(text, pf, pt), opts.target):
                    if cur and (st - cur[0] > opts.target or sf - cur[0] >= goal):
                        emit(*cur, sec.path)
                        cur = None
                    cur = (cur[0], st) if cur else (sf, st)
                if cur:
                    emit(*cur, sec.path)
                continue
            # Never pack across a running header or a page break: a citation's page is
            # then the one page the whole fragment is on.
            if open_ and (
                pt - open_[0] > opts.target
                or excluded.touches(open_[1], pf)
                or pages.page_at(open_[0]) != pages.page_at(pf)
            ):
                emit(*open_, sec.path)
                open_ = None
            open_ = (open_[0], pt) if open_ else (pf, pt)
        if open_:
            emit(*open_, sec.path)
        if opts.overlap > 0:
            _add_overlap(result, first, text, opts, ex.title)
    return result


def _add_overlap(result: Chunked, first: int, text: str, opts: ChunkOptions, title: str) -> None:
    """Extend each chunk of a section back into its predecessor by up to `overlap` chars."""
    for i in range(first + 1, len(result.chunks)):
        prev, cur = result.chunks[i - 1], result.chunks[i]
        a = max(prev.char_from, cur.char_from - opts.overlap)
        space = text.find(" ", a, cur.char_from)
        a = space + 1 if space != -1 else cur.char_from
        a, _ = _trim(text, a, cur.char_to)
        content = text[a : cur.char_to]
        head = _header(title, cur.section) if opts.header else ""
        result.chunks[i] = Chunk(
            cur.seq, cur.section, a, cur.char_to, content, head + content,
            cur.page_from if a >= prev.char_to else prev.page_to, cur.page_to, cur.tokens,
        )  # fmt: skip
