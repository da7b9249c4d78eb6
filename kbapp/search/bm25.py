"""BM25 over the SQLite FTS5 table (FTS5's bm25() uses k1=1.2, b=0.75).

User text never reaches FTS5 syntax: the query is reduced to word tokens, each quoted, so
`"`, `*`, NEAR, AND and SQL quotes are plain words, never an FTS syntax error.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ..config import Scope
    from ..store.chunks import Chunks

from ..store.schema import FTS_TOKENIZER as TOKENIZER  # noqa: F401 - where BM25 is defined
from ..words import STOPWORDS, pieces, terms, tokens

MAX_TERMS = 64


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
