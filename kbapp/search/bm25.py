"""BM25 over the SQLite FTS5 table (FTS5's bm25() uses k1=1.2, b=0.75).

User text never reaches FTS5 syntax: the query is reduced to word tokens, each quoted, so
`"`, `*`, NEAR, AND and SQL quotes are plain words, never an FTS syntax error.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ..config import Scope
    from ..store.chunks import Chunks

from ..store.schema import FTS_TOKENIZER as TOKENIZER  # noqa: F401 - where BM25 is defined
from ..words import STOPWORDS, fold, pieces, words

MAX_TERMS = 64


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


def search(
    chunks: Chunks, query: str, limit: int, phrase: bool = False, scope: Scope | None = None
) -> list[tuple[int, float]]:
    """(chunk id, BM25 score; higher is better), best first; within the scope if given."""
    expr = match_expression(query, phrase)
    if expr is None:
        return []
    return chunks.fts(expr, limit, scope)


# Passages counted per word when weighing how rare it is: beyond this a word is common, and
# the count stays cheap at any library size.
DF_CAP = 2000


def held(chunks: Chunks, word: str) -> int:
    """Passages holding the word; a word of letters and digits the text writes apart
    ("covid19" for "COVID-19", "fy2018" for "FY 2018") counts as held where all its pieces
    are, by its rarest piece."""
    n = chunks.passages_with(word, DF_CAP)
    parts = pieces(word)
    if n or len(parts) < 2:
        return n
    return min(chunks.passages_with(p, DF_CAP) for p in parts)
