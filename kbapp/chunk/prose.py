"""Prose: strategy E of the seed chapter, with offsets found in the canonical text.

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
from dataclasses import dataclass, replace

from ..config import ChunkOptions
from ..extract.base import Extracted, Heading, Page, SheetRow
from ..extract.sheet import sheet_locator
from ..words import words
from .base import DEFAULT_OPTIONS, MIN_WORDS, Chunk, Chunked, TokenCounter, header, trim, word_count
from .code import chunk_code
from .sentences import bounded, sentence_spans, split_middle

_PARA_SEP = re.compile(r"\n[ \t\r\f\v]*\n")


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
            x, y = trim(text, x, y)
            if y > x:
                out.append((x, y))
    return out


@dataclass(frozen=True)
class _Section:
    start: int
    end: int
    path: str
    # the heading's own characters when the section has no subsection: a heading with
    # nothing under it (a slide that is only its title) is then its own passage
    leaf_head: tuple[int, int] | None = None


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
        # The title as the first heading is said once: also where a PDF's outline spells
        # it with other quotes or case ("What’s New In Python 3.9" / "What's New in ...").
        if titles and words(titles[0]) == words(ex.title):
            titles = titles[1:]
        end = heads[i + 1].at if i + 1 < len(heads) else len(ex.text)
        leaf = i + 1 == len(heads) or heads[i + 1].level <= h.level
        out.append(_Section(h.end, max(h.end, end), " > ".join(titles),
                            (h.at, h.end) if leaf and h.end > h.at else None))  # fmt: skip
    return out


class _PageMap:
    def __init__(self, pages: list[Page]) -> None:
        self.pages = sorted(pages, key=lambda p: p.char_from)
        self.starts = [p.char_from for p in self.pages]

    def page_at(self, offset: int) -> int | None:
        if not self.pages:
            return None
        i = max(0, bisect.bisect_right(self.starts, offset) - 1)
        return self.pages[i].number


class _Readings:
    """The printed ranges that are read in another form (Extracted.readings): a passage's
    text with each reading it holds whole in place of its printed characters."""

    def __init__(self, readings: list[tuple[int, int, str]]) -> None:
        self.readings = readings
        self.starts = [a for a, _, _ in readings]
        self.ends = [b for _, b, _ in readings]
        self.longer = [0]  # how much longer the readings up to each are than their print
        for a, b, reading in readings:
            self.longer.append(self.longer[-1] + len(reading) - (b - a))

    def size(self, a: int, b: int) -> int:
        """The length of [a, b) as read: what a passage is packed by."""
        if not self.readings:
            return b - a
        i = bisect.bisect_left(self.starts, a)
        j = bisect.bisect_right(self.ends, b)
        return b - a + (self.longer[j] - self.longer[i] if j > i else 0)

    def read(self, text: str, a: int, b: int) -> str | None:
        """[a, b) as read, or None where it holds no reading."""
        i = bisect.bisect_left(self.starts, a)
        out: list[str] = []
        at = a
        while i < len(self.readings) and self.readings[i][0] < b:
            ra, rb, reading = self.readings[i]
            if rb <= b:
                out += [text[at:ra], reading]
                at = rb
            i += 1
        if not out:
            return None
        out.append(text[at:b])
        return "".join(out)


class _RowMap:
    """Spreadsheet rows by offset: the A1 range of the rows a chunk covers."""

    def __init__(self, rows: list[SheetRow]) -> None:
        self.rows = rows
        self.ends = [r.char_to for r in rows]

    def locator(self, a: int, b: int) -> str | None:
        if not self.rows:
            return None
        i = bisect.bisect_right(self.ends, a)
        covered = []
        while i < len(self.rows) and self.rows[i].char_from < b:
            covered.append(self.rows[i])
            i += 1
        return sheet_locator(covered)[0] if covered else None


def chunk_document(
    ex: Extracted,
    opts: ChunkOptions = DEFAULT_OPTIONS,
    count_tokens: TokenCounter | None = None,
    window: int | None = None,
) -> Chunked:
    if ex.symbols is not None:
        return chunk_code(ex, opts, count_tokens, window)
    text = ex.text
    result = Chunked()
    pages = _PageMap(ex.pages)
    rows = _RowMap(ex.rows)
    readings = _Readings(ex.readings)
    excluded = _Excluded([(h.at, h.end) for h in ex.headings] + [(a, b) for a, b, _ in ex.skip])
    header_tokens_cache: dict[str, int] = {}

    def emit(a: int, b: int, section: str) -> None:
        a, b = trim(text, a, b)
        if b <= a:
            return
        content = text[a:b]
        head = header(ex.title, section) if opts.header else ""
        body = readings.read(text, a, b)
        full = head + (content if body is None else body)
        tokens = None
        if count_tokens is not None:
            tokens = count_tokens(full)
            if window is not None and tokens > window and b - a > 1:
                cut = split_middle(text, a, b)
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
                rows.locator(a, b),
                body=body,
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
        spans: list[tuple[int, int]] = []
        open_: tuple[int, int] | None = None
        for pf, pt in paragraph_spans(text, sec.start, sec.end, excluded):
            if pt - pf > opts.target:
                if open_:
                    spans.append(open_)
                    open_ = None
                cur: tuple[int, int] | None = None
                # balanced: n pieces of about equal size rather than full pieces + a runt
                goal = (pt - pf) / math.ceil((pt - pf) / opts.target) if opts.balanced else 1e18
                for sf, st in bounded(text, sentence_spans(text, pf, pt), opts.target):
                    if cur and (st - cur[0] > opts.target or sf - cur[0] >= goal):
                        spans.append(cur)
                        cur = None
                    cur = (cur[0], st) if cur else (sf, st)
                if cur:
                    spans.append(cur)
                continue
            # Never pack across a running header or a page break: a citation's page is
            # then the one page the whole fragment is on.
            if open_ and (
                readings.size(open_[0], pt) > opts.target
                or excluded.touches(open_[1], pf)
                or pages.page_at(open_[0]) != pages.page_at(pf)
            ):
                spans.append(open_)
                open_ = None
            open_ = (open_[0], pt) if open_ else (pf, pt)
        if open_:
            spans.append(open_)
        if not spans and sec.leaf_head and word_count(text[slice(*sec.leaf_head)]) >= MIN_WORDS:
            spans.append(sec.leaf_head)  # the heading is all there is: it is findable
        for a, b in merge_thin(text, spans, excluded, opts.target, readings):
            emit(a, b, sec.path)
        if opts.overlap > 0:
            _add_overlap(result, first, text, opts, ex.title, count_tokens, window, readings)
    return result


# A passage holds real content: at least this many words (a run of two or more letters, or


def merge_thin(text: str, spans: list[tuple[int, int]], excluded: _Excluded,
               target: int, readings: _Readings) -> list[tuple[int, int]]:  # fmt: skip
    """Each thin span joins a neighbour in its section instead of standing alone (nothing is
    dropped): the next one where nothing excluded lies between, else the previous one. A
    section with nothing else keeps it, and a run of thin spans (a column of numbers) stands
    as its own passage once it reaches the target size. A span is weighed as it is read (a
    table's row of numbers, read with its headers, is no thin span). Linear in the number
    of spans."""
    out: list[tuple[int, int]] = []
    carry: tuple[int, int, int] | None = None  # thin text waiting to join the next span
    for a, b in spans:
        a, b = trim(text, a, b)
        if b <= a:
            continue
        read = readings.read(text, a, b)
        words = word_count(text[a:b] if read is None else read)
        if carry is not None:
            if not out or not excluded.touches(carry[1], a):
                a, words = carry[0], min(MIN_WORDS, words + carry[2])
            else:
                out[-1] = (out[-1][0], carry[1])
            carry = None
        if words < MIN_WORDS and b - a < target:
            carry = (a, b, words)
        else:
            out.append((a, b))
    if carry is not None:
        if out:
            out[-1] = (out[-1][0], carry[1])
        else:
            out.append(carry[:2])
    return out


def _add_overlap(result: Chunked, first: int, text: str, opts: ChunkOptions, title: str,
                 count_tokens: TokenCounter | None, window: int | None,
                 readings: _Readings) -> None:  # fmt: skip
    """Extend each chunk of a section back into its predecessor by up to `overlap` chars,
    less where the longer text would no longer fit the encoder window."""
    for i in range(first + 1, len(result.chunks)):
        prev, cur = result.chunks[i - 1], result.chunks[i]
        head = header(title, cur.section) if opts.header else ""
        reach = opts.overlap
        while reach > 0:
            a = max(prev.char_from, cur.char_from - reach)
            space = text.find(" ", a, cur.char_from)
            a = space + 1 if space != -1 else cur.char_from
            a, _ = trim(text, a, cur.char_to)
            content = text[a : cur.char_to]
            body = readings.read(text, a, cur.char_to)
            full = head + (content if body is None else body)
            tokens = count_tokens(full) if count_tokens is not None else None
            if tokens is None or window is None or tokens <= window or a >= cur.char_from:
                break
            reach //= 2
        if reach <= 0 or a >= cur.char_from:
            continue
        result.chunks[i] = replace(
            cur, char_from=a, content=content, text=full, tokens=tokens, body=body,
            page_from=cur.page_from if a >= prev.char_to else prev.page_to,
        )  # fmt: skip
