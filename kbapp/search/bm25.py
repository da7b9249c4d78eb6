"""BM25 over the SQLite FTS5 table (FTS5's bm25() uses k1=1.2, b=0.75).

User text never reaches FTS5 syntax: the query is reduced to word tokens, each quoted, so
`"`, `*`, NEAR, AND and SQL quotes are plain words, never an FTS syntax error.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ..store.chunks import Chunks

from ..fold import fold, pieces, words
from ..store.schema import FTS_TOKENIZER as TOKENIZER  # noqa: F401 - where BM25 is defined

MAX_TERMS = 64
# Terms that score ~0 under BM25 anyway; leaving them out keeps long posting lists unread.
STOPWORDS = frozenset(
    [
        "a",
        "an",
        "and",
        "are",
        "as",
        "at",
        "be",
        "but",
        "by",
        "for",
        "from",
        "has",
        "have",
        "he",
        "her",
        "his",
        "i",
        "if",
        "in",
        "into",
        "is",
        "it",
        "its",
        "me",
        "my",
        "of",
        "on",
        "or",
        "our",
        "she",
        "so",
        "that",
        "the",
        "their",
        "them",
        "then",
        "there",
        "these",
        "they",
        "this",
        "to",
        "was",
        "we",
        "were",
        "what",
        "when",
        "where",
        "which",
        "who",
        "whom",
        "why",
        "will",
        "with",
        "you",
        "your",
        "do",
        "does",
        "did",
        "how",
    ]
)


def tokens(text: str) -> list[str]:
    return words(text)


# A word whose parts are joined by punctuation inside it: "3.9", "read.table", "COVID-19",
# "2018-12-01", "e-mail". The index splits it into its parts; the query also asks for the
# parts side by side (an FTS5 phrase): the writer meant one thing, not any "3" and any "9".
# The parts stay terms of their own, so "email" text still meets "e-mail" half-way.
# Measured (docs/EVALUATION.md): python-whatsnew MRR 0.742 -> 0.784, RR +11/-2 (p = 0.02);
# phrases alone +7/-2; squad-public and debian-manuals unchanged.
_COMPOUND = re.compile(r"[^\W_]+(?:[.\-/:][^\W_]+)+")


def terms(query: str) -> list[str]:
    """The query's terms in order: words, and each compound's parts then its phrase."""
    folded = fold(query)
    out: list[str] = []
    pos = 0
    for m in _COMPOUND.finditer(folded):
        parts = tokens(m.group())
        out += tokens(folded[pos : m.start()]) + parts
        if not all(t in STOPWORDS for t in parts):
            out.append(" ".join(parts))
        pos = m.end()
    return out + tokens(folded[pos:])


def match_expression(query: str, phrase: bool = False) -> str | None:
    """An FTS5 MATCH expression: a phrase for symbols, an OR of terms for prose."""
    toks = tokens(query)
    if not toks:
        return None
    if phrase:
        return '"' + " ".join(toks[:MAX_TERMS]) + '"'
    seen: list[str] = []
    for t in terms(query):
        if t not in seen:
            seen.append(t)
    content = [t for t in seen if t not in STOPWORDS] or seen
    return " OR ".join(f'"{t}"' for t in content[:MAX_TERMS])


def search(chunks: Chunks, query: str, limit: int, phrase: bool = False) -> list[tuple[int, float]]:
    """(chunk id, BM25 score; higher is better), best first."""
    expr = match_expression(query, phrase)
    if expr is None:
        return []
    return chunks.fts(expr, limit)


def covers(content: str, query: str) -> bool:
    """Every content word of a query of two or more of them stands in the passage (a word
    may carry an ending: "bulb" covers "bulbs"). An exact keyword hit is evidence in itself:
    such a passage is never labelled a weak match, whatever its dense similarity."""
    words = {t for t in tokens(query) if t not in STOPWORDS}
    if len(words) < 2:
        return False
    have = tokens(content)
    return all(any(h.startswith(w) for h in have) for w in words)


def covered(
    query: str, contents: Sequence[str], found: Sequence[bool],
    similarities: Sequence[float | None], weak: float | None,
) -> list[bool]:  # fmt: skip
    """The gate's keyword evidence per candidate: found by BM25 and covering the query. Only
    computed where it can matter, below the weak threshold (or without a similarity)."""
    return [
        hit and (sim is None or weak is None or sim < weak) and covers(text, query)
        for text, hit, sim in zip(contents, found, similarities, strict=True)
    ]


# Passages counted per word when weighing how rare it is: beyond this a word is common, and
# the count stays cheap at any library size.
DF_CAP = 2000


def _held(chunks: Chunks, word: str) -> int:
    """Passages holding the word; a word of letters and digits the text writes apart
    ("covid19" for "COVID-19", "fy2018" for "FY 2018") counts as held where all its pieces
    are, by its rarest piece."""
    n = chunks.passages_with(word, DF_CAP)
    parts = pieces(word)
    if n or len(parts) < 2:
        return n
    return min(chunks.passages_with(p, DF_CAP) for p in parts)


def unknown_words(chunks: Chunks, query: str, size: int) -> tuple[float, list[str]]:
    """The question's content words that stand in no passage of the library, and their
    share of the question weighted by rarity (idf: log(1 + passages / (holding + 0.5)),
    holding counted up to DF_CAP): "In the Rankine cycle, what does water turn into?" asked
    of a library that never says "Rankine" is 0.5 unknown; a question in the library's own
    words is 0. The gate reads it as evidence that the question is about something else."""
    words = list(dict.fromkeys(t for t in tokens(query) if t not in STOPWORDS))
    if not words or size <= 0:
        return 0.0, []
    held = {w: _held(chunks, w) for w in words}
    weight = {w: math.log(1 + size / (n + 0.5)) for w, n in held.items()}
    unknown = [w for w in words if held[w] == 0]
    total = sum(weight.values())
    return (sum(weight[w] for w in unknown) / total if total else 0.0), unknown
