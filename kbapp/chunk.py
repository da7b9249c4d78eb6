"""Chunk: strategy E of the seed chapter, with offsets found in the canonical text.

Sections by heading; whole paragraphs packed up to the target; a paragraph longer than the
target is cut only at sentence boundaries. Each chunk has `content` (its own words, what is
quoted; always `canonical[char_from:char_to]`) and `text` (`[Title > Section]` + content,
what is embedded). A chunk whose `text` is longer than the encoder window is split again
and counted, never silently truncated.
"""

from __future__ import annotations

import bisect
import itertools
import math
import re
from collections.abc import Callable
from dataclasses import dataclass, field, replace

from .config import ChunkOptions
from .extract.base import Extracted, Heading, Page, SheetRow, Symbol
from .extract.sheet import sheet_locator
from .fold import words

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
    locator: str | None = None  # the source's own address: "sheet=S&range=A1:C9", "line=10,20" (lines 10 to 20)
    symbol: str | None = None  # code: the definition(s) the chunk holds
    line_from: int | None = None  # code: 1-based first and last line
    line_to: int | None = None


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


def sentence_spans(
    text: str, start: int, end: int, lines: bool = True,
) -> list[tuple[int, int]]:  # fmt: skip
    """Contiguous pieces covering [start, end); each ends after a sentence's trailing space.
    `lines`: a list item or table row starting on a new line is a piece of its own."""
    spans = []
    pos = start
    for m in _TERMINAL.finditer(text, start, end):
        cut = m.end()
        while cut < end and text[cut].isspace():
            cut += 1
        if cut >= end or cut <= pos:
            continue
        if text[m.start()] == "\n" and not lines:
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
    if ex.symbols is not None:
        return chunk_code(ex, opts, count_tokens, window)
    text = ex.text
    result = Chunked()
    pages = _PageMap(ex.pages)
    rows = _RowMap(ex.rows)
    excluded = _Excluded([(h.at, h.end) for h in ex.headings] + [(a, b) for a, b, _ in ex.skip])
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
                rows.locator(a, b),
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
                for sf, st in _bounded(text, sentence_spans(text, pf, pt), opts.target):
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
                pt - open_[0] > opts.target
                or excluded.touches(open_[1], pf)
                or pages.page_at(open_[0]) != pages.page_at(pf)
            ):
                spans.append(open_)
                open_ = None
            open_ = (open_[0], pt) if open_ else (pf, pt)
        if open_:
            spans.append(open_)
        if not spans and sec.leaf_head and _words(text[slice(*sec.leaf_head)]) >= MIN_WORDS:
            spans.append(sec.leaf_head)  # the heading is all there is: it is findable
        for a, b in merge_thin(text, spans, excluded, opts.target):
            emit(a, b, sec.path)
        if opts.overlap > 0:
            _add_overlap(result, first, text, opts, ex.title, count_tokens, window)
    return result


# A passage holds real content: at least this many words (a run of two or more letters, or
# one CJK character). "14", "7.2", "Penguin, London." alone are never a search result.
MIN_WORDS = 3
_CJK = "\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff"
_WORD = re.compile(f"[{_CJK}]|[^\\W\\d_{_CJK}]{{2,}}")


def _words(content: str) -> int:
    """Words in content, counted up to MIN_WORDS (enough to know it is not thin)."""
    return sum(1 for _ in itertools.islice(_WORD.finditer(content), MIN_WORDS))


def thin(content: str) -> bool:
    """Too few words to stand alone as a passage."""
    return _words(content) < MIN_WORDS


def sentence_texts(chunk: Chunk) -> list[str]:
    """What the encoder reads for each sentence of a passage of two or more sentences: the
    passage's header, then the sentence. Search scores a passage by its closest sentence as
    well as by itself (search/engine.py), so an answer that is one sentence of a passage
    about other things is not averaged away. A list or table inside a sentence stays in it,
    and a piece of fewer than MIN_WORDS words ("See Fig. 3.") is not read on its own; []
    for a passage of one sentence."""
    header = chunk.text[: len(chunk.text) - len(chunk.content)]
    if not chunk.text.endswith(chunk.content):
        header = ""
    spans = sentence_spans(chunk.content, 0, len(chunk.content), lines=False)
    found = [chunk.content[a:b].strip() for a, b in spans]
    found = [s for s in found if not thin(s)]
    return [header + s for s in found] if len(found) > 1 else []


