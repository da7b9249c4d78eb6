"""Sentences: where one ends (abbreviations, list items, CJK marks), the pieces of a
paragraph, and the sentences of a passage that are embedded on their own."""

from __future__ import annotations

import re

from .base import Chunk, thin

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


def sentence_texts(chunk: Chunk) -> list[str]:
    """What the encoder reads for each sentence of a passage of two or more sentences: the
    passage's header, then the sentence. Search scores a passage by its closest sentence as
    well as by itself (search/engine.py), so an answer that is one sentence of a passage
    about other things is not averaged away. A list or table inside a sentence stays in it,
    and a piece of fewer than MIN_WORDS words ("See Fig. 3.") is not read on its own; []
    for a passage of one sentence. A passage read in another form than it prints (a PDF
    table's rows with their headers: Chunk.body) is split as read, each paragraph (a row)
    a piece of its own."""
    said = chunk.said
    header = chunk.text[: len(chunk.text) - len(said)] if chunk.text.endswith(said) else ""
    paragraphs = [(0, len(said))]
    if chunk.body is not None:
        cuts = [0, *(m.end() for m in _PARAGRAPH_BREAK.finditer(said)), len(said)]
        paragraphs = list(zip(cuts, cuts[1:], strict=False))
    found = [said[a:b].strip() for pa, pb in paragraphs
             for a, b in sentence_spans(said, pa, pb, lines=False)]  # fmt: skip
    found = [s for s in found if not thin(s)]
    return [header + s for s in found] if len(found) > 1 else []


_PARAGRAPH_BREAK = re.compile(r"\n[ \t]*\n\s*")


def bounded(text: str, spans: list[tuple[int, int]], target: int) -> list[tuple[int, int]]:
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


def split_middle(text: str, a: int, b: int) -> int:
    """Where to cut [a, b) in two: the paragraph or sentence boundary, else the space,
    nearest the middle (a table's rows are paragraphs without a full stop)."""
    mid = (a + b) // 2
    cuts = [s for s, _ in sentence_spans(text, a, b)[1:]]
    cuts += [a + m.end() for m in _PARAGRAPH_BREAK.finditer(text[a:b]) if a < a + m.end() < b]
    if not cuts:
        cuts = [m.end() for m in re.finditer(r"\s+", text[a:b])]
        cuts = [a + c for c in cuts if a < a + c < b]
    if not cuts:
        return mid
    return min(cuts, key=lambda c: abs(c - mid))