def merge_thin(text: str, spans: list[tuple[int, int]], excluded: _Excluded,
               target: int) -> list[tuple[int, int]]:  # fmt: skip
    """Each thin span joins a neighbour in its section instead of standing alone (nothing is
    dropped): the next one where nothing excluded lies between, else the previous one. A
    section with nothing else keeps it, and a run of thin spans (a column of numbers) stands
    as its own passage once it reaches the target size. Linear in the number of spans."""
    out: list[tuple[int, int]] = []
    carry: tuple[int, int, int] | None = None  # thin text waiting to join the next span
    for a, b in spans:
        a, b = _trim(text, a, b)
        if b <= a:
            continue
        words = _words(text[a:b])
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
                 count_tokens: TokenCounter | None, window: int | None) -> None:  # fmt: skip
    """Extend each chunk of a section back into its predecessor by up to `overlap` chars,
    less where the longer text would no longer fit the encoder window."""
    for i in range(first + 1, len(result.chunks)):
        prev, cur = result.chunks[i - 1], result.chunks[i]
        head = _header(title, cur.section) if opts.header else ""
        reach = opts.overlap
        while reach > 0:
            a = max(prev.char_from, cur.char_from - reach)
            space = text.find(" ", a, cur.char_from)
            a = space + 1 if space != -1 else cur.char_from
            a, _ = _trim(text, a, cur.char_to)
            content = text[a : cur.char_to]
            tokens = count_tokens(head + content) if count_tokens is not None else None
            if tokens is None or window is None or tokens <= window or a >= cur.char_from:
                break
            reach //= 2
        if reach <= 0 or a >= cur.char_from:
            continue
        result.chunks[i] = replace(
            cur, char_from=a, content=content, text=head + content, tokens=tokens,
            page_from=cur.page_from if a >= prev.char_to else prev.page_to,
        )  # fmt: skip


# A definition is kept whole up to twice the prose target: a function cut in two is
# harder to read than a long paragraph. The encoder window still bounds every chunk.
CODE_TARGET_FACTOR = 2
CODE_SMALL = 160  # characters: a piece this small is packed with its neighbour
_IDENT_PART = re.compile(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|\d+")
_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def identifier_parts(text: str) -> str:
    """The words inside identifiers (`handleAuthCallback` -> "handle auth callback",
    `parse_http_url` -> "parse http url"), so full-text search finds a symbol by its parts."""
    out: list[str] = []
    for m in _IDENT.finditer(text):
        word = m.group(0)
        parts = [p for piece in word.split("_") for p in _IDENT_PART.findall(piece)]
        if len(parts) > 1:
            out.extend(p.lower() for p in parts)
    return " ".join(out)


class _Lines:
    def __init__(self, text: str) -> None:
        self.starts = [0] + [m.end() for m in re.finditer("\n", text)]

    def line_of(self, offset: int) -> int:
        """1-based line of a character offset."""
        return bisect.bisect_right(self.starts, offset)

    def cuts(self, a: int, b: int) -> list[int]:
        lo, hi = bisect.bisect_right(self.starts, a), bisect.bisect_left(self.starts, b)
        return self.starts[lo:hi]


def chunk_code(
    ex: Extracted,
    opts: ChunkOptions = DEFAULT_OPTIONS,
    count_tokens: TokenCounter | None = None,
    window: int | None = None,
) -> Chunked:
    """Chunks along the code's definitions: each function, method or small class whole
    (small neighbours packed together), a large class as its header and its members, a
    long function cut at line ends; the code between definitions (imports, module-level
    statements) packed by lines. Each chunk names its symbol(s) and its line range."""
    text, result, lines = ex.text, Chunked(), _Lines(ex.text)
    target = opts.target * CODE_TARGET_FACTOR
    symbols = sorted(ex.symbols or [], key=lambda s: (s.at, -s.end))

    def kids_of(a: int, b: int, depth: int) -> list[Symbol]:
        return [s for s in symbols if s.depth == depth and a <= s.at and s.end <= b]

    def by_lines(a: int, b: int) -> list[tuple[int, int]]:
        """[a, b) cut at line starts into pieces of at most the target (a longer line
        is cut at spaces, as prose is)."""
        segs, start, last = [], a, None
        for cut in [*lines.cuts(a, b), b]:
            if cut - start > target and last is not None and last > start:
                segs.append((start, last))
                start = last
            last = cut
        segs.append((start, b))
        return _bounded(text, [(x, y) for x, y in segs if y > x], target)

    pieces: list[tuple[int, int, str | None]] = []
    BARRIER = (-1, -1, None)

    def cover(a: int, b: int, depth: int, owner: str | None) -> None:
        pos = a
        for k in kids_of(a, b, depth):
            if k.at < pos:
                continue
            pieces.extend((x, y, owner) for x, y in by_lines(pos, k.at))
            if kids_of(k.at, k.end, depth + 1):  # a class: its header, then each member
                pieces.append(BARRIER)  # members pack among themselves, not with outsiders
                cover(k.at, k.end, depth + 1, k.name)
                pieces.append(BARRIER)
            else:
                pieces.extend((x, y, k.name) for x, y in by_lines(k.at, k.end))
            pos = k.end
        pieces.extend((x, y, owner) for x, y in by_lines(pos, b))

    cover(0, len(text), 0, None)
    pieces = [
        (x, y, n) if a >= 0 else BARRIER
        for a, b, n in pieces for x, y in [_trim(text, a, b) if a >= 0 else (0, 1)] if y > x
    ]  # fmt: skip

    def emit(a: int, b: int, names: list[str], symbol: str | None) -> None:
        content = text[a:b]
        section = ", ".join(dict.fromkeys(names))
        head = _header(ex.title, section) if opts.header else ""
        tokens = None
        if count_tokens is not None:
            tokens = count_tokens(head + content)
            if window is not None and tokens > window and b - a > 1:
                mid = (a + b) // 2
                cuts = lines.cuts(a + 1, b) or [_split_middle(text, a, b)]
                cut = min(cuts, key=lambda c: abs(c - mid))
                if a < cut < b:
                    result.split_for_window += 1
                    for x, y in (_trim(text, a, cut), _trim(text, cut, b)):
                        if y > x:
                            emit(x, y, names, symbol)
                    return
            result.total_tokens += min(tokens, window or tokens)
        lf, lt = lines.line_of(a), lines.line_of(b - 1)
        result.chunks.append(Chunk(
            len(result.chunks), section, a, b, content, head + content, None, None, tokens,
            f"line={lf},{lt}", symbol, lf, lt,
        ))  # fmt: skip

    def flush(run: list[tuple[int, int, str | None]]) -> None:
        named = [(y - x, n) for x, y, n in run if n]
        main = max(named, key=lambda t: t[0])[1] if named else None  # the chunk's main one
        emit(run[0][0], run[-1][1], [n for _, n in named], main)

    # Two substantial definitions never share a chunk; small pieces (a class header, a
    # one-line method, imports) join their neighbour while the chunk stays in the target.
    run: list[tuple[int, int, str | None]] = []
    for piece in pieces:
        if piece is BARRIER or piece == BARRIER:
            if run:
                flush(run)
            run = []
            continue
        if run:
            size, add = run[-1][1] - run[0][0], piece[1] - piece[0]
            if piece[1] - run[0][0] > target or (size >= CODE_SMALL and add >= CODE_SMALL):
                flush(run)
                run = []
        run.append(piece)
    if run:
        flush(run)
    return result
